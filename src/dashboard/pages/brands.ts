import { html } from '../html.js';
import type { PageRouter } from '../page-router.js';

export function brandPages(pages: PageRouter): void {
  pages.page('/dashboard/brands', async () => ({ title: 'Brands & connections', active: 'brands', body: html`<h1>Brands & connections</h1><p>Coming soon.</p>` }));
}
