import { html } from '../html.js';
import type { PageRouter } from '../page-router.js';

export function contentPages(pages: PageRouter): void {
  pages.page('/dashboard/contents', async () => ({ title: 'Contents', active: 'contents', body: html`<h1>Contents</h1><p>Coming soon.</p>` }));
}
