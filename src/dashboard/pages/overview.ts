import type { Content } from '../../core/contents/contents.schema.js';
import type { Connection } from '../../core/connections/connections.schema.js';
import type { MediaService } from '../../core/media/media.service.js';
import type { Delivery, Webhook } from '../../core/webhooks/webhooks.schema.js';
import { html, type SafeHtml } from '../../web/html.js';
import { platformName } from '../explain.js';
import { actionButton, badge, bytes, isoDate, number, table } from '../layout.js';
import { contentTitle } from '../names.js';
import { allows } from '../../core/permissions/authorize.js';
import type { Permission } from '../../core/permissions/roles.js';
import type { PageContext, PageRouter } from '../page-router.js';
import { localInWords } from '../when-field.js';
import { meterShown, meterWord } from '../words.js';
import { connectionHref } from './brands.js';
import { brandZones } from '../brand-zones.js';
import { timeIn } from '../zone-field.js';
import { mediaThumbnail } from './media.js';

/** How far back a failed or partial post still asks for attention: older ones live on the Contents page. */
const ATTENTION_DAYS = 14;

type Thumbs = Awaited<ReturnType<MediaService['ofContents']>>;

/** A webhook endpoint whose newest delivery did not get through, with that delivery. */
interface FailingEndpoint {
  hook: Webhook;
  delivery: Delivery;
}

/** The endpoints that are failing now: their newest delivery failed, died, or waits for a retry after a failure. */
async function failingEndpoints(ctx: PageContext, hooks: Webhook[]): Promise<FailingEndpoint[]> {
  const newest = await Promise.all(
    hooks.filter((h) => h.active).map(async (hook) => ({ hook, delivery: (await ctx.deps.services.webhooks.deliveries(ctx.principal, ctx.workspaceId, hook.id, { limit: 1 })).data[0] })),
  );
  return newest.filter((n): n is FailingEndpoint => n.delivery !== undefined && (n.delivery.status === 'failed' || n.delivery.status === 'dead' || (n.delivery.status === 'pending' && n.delivery.attempt_count > 0)));
}

function thumbFor(thumbs: Thumbs, content: Content): SafeHtml {
  const first = thumbs.get(content.content_id)?.[0];
  return first ? mediaThumbnail(first, 64) : html``;
}

/** The networks of a content with their jobs' status; a canceled one, without jobs, names where it was for. */
function networks(content: Content): SafeHtml {
  if (content.jobs.length === 0) return html`${content.target_platforms.map(platformName).join(', ')}`;
  return html`${content.jobs.map((j, i) => html`${i > 0 ? ', ' : ''}${platformName(j.platform_slug)} ${badge(j.status)}`)}`;
}

function postItem(thumbs: Thumbs, content: Content, when: SafeHtml, action?: SafeHtml): SafeHtml {
  return html`<li class="post">
  ${thumbFor(thumbs, content)}
  <div class="post-body">
    <p><a href="/dashboard/contents/${content.content_id}">${contentTitle(content)}</a> ${badge(content.status)}</p>
    <p class="muted">${when}${content.target_platforms.length > 0 || content.jobs.length > 0 ? html` · ${networks(content)}` : ''}</p>
  </div>
  ${action ?? ''}
</li>`;
}

/** The onboarding checklist of a new workspace: each step ticked from what exists, the next one linked. */
function checklist(steps: { done: boolean; label: string; href: string; hint: string; optional?: boolean }[]): SafeHtml {
  const next = steps.find((s) => !s.done);
  return html`<section class="card onboarding" aria-labelledby="start-h">
  <h2 id="start-h">Get started</h2>
  <p>Four steps from an empty workspace to a post on your networks. Sandbox connections publish nowhere, so you can try everything safely.</p>
  <ol class="checklist">${steps.map(
    (s) => html`<li class="${s.done ? 'done' : s === next ? 'next' : 'todo'}">
    <span class="tick" aria-hidden="true">${s.done ? '✓' : '○'}</span>
    <span><strong>${s.done ? html`<span class="vh">Done: </span>` : ''}${s === next ? html`<a href="${s.href}">${s.label}</a>` : s.label}</strong>${s.optional ? ' (optional)' : ''}<br><span class="muted">${s.hint}</span></span>
  </li>`,
  )}</ol>
</section>`;
}

/**
 * Overview: what needs attention first (failed and partial posts with Retry, expired
 * connections, failing webhook endpoints), then what is coming and what went out, then the plan and the wallet.
 * A new workspace sees its onboarding checklist on top.
 */
export function overviewPage(pages: PageRouter): void {
  pages.page('/dashboard', async (ctx) => {
    const { services } = ctx.deps;
    const now = ctx.deps.clock.now();
    const since = new Date(now - ATTENTION_DAYS * 86_400_000).toISOString();
    // What the role may see or do decides which cards and buttons the page shows (the core refuses the rest).
    const can = (permission: Permission) => allows(ctx.principal, permission);
    const [usage, statement, recent, upcoming, failed, partial, { data: connections }, { data: brands }, { data: hooks }] = await Promise.all([
      services.meters.usage(ctx.workspaceId),
      can('wallet.read') ? services.wallet.statement(ctx.principal, ctx.workspaceId, { limit: 1 }) : null,
      services.contents.list(ctx.principal, ctx.workspaceId, { limit: 5 }),
      services.contents.list(ctx.principal, ctx.workspaceId, { status: 'scheduled', from: new Date(now).toISOString(), limit: 5 }),
      services.contents.list(ctx.principal, ctx.workspaceId, { status: 'failed', created_after: since, limit: 5 }),
      services.contents.list(ctx.principal, ctx.workspaceId, { status: 'partial', created_after: since, limit: 5 }),
      // A client reviews posts and may not read connections: its overview has none to show.
      can('connections.read') ? services.connections.list(ctx.principal, ctx.workspaceId, {}) : { data: [] },
      services.brands.list(ctx.principal, ctx.workspaceId),
      can('webhooks.read') ? services.webhooks.list(ctx.principal, ctx.workspaceId) : { data: [] },
    ]);
    const failing = await failingEndpoints(ctx, hooks);
    const zones = await brandZones(ctx, brands);
    const at = (c: Content, iso: string) => timeIn(iso, zones[c.brand_id] ?? 'UTC');
    const expired = connections.filter((c) => c.status === 'expired');
    const byId = new Map(connections.map((c) => [c.id, c]));
    const active = connections.filter((c) => c.status === 'active');
    const problems = [...failed.data, ...partial.data].sort((a, b) => b.created_at.localeCompare(a.created_at));
    // Recent posts are those that went out (or are going): waiting ones are Upcoming or Drafts.
    const went = recent.data.filter((c) => c.status !== 'scheduled' && c.status !== 'draft');
    const shown = [...problems, ...upcoming.data, ...went];
    const thumbs = await services.media.ofContents(ctx.principal, ctx.workspaceId, [...new Set(shown.map((c) => c.content_id))]);

    const steps = [
      { done: brands.length > 0, label: 'Create a brand', href: '/dashboard/brands', hint: 'A brand groups the accounts you post to, with its own time zone and queue.' },
      { done: connections.some((c) => c.status !== 'inactive'), label: 'Add a sandbox connection', href: '/dashboard/brands', hint: 'A pretend account on any network: everything works, nothing is posted.' },
      { done: recent.data.length > 0, label: 'Compose a post', href: '/dashboard/compose', hint: 'Write once, preview it per network, publish now, schedule it or save a draft.' },
      { done: hooks.length > 0, label: 'Add a webhook', href: '/dashboard/webhooks', hint: 'Get told when a post is published or fails; send a test event to check your receiver.', optional: true },
    ];
    // The checklist is for the first steps; once a post exists, the webhook alone does not keep it on the page.
    const onboarding = can('brands.manage') && steps.slice(0, 3).some((s) => !s.done);

    const attention: SafeHtml[] = [
      ...problems.map((c) => {
        // Retry only when a failed network can publish; when none can, its connection is reconnected first.
        const failedJobs = c.jobs.filter((j) => j.status === 'failed');
        const blocked = failedJobs.map((j) => byId.get(j.connection_id)).find((conn) => conn !== undefined && conn.status !== 'active');
        const action =
          blocked !== undefined && failedJobs.every((j) => byId.get(j.connection_id)?.status !== 'active')
            ? html`<a class="button" href="${connectionHref(blocked)}">Reconnect first<span class="vh">: ${blocked.name} (${platformName(blocked.platform_slug)}) for ${contentTitle(c)}</span></a>`
            : can('contents.publish')
              ? actionButton({ action: `/dashboard/contents/${c.content_id}/retry`, csrf: ctx.csrf, label: 'Retry', describe: `Retry ${contentTitle(c)}` })
              : undefined;
        return postItem(thumbs, c, html`${c.status === 'failed' ? 'Failed' : 'Partly published'} ${at(c, c.completed_at ?? c.updated_at)}`, action);
      }),
      ...expired.map(
        (c: Connection) => html`<li class="post">
  <div class="post-body">
    <p><strong>${c.name}</strong> on ${platformName(c.platform_slug)} ${badge('expired')}</p>
    <p class="muted">This connection can no longer post: the network asks for it to be authorised again.</p>
  </div>
  ${can('connections.manage') ? actionButton({ action: `/dashboard/connections/${c.id}/reconnect`, csrf: ctx.csrf, label: 'Reconnect', describe: `Reconnect ${c.name} (${platformName(c.platform_slug)})` }) : ''}
</li>`,
      ),
      ...failing.map(
        ({ hook, delivery }) => html`<li class="post">
  <div class="post-body">
    <p>Webhook <code>${hook.url}</code> ${badge(delivery.status)}</p>
    <p class="muted">Its last delivery did not get through: ${delivery.attempts.at(-1)?.error ?? 'no answer'}</p>
  </div>
  <a class="button" href="/dashboard/deliveries/${delivery.id}" aria-label="Debug the delivery to ${hook.url}">See why</a>
</li>`,
      ),
    ];

    const meterRows = usage.meters
      .filter((m) => meterShown(m.meter))
      .map((m) => {
        const shownAs = m.meter === 'media_storage' ? (n: number) => bytes(n) : number;
        const ratio = m.limit > 0 ? Math.min(1, m.used / m.limit) : 1;
        return html`<tr>
  <th scope="row">${meterWord(m.meter)}</th>
  <td>${shownAs(m.used)} of ${shownAs(m.limit)} <meter min="0" max="1" value="${ratio.toFixed(3)}" aria-label="${meterWord(m.meter)} used">${Math.round(ratio * 100)}%</meter></td>
  <td>${m.kind === 'cycle' ? html`resets ${isoDate(m.cycle_end)}` : 'while they exist'}</td>
</tr>`;
      });

    return {
      title: 'Overview',
      active: 'overview',
      body: html`<h1>Overview</h1>
${onboarding ? checklist(steps) : ''}
<section class="card" aria-labelledby="attention-h">
  <h2 id="attention-h">Needs attention</h2>
  ${attention.length > 0 ? html`<ul class="posts overview-posts">${attention}</ul>` : html`<p class="muted">Nothing needs attention: no failed posts in the last ${ATTENTION_DAYS} days, no expired connections, no failing webhooks.</p>`}
</section>
<section class="card" aria-labelledby="upcoming-h">
  <h2 id="upcoming-h">Upcoming</h2>
  ${
    upcoming.data.length > 0
      ? html`<ul class="posts overview-posts">${upcoming.data.map((c) => postItem(thumbs, c, html`${c.local_publish_at ? localInWords(c.local_publish_at, c.time_zone) : at(c, c.publish_at ?? c.created_at)}`))}</ul>`
      : html`<p class="muted">Nothing scheduled.</p>`
  }
  <p class="actions"><a href="/dashboard/calendar">Calendar</a><a href="/dashboard/drafts">Drafts</a></p>
</section>
<section class="card" aria-labelledby="recent-h">
  <h2 id="recent-h">Recent posts</h2>
  ${
    went.length > 0
      ? html`<ul class="posts overview-posts">${went.map((c) => postItem(thumbs, c, html`Created ${at(c, c.created_at)}`))}</ul>`
      : html`<p class="muted">Nothing published yet.</p>`
  }
  <p class="actions">${
    !can('contents.draft')
      ? ''
      : brands.length > 0
        ? html`<a class="button primary" href="/dashboard/compose">Compose a post</a>`
        : html`<a class="button primary" href="/dashboard/brands">Create a brand to start posting</a>`
  } <a href="/dashboard/contents">All contents</a> <a href="/dashboard/media">Media</a></p>
</section>
${
  statement === null
    ? ''
    : html`<div class="grid">
  <section class="card" aria-labelledby="meters-h">
    <h2 id="meters-h">Plan <span class="muted">${usage.plan}</span></h2>
    <p>The current cycle ends ${isoDate(usage.cycle_end)}. ${active.length} active connection${active.length === 1 ? '' : 's'}.</p>
    ${table({ caption: 'Use of the plan', head: ['Meter', 'Used', 'Counts'], rows: meterRows, empty: 'No meters.' })}
  </section>
  <section class="card" aria-labelledby="wallet-h">
    <h2 id="wallet-h">Wallet</h2>
    <p class="big">${number(statement.saldo)} <span class="unit">credits</span></p>
    <p class="muted">Credits pay for publications beyond your plan.</p>
    <p><a href="/dashboard/wallet">Buy credits, batches and ledger</a></p>
  </section>
</div>`
}`,
    };
  });
}
