import { randomUUID } from 'node:crypto';
import { allows } from '../../core/permissions/authorize.js';
import { html } from '../../web/html.js';
import { platformName } from '../explain.js';
import { fieldErrorsOf, optional } from '../forms.js';
import { brandName, contentTitle, loadNames } from '../names.js';
import { actionButton, errorBanner, isoDate, table } from '../layout.js';
import type { PageRouter } from '../page-router.js';

const DRAFTS = '/dashboard/drafts';
const PAGE_SIZE = 50;

/** Drafts: saved contents with no time, newest first, to open, publish now or cancel. */
export function draftPages(pages: PageRouter): void {
  pages.page(DRAFTS, async (ctx) => {
    const cursor = optional(ctx.query.cursor ?? '');
    let found: Awaited<ReturnType<typeof ctx.deps.services.contents.list>> | null = null;
    let damaged = false;
    try {
      found = await ctx.deps.services.contents.list(ctx.principal, ctx.workspaceId, { status: 'draft', limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) });
    } catch (err) {
      // A damaged cursor is the visitor's link, refused by the core; anything else is ours.
      if (!fieldErrorsOf(err)) throw err;
      damaged = true;
    }
    const names = found && found.data.length > 0 ? await loadNames(ctx) : null;
    const rows = (found?.data ?? []).map((c) => {
      const label = contentTitle(c);
      return html`<tr>
  <th scope="row"><a href="/dashboard/contents/${c.content_id}">${label}</a>${names ? html`<span class="row-meta">${brandName(names, c.brand_id)}</span>` : ''}</th>
  <td>${isoDate(c.created_at)}</td>
  <td>${c.target_platforms.map(platformName).join(', ')}</td>
  <td><div class="actions">${!allows(ctx.principal, 'contents.publish') ? '' : actionButton({
    action: `/dashboard/contents/${c.content_id}/publish`,
    csrf: ctx.csrf,
    label: 'Publish now',
    describe: `Publish now: ${label}`,
    fields: { idempotency_key: randomUUID() },
    confirm: 'Publish this draft now? It counts on your plan now.',
  })}${!allows(ctx.principal, 'contents.publish') ? '' : actionButton({
    action: `/dashboard/contents/${c.content_id}/cancel`,
    csrf: ctx.csrf,
    label: 'Cancel',
    danger: true,
    describe: `Cancel draft: ${label}`,
    fields: { idempotency_key: randomUUID(), next: DRAFTS },
    confirm: 'Cancel this draft? It will never publish.',
  })}</div></td>
</tr>`;
    });
    return {
      title: 'Drafts',
      active: 'drafts',
      status: damaged ? 400 : 200,
      body: html`<h1>Drafts</h1>
<p><a class="button primary" href="/dashboard/compose">Compose a post</a> <a class="button" href="/dashboard/calendar">Calendar</a></p>
${errorBanner(damaged ? 'The link to older drafts is damaged or out of date.' : null, html`<p><a href="${DRAFTS}">Show the newest drafts</a></p>`)}
<section class="card" aria-labelledby="drafts-h">
  <h2 id="drafts-h">Saved drafts${cursor ? ' (older)' : ''}</h2>
  <p class="muted">A draft publishes nothing and counts nothing until you schedule or publish it. Open one to edit its text or give it a time.</p>
  ${table({ id: 'drafts', caption: 'Drafts, newest first', head: ['Draft', 'Created', 'Networks', 'Actions'], rows, empty: 'No drafts. Choose “Save draft” when composing to keep a post for later.' })}
  ${found?.next_cursor ? html`<p><a href="${DRAFTS}?${new URLSearchParams({ cursor: found.next_cursor }).toString()}">Older drafts</a></p>` : ''}
</section>`,
    };
  });
}
