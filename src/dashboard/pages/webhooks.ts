import { html } from '../html.js';
import type { PageRouter } from '../page-router.js';

export function webhookPages(pages: PageRouter): void {
  pages.page('/dashboard/webhooks', async () => ({ title: 'Webhooks', active: 'webhooks', body: html`<h1>Webhooks</h1><p>Coming soon.</p>` }));
}
