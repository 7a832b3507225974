import { CONTENT_STATUSES, type Content, contentListQuerySchema, type Job, retryInputSchema } from '../../core/contents/contents.schema.js';
import { allows } from '../../core/permissions/authorize.js';
import { CONFIRMATION_ERROR_CODES, type JobErrorCode } from '../../vocabulary/job-errors.js';
import { ServiceError } from '../../core/errors.js';
import { explainJobError, explainServiceError, platformName } from '../explain.js';
import { check, errorAt, type FieldErrors, fieldErrorsOf, optional } from '../forms.js';
import { html, list, type SafeHtml } from '../../web/html.js';
import { badge, csrfField, describedBy, errorBanner, field, isoDate, table } from '../layout.js';
import type { PageContext, PageRouter } from '../page-router.js';
import { localInWords } from '../when-field.js';
import { brandName, contentTitle, handleOf, loadNames, type Names } from '../names.js';
import { connectionHref } from './brands.js';
import { brandZones } from '../brand-zones.js';
import { timeIn } from '../zone-field.js';
import type { Connection } from '../../core/connections/connections.schema.js';
import { mediaThumbnail } from './media.js';
import { reviewSection } from './approvals.js';
import { type ContentFailure, contentScheduleActions, scheduleSection, WAITING_STATUSES } from './content-schedule.js';
import { editChoices } from './content-edit.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Jobs at work: a scheduled job waits for its time, a final one is done; neither makes a page refresh. */
const WORKING_JOB_STATUSES: readonly Job['status'][] = ['queued', 'publishing', 'confirming'];

/** What each list filter means when it is wrong, in words rather than the validator's. */
const QUERY_MESSAGES: Record<string, string> = {
  status: `Choose one of the listed statuses: all, ${CONTENT_STATUSES.join(', ')}.`,
  cursor: 'The link to older contents is damaged or out of date. Start again from the newest contents.',
  limit: 'The number of contents per page must be a whole number from 1 to 100.',
};

/** A content id that cannot exist is "not found" at once, so odd ids never reach the database. */
function contentIdOf(ctx: PageContext): string {
  const id = ctx.params.contentId ?? '';
  if (!UUID.test(id)) throw new ServiceError('not_found', 'There is no content at this address in this workspace.');
  return id;
}

function isRunning(content: Content): boolean {
  return content.status === 'publishing' || content.jobs.some((j) => WORKING_JOB_STATUSES.includes(j.status));
}

function isConfirmationFailure(job: Job): boolean {
  return job.status === 'failed' && CONFIRMATION_ERROR_CODES.includes(job.error_code as JobErrorCode);
}

/** Contents (spec 2.6, 2.7): the list with a status filter, and one content with its jobs and a retry. */
export function contentPages(pages: PageRouter): void {
  pages.page('/dashboard/contents', async (ctx) => {
    const raw = { status: optional(ctx.query.status ?? ''), cursor: optional(ctx.query.cursor ?? ''), limit: optional(ctx.query.limit ?? '') };
    const query = check(contentListQuerySchema, raw);
    let errors: FieldErrors | null = query.ok ? null : query.errors;
    let found: Awaited<ReturnType<typeof ctx.deps.services.contents.list>> | null = null;
    if (query.ok) {
      try {
        found = await ctx.deps.services.contents.list(ctx.principal, ctx.workspaceId, query.data);
      } catch (err) {
        // A damaged cursor is refused by the core; it is the visitor's link, not a failure of ours.
        errors = fieldErrorsOf(err);
        if (!errors) throw err;
      }
    }
    const messages = errors ? Object.keys(errors).map((path) => QUERY_MESSAGES[path.split(/[.[]/)[0]!] ?? errors![path]!) : [];
    const status = query.ok ? query.data.status : undefined;
    const statusError = errorAt(errors, 'status') === undefined ? undefined : QUERY_MESSAGES.status;
    const keep = (extra: Record<string, string>) => {
      const params = new URLSearchParams();
      if (status) params.set('status', status);
      if (raw.limit !== undefined && !errorAt(errors, 'limit')) params.set('limit', raw.limit);
      for (const [k, v] of Object.entries(extra)) params.set(k, v);
      const text = params.toString();
      return `/dashboard/contents${text ? `?${text}` : ''}`;
    };

    const names = found ? await loadNames(ctx) : null;
    const zones = names ? await brandZones(ctx, [...names.brands.values()]) : {};
    const rows = (found?.data ?? []).map(
      (c) => html`<tr>
  <th scope="row"><a href="/dashboard/contents/${c.content_id}">${contentTitle(c)}</a><span class="row-meta">${names ? brandName(names, c.brand_id) : ''} · ${c.content_type}</span></th>
  <td>${badge(c.status)}</td>
  <td>${c.jobs.map((j, i) => html`${i > 0 ? html`<br>` : ''}${networkOf(j, names)}: ${badge(j.status)} ${jobSummary(j, names)}`)}</td>
  <td>${timeIn(c.created_at, zones[c.brand_id] ?? 'UTC')}</td>
</tr>`,
    );
    const running = (found?.data ?? []).some(isRunning);
    return {
      title: 'Contents',
      active: 'contents',
      status: errors ? 400 : 200,
      body: html`<h1>Contents</h1>
<p><a class="button primary" href="/dashboard/compose">Compose a post</a></p>
${errorBanner(messages.length > 0 ? 'These contents could not be listed.' : null, html`<ul>${messages.map((m) => html`<li>${m}</li>`)}</ul><p><a href="/dashboard/contents">Show the newest contents</a></p>`)}
<section class="card" aria-labelledby="filter-h">
  <h2 id="filter-h">Filter</h2>
  <form method="get" action="/dashboard/contents">
    ${field({
      id: 'filter-status',
      label: 'Status',
      error: statusError,
      control: html`<select id="filter-status" name="status"${describedBy('filter-status', { error: statusError })}>
  <option value=""${status ? '' : html` selected`}>all</option>
  ${CONTENT_STATUSES.map((s) => html`<option value="${s}"${s === status ? html` selected` : ''}>${s}</option>`)}
</select>`,
    })}
    ${raw.limit !== undefined && !errorAt(errors, 'limit') ? html`<input type="hidden" name="limit" value="${raw.limit}">` : ''}
    <button type="submit">Filter</button>
  </form>
</section>
${
  found
    ? html`<section class="card" aria-labelledby="list-h">
  <h2 id="list-h">${status ? html`Contents with status ${status}` : 'All contents'}${raw.cursor ? ' (older)' : ''}</h2>
  ${table({
    id: 'contents',
    caption: 'Contents, newest first',
    head: ['Content', 'Status', 'Networks', 'Created'],
    rows,
    empty: status ? `No contents with status ${status}.` : 'Nothing published yet.',
    ...(running ? { attrs: html` data-refresh-while` } : {}),
  })}
  ${running ? html`<p class="muted">While contents are being published, this list updates every few seconds.</p>` : ''}
  ${
    found.next_cursor || raw.cursor
      ? html`<p>${found.next_cursor ? html`<a href="${keep({ cursor: found.next_cursor })}">Older contents</a>` : ''}${
          raw.cursor ? html`${found.next_cursor ? ' · ' : ''}<a href="${keep({})}">Newest contents</a>` : ''
        }</p>`
      : ''
  }
</section>`
    : ''
}`,
    };
  });

  async function renderContent(ctx: PageContext, contentId: string, failure?: ContentFailure) {
    const content = await ctx.deps.services.contents.get(ctx.principal, ctx.workspaceId, contentId);
    const waiting = WAITING_STATUSES.includes(content.status);
    // Waiting on its review: nothing was published, and the time shown is the one it asks for.
    const reviewing = content.status === 'pending_approval' || content.status === 'changes_requested';
    // A new local time is read in the content's zone, else the brand's (as the core reads it).
    const zone = waiting ? (content.time_zone ?? (await ctx.deps.services.queue.getQueue(ctx.principal, ctx.workspaceId, content.brand_id)).time_zone) : null;
    const running = isRunning(content);
    const names = await loadNames(ctx);
    // Times are read in the brand's zone, the one its posts are scheduled in, and the zone is named.
    const brandZone = (await brandZones(ctx, [{ id: content.brand_id }]))[content.brand_id] ?? 'UTC';
    const at = (iso: string | null) => timeIn(iso, brandZone);
    const failed = content.jobs.filter((j) => j.status === 'failed');
    // A retry leaves alone a job whose connection cannot publish: that one is reconnected first.
    const blocked = failed.filter((j) => blockingConnection(j, names) !== null);
    const retryable = failed.filter((j) => !blocked.includes(j));
    const mayBeLive = retryable.filter(isConfirmationFailure);
    // The jobs the last retry from this page put back in the queue: one that failed since then failed again.
    const retried = new Set((ctx.query.retried ?? '').split(',').filter((id) => id !== ''));
    const failedAgain = failed.filter((j) => retried.has(j.job_id));
    const media = (await ctx.deps.services.media.ofContents(ctx.principal, ctx.workspaceId, [content.content_id])).get(content.content_id) ?? [];
    // The edit form's choices read connections; a role that may not edit (a client) gets no form and needs none.
    const choices = waiting && allows(ctx.principal, 'contents.draft', content.brand_id) ? await editChoices(ctx, content) : null;

    const rows = content.jobs.map((j) => {
      const name = platformName(j.platform_slug);
      // The result comes right after the status, so on a phone the link to the post is on screen without scrolling.
      return html`<tr>
  <th scope="row">${name}<span class="row-meta">${accountOf(j, names)}</span></th>
  <td>${badge(j.status)}</td>
  <td>${retried.has(j.job_id) && j.status === 'failed' ? html`<p><strong>Failed again after the retry.</strong></p>` : ''}${jobResult(j, name, names)}</td>
  <td>${j.attempts}</td>
  <td>${at(j.updated_at)}</td>
</tr>`;
    });

    return {
      title: contentTitle(content),
      active: 'contents' as const,
      status: failure?.status ?? 200,
      body: html`<h1>${contentTitle(content)}</h1>
<p class="muted">${brandName(names, content.brand_id)} · ${content.content_type} · created ${at(content.created_at)}</p>
${errorBanner(failure?.message)}
<div id="content-live"${running ? html` data-refresh-while` : ''}>
${errorBanner(failedAgain.length > 0 ? `Failed again after the retry: ${failedAgain.map((j) => platformName(j.platform_slug)).join(', ')}. The reason is under Networks.` : null)}
<section class="card" aria-labelledby="content-h">
  <h2 id="content-h">${waiting || reviewing ? 'What will be published' : content.status === 'canceled' ? 'What was canceled' : 'What was published'}</h2>
  <dl>
    <dt>Brand</dt><dd><a href="/dashboard/brands#brand-${content.brand_id}">${brandName(names, content.brand_id)}</a></dd>
    <dt>Type</dt><dd>${content.content_type}</dd>
    <dt>Status</dt><dd>${badge(content.status)}</dd>
    ${whenRow(content, brandZone)}
    ${waiting || reviewing ? '' : html`<dt>${content.status === 'canceled' ? 'Canceled' : 'Completed'}</dt><dd>${content.completed_at ? at(content.completed_at) : 'not yet: some networks are still working'}</dd>`}
    ${content.title !== null ? html`<dt>Title</dt><dd>${content.title}</dd>` : ''}
    ${content.text !== null ? html`<dt>Text</dt><dd class="content-text">${multiline(content.text)}</dd>` : ''}
    ${media.length > 0 ? html`<dt>Media</dt><dd class="content-media">${media.map((m) => html`<a href="/dashboard/media#${m.id}">${mediaThumbnail(m)}</a>`)}</dd>` : ''}
  </dl>
  ${ownTexts(content)}
  ${
    content.thread
      ? html`<h3>Thread (${content.thread.length} posts)</h3>
  <ol>${list(content.thread, (post) => html`<li>${multiline(post)}</li>`)}</ol>`
      : ''
  }
</section>
${waiting && zone !== null && choices !== null ? scheduleSection(ctx, content, zone, choices, failure?.edit) : ''}
${await reviewSection(ctx, content)}
<section class="card" aria-labelledby="jobs-h">
  <h2 id="jobs-h">Networks</h2>
  ${table({
    id: 'jobs',
    caption: 'One publication per network',
    head: ['Network', 'Status', 'Result', 'Attempts', 'Updated'],
    rows,
    empty:
      content.status === 'draft'
        ? 'A draft has no publications yet: they are made when it is scheduled or published.'
        : content.status === 'canceled' && content.target_platforms.length > 0
          ? `Canceled before publishing: it was for ${content.target_platforms.map(platformName).join(', ')}. Nothing was published.`
          : 'No networks.',
  })}
  ${running ? html`<p class="muted">While networks are still publishing, this page updates every few seconds.</p>` : ''}
</section>
${
  failed.length > 0 && allows(ctx.principal, 'contents.publish')
    ? html`<section class="card" aria-labelledby="retry-h">
  <h2 id="retry-h">Retry</h2>
  ${blocked.length > 0 ? reconnectFirst(blocked, names) : ''}
  ${
    retryable.length > 0
      ? html`<p>${retryable.length} network(s) can be retried. Retrying sends them again; each one counts as a publication on your plan.</p>
  <form method="post" action="/dashboard/contents/${content.content_id}/retry">
    ${csrfField(ctx.csrf)}
    ${
      mayBeLive.length > 0
        ? html`<div class="field check">
      <input id="retry-force" name="force" type="checkbox" value="true" aria-describedby="retry-force-hint">
      <label for="retry-force">Also retry networks whose post may already be live (risk of a duplicate)</label>
      <p class="hint" id="retry-force-hint">${mayBeLive.map((j) => platformName(j.platform_slug)).join(', ')}: the network took the post but did not confirm it in time. Look at your account there first; without this box these are left alone.</p>
    </div>`
        : ''
    }
    <button type="submit" class="primary">Retry failed networks</button>
  </form>`
      : ''
  }
</section>`
    : ''
}
</div>
<p><a href="/dashboard/contents">All contents</a></p>`,
    };
  }

  pages.page('/dashboard/contents/:contentId', (ctx) => renderContent(ctx, contentIdOf(ctx)));
  contentScheduleActions(pages, renderContent, contentIdOf);

  pages.action('/dashboard/contents/:contentId/retry', async (ctx) => {
    const contentId = contentIdOf(ctx);
    const input = check(retryInputSchema, ctx.form.get('force') === 'true' ? { force: true } : {});
    if (!input.ok) return renderContent(ctx, contentId, { message: 'The retry request was not valid. Reload the page and try again.', status: 400 });
    try {
      const result = await ctx.deps.services.contents.retry(ctx.principal, ctx.workspaceId, contentId, input.data);
      const n = result.requeued.length;
      const waiting = result.skipped.filter((j) => j.reason === 'connection_not_active').map((j) => platformName(j.platform_slug));
      const notRetried = waiting.length > 0 ? `Not retried, nothing counted: ${waiting.join(', ')} (reconnect first).` : '';
      const flash = n > 0 ? `${n} network(s) queued again. ${notRetried}`.trim() : notRetried || 'Nothing to retry.';
      // The page names the requeued jobs, so it can say when one of them fails again.
      const query = n > 0 ? `?${new URLSearchParams({ retried: result.requeued.map((j) => j.job_id).join(',') })}` : '';
      return { redirect: `/dashboard/contents/${contentId}${query}`, flash };
    } catch (err) {
      // A plan limit is shown on the content itself, with what to do; an unknown content is the not-found page.
      if (err instanceof ServiceError && err.code !== 'not_found') return renderContent(ctx, contentId, { message: explainServiceError(err), status: err.status });
      throw err;
    }
  });
}

/** When the content publishes or published: its local time in its zone, and the instant. */
function whenRow(content: Content, brandZone: string): SafeHtml {
  if (content.status === 'draft') return html`<dt>When</dt><dd>Not scheduled (draft)</dd>`;
  if (content.publish_at === null) return html``;
  const label =
    content.status === 'scheduled'
      ? 'Publishes'
      : content.status === 'pending_approval' || content.status === 'changes_requested'
        ? content.approval_overdue
          ? 'Was meant for (overdue)'
          : 'Meant for, once approved'
        : content.status === 'canceled'
          ? 'Was due'
          : 'Started';
  // A scheduled time in the zone it was typed in; a publish-now one in the brand's zone; the instant in UTC beside.
  const local = content.local_publish_at ? localInWords(content.local_publish_at, content.time_zone) : timeIn(content.publish_at, brandZone);
  return html`<dt>${label}</dt><dd>${local}, ${isoDate(content.publish_at)}${content.queued ? ' · from the brand’s queue' : ''}</dd>`;
}

/** Each network's own text and title, where it has one: what that network publishes instead of the shared one. */
function ownTexts(content: Content): SafeHtml {
  const own = content.targets.filter((t) => t.own_text || t.own_title);
  if (own.length === 0) return html``;
  return html`<h3>Text per network</h3>
  <p class="muted">These networks publish their own text instead of the shared one; editing the shared text leaves them as they are.</p>
  <dl>${own.map(
    (t) => html`<dt>${platformName(t.platform_slug)}</dt><dd class="content-text">${t.own_title && t.title !== null ? html`<strong>${t.title}</strong><br>` : ''}${
      t.own_text && t.text !== null ? multiline(t.text) : html`<span class="muted">the shared text</span>`
    }</dd>`,
  )}</dl>`;
}

function multiline(text: string): SafeHtml {
  return html`${text.split('\n').map((line, i) => html`${i > 0 ? html`<br>` : ''}${line}`)}`;
}

/** The network of a job, with the account it goes out from. */
function networkOf(job: Job, names: Names | null): SafeHtml {
  const conn = names?.connections.get(job.connection_id);
  return html`${platformName(job.platform_slug)}${conn ? ` (${conn.name})` : ''}`;
}

/** The account a job publishes from: its name, its handle when the name is not one, and "sandbox". */
function accountOf(job: Job, names: Names): SafeHtml {
  const conn = names.connections.get(job.connection_id);
  if (!conn) return html`<code>${job.connection_id}</code>`;
  const handle = handleOf(conn);
  return html`${conn.name}${handle && handle !== conn.name ? html` <span class="muted">${handle}</span>` : ''}${conn.mode === 'sandbox' ? html` <span class="tag">sandbox</span>` : ''}`;
}

/** The connection a job publishes through when it cannot publish (expired or inactive), else null. */
export function blockingConnection(job: Pick<Job, 'connection_id'>, names: Names): Connection | null {
  const conn = names.connections.get(job.connection_id);
  return conn && conn.status !== 'active' ? conn : null;
}

/** Instead of Retry for the jobs whose connection cannot publish: where to reconnect it. */
function reconnectFirst(jobs: Job[], names: Names): SafeHtml {
  return html`<ul>${jobs.map((j) => {
    const conn = blockingConnection(j, names)!;
    const name = platformName(j.platform_slug);
    return html`<li><p>${name} (${conn.name}): ${
      conn.status === 'expired'
        ? 'its connection has expired, so a retry would fail at once. Reconnect it first, then retry.'
        : 'its connection was deactivated and can no longer publish. Connect the account again and publish a new post.'
    }</p><p><a class="button" href="${connectionHref(conn)}">${conn.status === 'expired' ? 'Reconnect first' : 'Brands & connections'}<span class="vh"> (${name}, ${conn.name})</span></a></p></li>`;
  })}</ul>`;
}

function isSandbox(job: Job, names: Names | null): boolean {
  return names?.connections.get(job.connection_id)?.mode === 'sandbox';
}

/** A job's outcome in one line for the list: the post's link, or the error code with its meaning. */
function jobSummary(job: Job, names: Names | null): SafeHtml {
  const url = job.external_post_url;
  if (job.status === 'published' && url && /^https?:\/\//i.test(url)) {
    // A sandbox address looks like the network's but leads nowhere there: say so before the click.
    return html`<a href="${url}" rel="noopener noreferrer">post<span class="vh"> on ${platformName(job.platform_slug)}</span>${isSandbox(job, names) ? ' (sandbox)' : ''}</a>`;
  }
  if (job.status === 'failed' && job.error_code) return html`<code>${job.error_code}</code> <span class="muted">${explainJobError(job.error_code)}</span>`;
  return html``;
}

/** Job codes whose meaning asks the reader to quote the job id (spec 7.4's action). */
function asksForJobId(words: string | null, own: string | null): boolean {
  return /job[_ ]id/i.test(`${words ?? ''} ${own ?? ''}`);
}

function jobResult(job: Job, name: string, names: Names): SafeHtml {
  const corrected = job.previous_status
    ? html`<p class="muted">First marked ${job.previous_status}; a late confirmation from the network corrected it.</p>`
    : '';
  if (job.status === 'published') {
    // Only web addresses become links: a network's answer must not turn into a script link.
    const url = job.external_post_url;
    const sandbox = isSandbox(job, names);
    const link = url && /^https?:\/\//i.test(url)
      ? html`<a href="${url}" rel="noopener noreferrer">View post on ${name}${sandbox ? ' (sandbox)' : ''}</a>${sandbox ? html`<p class="muted">A sandbox post: the address is simulated and does not exist on ${name}.</p>` : ''}`
      : html`Published`;
    return html`${link}${corrected}`;
  }
  if (job.status === 'failed') {
    const words = explainJobError(job.error_code);
    const own = job.error_message && job.error_message !== words ? html`<p class="muted">${job.error_message}</p>` : '';
    // Every failure carries its id; when the message asks to report it, it is said right there.
    const id = asksForJobId(words, job.error_message)
      ? html`<p>Job id to report: <code class="job-id">${job.job_id}</code></p>`
      : html`<p class="muted">Job id: <code class="job-id">${job.job_id}</code></p>`;
    return html`${job.error_code ? html`<code>${job.error_code}</code> ` : ''}${words ?? 'The publication failed.'}${own}${id}${corrected}`;
  }
  if (job.status === 'scheduled') return html`<span class="muted">Waits for its time</span>`;
  return html`<span class="muted">In progress</span>`;
}
