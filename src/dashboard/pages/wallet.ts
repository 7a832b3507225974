import { html } from '../html.js';
import type { PageRouter } from '../page-router.js';

export function walletPages(pages: PageRouter): void {
  pages.page('/dashboard/wallet', async () => ({ title: 'Wallet', active: 'wallet', body: html`<h1>Wallet</h1><p>Coming soon.</p>` }));
}
