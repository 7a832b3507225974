import { html } from '../html.js';
import type { PageRouter } from '../page-router.js';

export function oauthClientPages(pages: PageRouter): void {
  pages.page('/dashboard/oauth-clients', async () => ({ title: 'OAuth clients', active: 'oauth-clients', body: html`<h1>OAuth clients</h1><p>Coming soon.</p>` }));
}
