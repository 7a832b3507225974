import type { ReviewThread } from '../../core/approvals/approvals.schema.js';
import type { Content } from '../../core/contents/contents.schema.js';
import { ServiceError } from '../../core/errors.js';
import { allows } from '../../core/permissions/authorize.js';
import { html, type SafeHtml } from '../../web/html.js';
import { explainServiceError, platformName } from '../explain.js';
import { optional } from '../forms.js';
import { actionButton, badge, csrfField, isoDate, table } from '../layout.js';
import { brandName, contentTitle, loadNames } from '../names.js';
import type { PageContext, PageRouter } from '../page-router.js';

const APPROVALS = '/dashboard/approvals';

/** Where an approval action returns: the approvals list or the content's page (a path of ours only). */
function nextOf(ctx: PageContext, contentId: string): string {
  const next = ctx.form.get('next');
  return next === APPROVALS ? APPROVALS : `/dashboard/contents/${contentId}`;
}

/** The three ways to approve and the request for changes, for one pending content. */
function approvalForms(ctx: PageContext, c: Content, next: string): SafeHtml {
  const label = contentTitle(c);
  const id = c.content_id;
  const keep = c.publish_at !== null && !c.approval_overdue;
  return html`<div class="actions">
  ${keep ? actionButton({ action: `/dashboard/contents/${id}/approve`, csrf: ctx.csrf, label: 'Approve', describe: `Approve at its time: ${label}`, fields: { next } }) : ''}
  ${actionButton({ action: `/dashboard/contents/${id}/approve`, csrf: ctx.csrf, label: 'Approve and publish now', describe: `Approve and publish now: ${label}`, fields: { next, publish_now: 'true' }, confirm: 'Publish this post now? It counts on your plan now.' })}
</div>
<form method="post" action="/dashboard/contents/${id}/approve" class="stack">
  ${csrfField(ctx.csrf)}<input type="hidden" name="next" value="${next}">
  <label for="at-${id}">Approve for another time (the brand's time zone)</label>
  <input id="at-${id}" name="publish_at" type="datetime-local" required>
  <button type="submit">Approve for this time</button>
</form>
<form method="post" action="/dashboard/contents/${id}/request-changes" class="stack">
  ${csrfField(ctx.csrf)}<input type="hidden" name="next" value="${next}">
  <label for="changes-${id}">What should change?</label>
  <textarea id="changes-${id}" name="comment" rows="2" required maxlength="5000"></textarea>
  <button type="submit">Request changes</button>
</form>`;
}

/**
 * The review part of a content's page: who submitted, approved or sent it back, the comments, a comment form,
 * and, while it is pending, the approval forms. Shown to whoever may read the content.
 */
export async function reviewSection(ctx: PageContext, content: Content): Promise<SafeHtml> {
  const thread: ReviewThread = await ctx.deps.services.contents.comments(ctx.principal, ctx.workspaceId, content.content_id);
  const mayApprove = content.status === 'pending_approval' && allows(ctx.principal, 'contents.approve', content.brand_id);
  const mayComment = allows(ctx.principal, 'contents.comment', content.brand_id);
  const mayResubmit = content.status === 'changes_requested' && allows(ctx.principal, 'contents.draft', content.brand_id);
  const STEP: Record<string, string> = { submitted: 'submitted it for approval', approved: 'approved it', changes_requested: 'requested changes', comment: 'commented' };
  return html`<section class="card" aria-labelledby="review-h">
  <h2 id="review-h">Approval and comments</h2>
  ${content.approval_overdue ? html`<p><strong>Overdue:</strong> its time passed while it waited; it did not publish. Approve it now or for a new time.</p>` : ''}
  ${
    thread.data.length === 0
      ? html`<p class="muted">No comments or approval steps yet.</p>`
      : html`<ol class="review-thread">${thread.data.map(
          (e) => html`<li><p><strong>${e.author.label ?? e.author.id ?? e.author.type}</strong>${e.role ? html` (${e.role})` : ''} ${STEP[e.kind] ?? e.kind} · ${isoDate(e.created_at)}</p>${e.body ? html`<p>${e.body}</p>` : ''}</li>`,
        )}</ol>`
  }
  ${mayApprove ? approvalForms(ctx, content, `/dashboard/contents/${content.content_id}`) : ''}
  ${mayResubmit ? actionButton({ action: `/dashboard/contents/${content.content_id}/submit`, csrf: ctx.csrf, label: 'Submit again for approval' }) : ''}
  ${
    mayComment
      ? html`<form method="post" action="/dashboard/contents/${content.content_id}/comments" class="stack">
  ${csrfField(ctx.csrf)}
  <label for="comment-body">Add a comment (internal, never published)</label>
  <textarea id="comment-body" name="body" rows="3" required maxlength="5000"></textarea>
  <button type="submit">Comment</button>
</form>`
      : ''
  }
</section>`;
}

/** The Approvals page (contents waiting for a person, overdue ones marked) and the review actions. */
export function approvalPages(pages: PageRouter): void {
  pages.page(APPROVALS, async (ctx) => {
    const { data } = await ctx.deps.services.contents.pending(ctx.principal, ctx.workspaceId, { limit: 100 });
    const names = data.length > 0 ? await loadNames(ctx) : null;
    const rows = data.map(
      (c) => html`<tr>
  <th scope="row"><a href="/dashboard/contents/${c.content_id}">${contentTitle(c)}</a>${names ? html`<span class="row-meta">${brandName(names, c.brand_id)}</span>` : ''}</th>
  <td>${c.publish_at === null ? 'As soon as approved' : isoDate(c.publish_at)}${c.approval_overdue ? html` ${badge('overdue')}` : ''}</td>
  <td>${c.target_platforms.map(platformName).join(', ')}</td>
  <td>${allows(ctx.principal, 'contents.approve', c.brand_id) ? approvalForms(ctx, c, APPROVALS) : html`<span class="muted">Waiting for an approver</span>`}</td>
</tr>`,
    );
    return {
      title: 'Approvals',
      active: 'approvals',
      body: html`<h1>Approvals</h1>
<section class="card" aria-labelledby="approvals-h">
  <h2 id="approvals-h">Waiting for approval</h2>
  <p class="muted">Posts by contributors and assistants (and by roles your brands hold for approval) wait here: nothing publishes or counts until someone approves. An overdue post's time passed while it waited; it publishes only when you approve it now or for a new time.</p>
  ${table({ id: 'approvals', caption: 'Posts waiting for approval, earliest time first', head: ['Post', 'Time', 'Networks', 'Decision'], rows, empty: 'Nothing is waiting for approval.' })}
</section>`,
    };
  });

  /** Runs one review step; a refusal comes back as a message on the page the form was on. */
  const step = (run: (ctx: PageContext, contentId: string) => Promise<string>) => async (ctx: PageContext) => {
    const contentId = ctx.params.contentId ?? '';
    try {
      return { redirect: nextOf(ctx, contentId), flash: await run(ctx, contentId) };
    } catch (err) {
      if (err instanceof ServiceError && err.code !== 'not_found') return { redirect: nextOf(ctx, contentId), flash: explainServiceError(err) };
      throw err;
    }
  };

  pages.action(
    '/dashboard/contents/:contentId/approve',
    step(async (ctx, id) => {
      const at = optional(ctx.form.get('publish_at'));
      const c = await ctx.deps.services.contents.approve(ctx.principal, ctx.workspaceId, id, ctx.form.get('publish_now') === 'true' ? { publish_now: true } : at ? { publish_at: at } : {});
      return c.status === 'scheduled' ? `Approved: it publishes at ${isoDate(c.publish_at ?? '')}.` : 'Approved: publishing now.';
    }),
  );
  pages.action(
    '/dashboard/contents/:contentId/request-changes',
    step(async (ctx, id) => {
      await ctx.deps.services.contents.requestChanges(ctx.principal, ctx.workspaceId, id, { comment: ctx.form.get('comment').trim() });
      return 'Sent back to its author with your comment.';
    }),
  );
  pages.action(
    '/dashboard/contents/:contentId/submit',
    step(async (ctx, id) => {
      await ctx.deps.services.contents.submit(ctx.principal, ctx.workspaceId, id);
      return 'Submitted for approval.';
    }),
  );
  pages.action(
    '/dashboard/contents/:contentId/comments',
    step(async (ctx, id) => {
      await ctx.deps.services.contents.comment(ctx.principal, ctx.workspaceId, id, { body: ctx.form.get('body').trim() });
      return 'Comment added.';
    }),
  );
}
