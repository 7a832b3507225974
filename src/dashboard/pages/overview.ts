import { html } from '../../web/html.js';
import { badge, bytes, isoDate, number, table } from '../layout.js';
import type { PageRouter } from '../page-router.js';
import { meterLabel, platformName } from '../explain.js';

/** Overview: plan meters, wallet balance, recent contents and connection health on one screen. */
export function overviewPage(pages: PageRouter): void {
  pages.page('/dashboard', async (ctx) => {
    const { services } = ctx.deps;
    const [usage, statement, recent, { data: connections }] = await Promise.all([
      services.meters.usage(ctx.workspaceId),
      services.wallet.statement(ctx.principal, ctx.workspaceId, { limit: 1 }),
      services.contents.list(ctx.principal, ctx.workspaceId, { limit: 5 }),
      services.connections.list(ctx.principal, ctx.workspaceId, {}),
    ]);
    const unhealthy = connections.filter((c) => c.status === 'expired');
    const active = connections.filter((c) => c.status === 'active');
    const meterRows = usage.meters.map((m) => {
      const shown = m.meter === 'media_storage' ? (n: number) => bytes(n) : number;
      const ratio = m.limit > 0 ? Math.min(1, m.used / m.limit) : 1;
      return html`<tr>
  <th scope="row">${meterLabel(m.meter)}</th>
  <td>${shown(m.used)} of ${shown(m.limit)} <meter min="0" max="1" value="${ratio.toFixed(3)}" aria-label="${meterLabel(m.meter)} used">${Math.round(ratio * 100)}%</meter></td>
  <td>${m.kind === 'cycle' ? html`resets ${isoDate(m.cycle_end)}` : 'in stock'}</td>
</tr>`;
    });
    return {
      title: 'Overview',
      active: 'overview',
      body: html`<h1>Overview</h1>
<div class="grid">
  <section class="card" aria-labelledby="wallet-h">
    <h2 id="wallet-h">Wallet</h2>
    <p class="big">${number(statement.saldo)} <span class="unit">credits</span></p>
    <p><a href="/dashboard/wallet">Batches, ledger and offers</a></p>
  </section>
  <section class="card" aria-labelledby="health-h">
    <h2 id="health-h">Connections</h2>
    <p class="big">${active.length} <span class="unit">active</span></p>
    ${
      unhealthy.length > 0
        ? html`<p class="warn" role="status">${unhealthy.length} need reconnecting: ${unhealthy.map((c, i) => html`${i > 0 ? ', ' : ''}${c.name} (${platformName(c.platform_slug)})`)}.</p>`
        : html`<p>All connections are healthy.</p>`
    }
    <p><a href="/dashboard/brands">Brands & connections</a></p>
  </section>
</div>
<section class="card" aria-labelledby="meters-h">
  <h2 id="meters-h">Plan <span class="muted">${usage.plan}</span></h2>
  <p>The current cycle ends ${isoDate(usage.cycle_end)}.</p>
  ${table({ caption: 'Plan meters', head: ['Meter', 'Used', 'Kind'], rows: meterRows, empty: 'No meters.' })}
</section>
<section class="card" aria-labelledby="recent-h">
  <h2 id="recent-h">Recent contents</h2>
  ${table({
    caption: 'Recent contents',
    head: ['Created', 'Type', 'Status', 'Networks'],
    rows: recent.data.map(
      (c) => html`<tr>
  <td><a href="/dashboard/contents/${c.content_id}">${isoDate(c.created_at)}</a></td>
  <td>${c.content_type}</td>
  <td>${badge(c.status)}</td>
  <td>${c.jobs.map((j, i) => html`${i > 0 ? ', ' : ''}${platformName(j.platform_slug)} ${badge(j.status)}`)}</td>
</tr>`,
    ),
    empty: 'Nothing published yet.',
  })}
  <p><a class="button primary" href="/dashboard/compose">Compose a post</a> <a href="/dashboard/contents">All contents</a></p>
</section>`,
    };
  });
}
