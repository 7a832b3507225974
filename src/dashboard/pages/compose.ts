import { html } from '../html.js';
import type { PageRouter } from '../page-router.js';

export function composePages(pages: PageRouter): void {
  pages.page('/dashboard/compose', async () => ({ title: 'Compose', active: 'compose', body: html`<h1>Compose</h1><p>Coming soon.</p>` }));
}
