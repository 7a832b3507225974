import { z } from 'zod';
import { brandInputSchema } from '../../core/brands/brands.schema.js';
import type { Brand } from '../../core/brands/brands.schema.js';
import { appPasswordSignInSchema, type Connection, connectAppPasswordInputSchema, createSandboxConnectionInputSchema, startOAuthConnectionInputSchema } from '../../core/connections/connections.schema.js';
import { ServiceError } from '../../core/errors.js';
import { PLATFORM_SLUGS, PLATFORMS, type PlatformSlug } from '../../vocabulary/platforms.js';
import { handleOf } from '../names.js';
import { explainJobError, explainServiceError, meterLabel, platformName } from '../explain.js';
import { check, errorAt, type FieldErrors } from '../forms.js';
import { boardOf, boardUrl, choosesBoard } from './connection-board.js';
import { html, type SafeHtml } from '../../web/html.js';
import { actionButton, badge, csrfField, describedBy, errorBanner, field, number, table } from '../layout.js';
import { timeIn, zoneInput } from '../zone-field.js';
import { brandZones } from '../brand-zones.js';
import { queueInputSchema } from '../../core/scheduling/queue.schema.js';
import { allows } from '../../core/permissions/authorize.js';
import type { PageContext, PageResult, PageRouter } from '../page-router.js';

/** The dashboard's form sends an empty server field for networks that have one server. */
const startLiveInputSchema = startOAuthConnectionInputSchema.extend({ instance: z.preprocess((v) => (v === '' ? undefined : v), startOAuthConnectionInputSchema.shape.instance) });

/** Why a connection left `active`, in words; the codes come from deactivation, brand deletion and the publisher. */
const STATUS_REASONS: Record<string, string> = {
  deactivated: 'Deactivated; its slot is free.',
  brand_deleted: 'Its brand was deleted.',
  refresh_failed: 'The network refused to renew the access. Reconnect it.',
  token_expired: "The network's authorization expired or was refused. Reconnect it.",
  permission_revoked: 'The permission was removed on the network. Reconnect it.',
};

function reasonInWords(reason: string | null): string {
  if (reason === null) return '—';
  return STATUS_REASONS[reason] ?? explainJobError(reason) ?? reason;
}

/** The form of one brand card that failed, so its errors and typed values show in that card only. */
interface BrandFormState {
  brandId: string;
  form: 'sandbox' | 'live' | 'password' | 'rename' | 'connection';
  errors?: FieldErrors;
  banner?: string;
  /** A per-server network's consent page, shown as a link (a form's redirect may only reach listed origins). */
  continueTo?: { url: string; origin: string };
  values?: Record<string, string>;
}

interface RenderExtra {
  status?: number;
  create?: { errors: FieldErrors; name: string; timeZone: string };
  brand?: BrandFormState;
}

const BRANDS_URL = '/dashboard/brands';

/** Where a connection's row and its actions (Reconnect, Deactivate) are on this page. */
export function connectionHref(connection: Pick<Connection, 'id'>): string {
  return `${BRANDS_URL}#conn-${connection.id}`;
}
/**
 * Where a form of the page sends the person back: the brand card or connection row it came from, with the action's
 * notice shown in that card. The fragment scrolls the browser there; it never reaches the server, so `at` names the
 * same element for the page that renders the notice.
 */
function backTo(anchor: `brand-${string}` | `conn-${string}`): string {
  return `${BRANDS_URL}?${new URLSearchParams({ at: anchor }).toString()}#${anchor}`;
}
const GONE_BRAND = 'That brand was not found in this workspace; it may have been deleted.';
const GONE_CONNECTION = 'That connection was not found in this workspace; it may have been removed.';

function isNotFound(err: unknown): err is ServiceError {
  return err instanceof ServiceError && err.code === 'not_found';
}

/** Brands and their network connections (spec 4.3–4.6): create, rename, delete; sandbox and live connections. */
export function brandPages(pages: PageRouter): void {
  async function render(ctx: PageContext, extra: RenderExtra = {}): Promise<PageResult> {
    const { services } = ctx.deps;
    const [{ data: brands }, { data: connections }, usage] = await Promise.all([
      services.brands.list(ctx.principal, ctx.workspaceId),
      // A client sees its brands but may not read their connections.
      allows(ctx.principal, 'connections.read') ? services.connections.list(ctx.principal, ctx.workspaceId, {}) : { data: [] },
      services.meters.usage(ctx.workspaceId),
    ]);
    const zones = await brandZones(ctx, brands);
    const meters = usage.meters.filter((m) => m.meter === 'brands' || m.meter === 'connections');
    const live = PLATFORM_SLUGS.filter((slug) => ctx.deps.liveAvailable(slug));
    const createError = errorAt(extra.create?.errors, 'name');
    const zoneError = errorAt(extra.create?.errors, 'time_zone');
    // The card the previous action's notice belongs in (see backTo); unknown ids leave it at the top of the page.
    const at = ctx.query.at ?? '';
    const noticeIn = at.startsWith('brand-') ? brands.find((b) => `brand-${b.id}` === at)?.id : at.startsWith('conn-') ? connections.find((c) => `conn-${c.id}` === at)?.brand_id : undefined;
    const notice = ctx.flash !== null && noticeIn !== undefined ? { brandId: noticeIn, text: ctx.flash } : undefined;
    // Brand names may repeat; each card is a landmark named by its heading, and a screen reader's list of regions
    // must tell them apart, so a repeated name gets its rank among the brands of that name.
    const twins = (b: Brand) => brands.filter((o) => o.name === b.name);
    const rankOf = (b: Brand) => (twins(b).length > 1 ? `${twins(b).indexOf(b) + 1} of ${twins(b).length}` : null);

    return {
      title: 'Brands & connections',
      active: 'brands',
      status: extra.status ?? 200,
      flashShown: notice !== undefined,
      body: html`<h1>Brands & connections</h1>
<section class="card" aria-labelledby="usage-h">
  <h2 id="usage-h">Plan usage</h2>
  ${meters.map((m) => html`<p>${meterLabel(m.meter)}: ${number(m.used)} of ${number(m.limit)} used</p>`)}
  <p class="muted">Deleting a brand or deactivating a connection frees its slot.</p>
</section>
${
  !allows(ctx.principal, 'brands.manage')
    ? ''
    : html`<section class="card" aria-labelledby="create-brand-h">
  <h2 id="create-brand-h">Create a brand</h2>
  <p>A brand groups the network accounts its posts go to.</p>
  ${errorBanner(extra.create?.errors._)}
  <form method="post" action="${BRANDS_URL}">
    ${csrfField(ctx.csrf)}
    ${field({
      id: 'brand-name',
      label: 'Brand name',
      error: createError,
      control: html`<input id="brand-name" name="name" type="text" maxlength="100" required value="${extra.create?.name ?? ''}"${describedBy('brand-name', { error: createError })}>`,
    })}
    ${field({
      id: 'brand-zone',
      label: 'Time zone',
      hint: 'Where the brand’s audience is: scheduled times and queue slots are read in it. Type a city to search.',
      error: zoneError,
      control: zoneInput({ id: 'brand-zone', value: extra.create?.timeZone ?? 'UTC', browserZone: extra.create === undefined, describedBy: describedBy('brand-zone', { hint: true, error: zoneError }) }),
    })}
    <button type="submit" class="primary">Create brand</button>
  </form>
</section>`
}
${
  brands.length === 0
    ? html`<p class="empty">No brands yet. Create one above, then add its connections.</p>`
    : brands.map((b) =>
        brandCard(
          ctx,
          b,
          zones[b.id] ?? 'UTC',
          connections.filter((c) => c.brand_id === b.id),
          live,
          extra.brand?.brandId === b.id ? extra.brand : undefined,
          notice?.brandId === b.id ? notice.text : undefined,
          rankOf(b),
        ),
      )
}`,
    };
  }

  function brandCard(ctx: PageContext, brand: Brand, zone: string, connections: Connection[], live: readonly string[], state: BrandFormState | undefined, notice: string | undefined, rank: string | null): SafeHtml {
    const manageConnections = allows(ctx.principal, 'connections.manage');
    const manageBrands = allows(ctx.principal, 'brands.manage');
    const id = brand.id;
    const label = rank === null ? brand.name : `${brand.name} (${rank})`;
    const values = state?.values ?? {};
    const errorsOf = (form: BrandFormState['form']) => (state?.form === form ? state.errors : undefined);
    const sandboxErrors = errorsOf('sandbox');
    const netError = errorAt(sandboxErrors, 'platform_slug');
    const nameError = errorAt(sandboxErrors, 'name');
    const liveError = errorAt(errorsOf('live'), 'platform_slug');
    const instanceError = errorAt(errorsOf('live'), 'instance');
    const identifierError = errorAt(errorsOf('password'), 'identifier');
    const passwordError = errorAt(errorsOf('password'), 'app_password');
    const serviceError = errorAt(errorsOf('password'), 'service');
    const oauthNetworks = PLATFORM_SLUGS.filter((slug) => PLATFORMS[slug].connect !== 'app_password');
    const byOAuth = live.filter((slug) => PLATFORMS[slug as PlatformSlug].connect !== 'app_password') as PlatformSlug[];
    const byPassword = live.filter((slug) => PLATFORMS[slug as PlatformSlug].connect === 'app_password') as PlatformSlug[];
    const renameError = errorAt(errorsOf('rename'), 'name');
    // A refused form re-renders the whole page: its banner takes the focus, so the person lands back in this card.
    const bannerFor = (form: BrandFormState['form']) =>
      state?.form === form ? errorBanner(state.banner ?? (state.errors ? 'That was not saved: see the field marked below.' : undefined), undefined, { focus: true }) : '';
    const selected = (form: BrandFormState['form'], slug: string) => (state?.form === form && values.platform_slug === slug ? html` selected` : '');

    const rows = connections.map((c) => {
      // Buttons the role cannot use are not shown; the core refuses them anyway.
      const open = c.status !== 'inactive' && manageConnections;
      const reconnect = c.status === 'expired' && manageConnections;
      const byPassword = PLATFORMS[c.platform_slug].connect === 'app_password';
      const board = choosesBoard(c) ? boardOf(c) : null;
      return html`<tr id="conn-${c.id}">
  <th scope="row">${c.name}${handleOf(c) && handleOf(c) !== c.name ? html`<span class="row-meta">${handleOf(c)}</span>` : ''}${board !== null ? html`<span class="row-meta">Board: ${board}</span>` : ''}</th>
  <td>${platformName(c.platform_slug)}</td>
  <td>${c.mode === 'live' ? 'Live' : 'Sandbox'}</td>
  <td>${badge(c.status)}</td>
  <td>${reasonInWords(c.status_reason)}</td>
  <td>${timeIn(c.created_at, zone)}</td>
  <td><div class="actions">${
    choosesBoard(c) ? html`<a class="button" href="${boardUrl(c.id)}">Choose board<span class="vh"> for ${c.name}</span></a>` : ''
  }${
    reconnect && byPassword && c.mode === 'live'
      ? html`<form method="post" action="/dashboard/connections/${c.id}/app-password" class="inline">
  ${csrfField(ctx.csrf)}
  <label for="repass-${c.id}">New app password<span class="vh"> for ${c.name}</span></label>
  <input id="repass-${c.id}" name="app_password" type="password" autocomplete="off" required>
  <button type="submit">Reconnect<span class="vh"> ${c.name} (${platformName(c.platform_slug)})</span></button>
</form>`
      : reconnect
        ? actionButton({ action: `/dashboard/connections/${c.id}/reconnect`, csrf: ctx.csrf, label: 'Reconnect', describe: `Reconnect ${c.name} (${platformName(c.platform_slug)})` })
        : ''
  }${
    open
      ? actionButton({
          action: `/dashboard/connections/${c.id}/deactivate`,
          csrf: ctx.csrf,
          label: 'Deactivate',
          danger: true,
          describe: `Deactivate ${c.name} (${platformName(c.platform_slug)})`,
          confirm: `Deactivate ${c.name} on ${platformName(c.platform_slug)}? Posts can no longer go out through it, and its slot is freed.`,
        })
      : ''
  }</div></td>
</tr>`;
    });

    return html`<section class="card" id="brand-${id}" aria-labelledby="brand-${id}-h">
  <h2 id="brand-${id}-h">${brand.name}${rank === null ? '' : html`<span class="vh"> (${rank})</span>`}</h2>
  <p class="muted">Created ${timeIn(brand.created_at, zone)} · time zone ${zone}</p>
  <p><a href="${BRANDS_URL}/${id}/queue">Publishing queue and time zone<span class="vh"> of ${brand.name}</span></a></p>
  ${notice !== undefined ? html`<p class="notice" role="status">${notice}</p>` : ''}
  ${bannerFor('connection')}
  ${
    allows(ctx.principal, 'connections.read', id)
      ? table({ caption: `Connections of ${label}`, head: ['Name', 'Network', 'Mode', 'Status', 'Why', 'Created', 'Actions'], rows, empty: 'No connections yet.' })
      : html`<p class="muted">Your role does not show this brand's connections.</p>`
  }

  ${
    !manageConnections
      ? ''
      : html`<h3 id="sandbox-${id}-h">Add a sandbox connection</h3>
  <p>A sandbox connection publishes to a simulated network, for trying things out: nothing reaches the real account.</p>
  ${bannerFor('sandbox')}
  <form method="post" action="${BRANDS_URL}/${id}/connections" aria-labelledby="sandbox-${id}-h brand-${id}-h">
    ${csrfField(ctx.csrf)}
    ${field({
      id: `conn-net-${id}`,
      label: 'Network',
      error: netError,
      control: html`<select id="conn-net-${id}" name="platform_slug" required${describedBy(`conn-net-${id}`, { error: netError })}>
      ${PLATFORM_SLUGS.map((slug) => html`<option value="${slug}"${selected('sandbox', slug)}>${PLATFORMS[slug].name}</option>`)}
    </select>`,
    })}
    ${field({
      id: `conn-name-${id}`,
      label: 'Connection name',
      hint: 'E.g. the account handle it stands for.',
      error: nameError,
      control: html`<input id="conn-name-${id}" name="name" type="text" maxlength="100" required value="${state?.form === 'sandbox' ? (values.name ?? '') : ''}"${describedBy(`conn-name-${id}`, { hint: true, error: nameError })}>`,
    })}
    <button type="submit">Add sandbox connection</button>
  </form>

  <h3 id="live-${id}-h">Connect a live account</h3>
  ${bannerFor('live')}
  ${
    state?.form === 'live' && state.continueTo
      ? html`<p class="notice" role="status" tabindex="-1" data-focus-on-load>Your server is ready: <a href="${state.continueTo.url}">continue on ${state.continueTo.origin} to approve access</a>. The connection is added once you approve.</p>`
      : ''
  }
  ${
    byOAuth.length === 0
      ? html`<p>Live connections need the network's OAuth client configured on this installation: <code>&lt;NETWORK&gt;_CLIENT_ID</code> and <code>&lt;NETWORK&gt;_CLIENT_SECRET</code> (for example <code>THREADS_CLIENT_ID</code> and <code>THREADS_CLIENT_SECRET</code>). None is configured yet.</p>`
      : html`<form method="post" action="${BRANDS_URL}/${id}/connections/live" aria-labelledby="live-${id}-h brand-${id}-h">
    ${csrfField(ctx.csrf)}
    ${field({
      id: `live-net-${id}`,
      label: 'Network',
      hint: byOAuth.length < oauthNetworks.length ? html`Only networks whose OAuth client is configured on this installation (<code>&lt;NETWORK&gt;_CLIENT_ID</code> and <code>&lt;NETWORK&gt;_CLIENT_SECRET</code>) are listed.` : '',
      error: liveError,
      control: html`<select id="live-net-${id}" name="platform_slug" required${describedBy(`live-net-${id}`, { hint: byOAuth.length < oauthNetworks.length, error: liveError })}>
      ${byOAuth.map((slug) => html`<option value="${slug}"${selected('live', slug)}>${platformName(slug)}</option>`)}
    </select>`,
    })}
    ${
      byOAuth.some((slug) => PLATFORMS[slug].connect === 'instance_oauth')
        ? field({
            id: `live-instance-${id}`,
            label: 'Server (Mastodon only)',
            hint: 'The server your account lives on, e.g. mastodon.social. Leave empty for other networks.',
            error: instanceError,
            control: html`<input id="live-instance-${id}" name="instance" value="${state?.form === 'live' ? (values.instance ?? '') : ''}" autocomplete="url"${describedBy(`live-instance-${id}`, { hint: true, error: instanceError })}>`,
          })
        : ''
    }
    <p class="hint">You are sent to the network to approve access; the connection is added once you approve.</p>
    <button type="submit">Connect a live account</button>
  </form>`
  }
  ${
    byPassword.length === 0
      ? ''
      : html`<h3 id="password-${id}-h">Connect with an app password</h3>
  ${bannerFor('password')}
  <form method="post" action="${BRANDS_URL}/${id}/connections/app-password" aria-labelledby="password-${id}-h brand-${id}-h">
    ${csrfField(ctx.csrf)}
    ${field({
      id: `pw-net-${id}`,
      label: 'Network',
      control: html`<select id="pw-net-${id}" name="platform_slug" required>
      ${byPassword.map((slug) => html`<option value="${slug}"${selected('password', slug)}>${platformName(slug)}</option>`)}
    </select>`,
    })}
    ${field({
      id: `pw-id-${id}`,
      label: 'Handle or e-mail',
      hint: 'For example alice.bsky.social.',
      error: identifierError,
      control: html`<input id="pw-id-${id}" name="identifier" required autocomplete="username" value="${state?.form === 'password' ? (values.identifier ?? '') : ''}"${describedBy(`pw-id-${id}`, { hint: true, error: identifierError })}>`,
    })}
    ${field({
      id: `pw-pass-${id}`,
      label: 'App password',
      hint: "Make one in the network's settings (Settings → Privacy and security → App passwords); never your main password. It is used once to sign in and not stored.",
      error: passwordError,
      control: html`<input id="pw-pass-${id}" name="app_password" type="password" required autocomplete="off"${describedBy(`pw-pass-${id}`, { hint: true, error: passwordError })}>`,
    })}
    ${field({
      id: `pw-service-${id}`,
      label: 'Server (optional)',
      hint: 'Only for an account on a self-hosted server: its address, for example https://pds.example.com. Leave empty for bsky.social.',
      error: serviceError,
      control: html`<input id="pw-service-${id}" name="service" type="url" maxlength="500" value="${state?.form === 'password' ? (values.service ?? '') : ''}"${describedBy(`pw-service-${id}`, { hint: true, error: serviceError })}>`,
    })}
    <button type="submit">Connect with an app password</button>
  </form>`
  }`
  }
  ${
    !manageBrands
      ? ''
      : html`<h3 id="manage-${id}-h">Rename or delete</h3>
  ${bannerFor('rename')}
  <form method="post" action="${BRANDS_URL}/${id}/rename" aria-labelledby="manage-${id}-h brand-${id}-h">
    ${csrfField(ctx.csrf)}
    ${field({
      id: `rename-${id}`,
      label: 'New name',
      error: renameError,
      control: html`<input id="rename-${id}" name="name" type="text" maxlength="100" required value="${state?.form === 'rename' ? (values.name ?? '') : brand.name}"${describedBy(`rename-${id}`, { error: renameError })}>`,
    })}
    <div class="actions">
      <button type="submit" aria-label="Rename ${brand.name}">Rename</button>
    </div>
  </form>
  <div class="actions">${actionButton({
    action: `${BRANDS_URL}/${id}/delete`,
    csrf: ctx.csrf,
    label: 'Delete brand',
    danger: true,
    describe: `Delete brand ${brand.name}`,
    confirm: `Delete ${brand.name}? Its connections are deactivated (freeing their slots); its contents stay readable.`,
  })}</div>`
  }
</section>`;
  }

  pages.page(BRANDS_URL, (ctx) => render(ctx));

  pages.action(BRANDS_URL, async (ctx) => {
    const name = ctx.form.get('name');
    const timeZone = ctx.form.get('time_zone').trim() || 'UTC';
    const input = check(brandInputSchema, { name });
    // The zone is the brand's queue's: checked before the brand is made, so a bad zone creates nothing.
    const zone = check(queueInputSchema, { time_zone: timeZone, slots: [] });
    if (!input.ok || !zone.ok) return render(ctx, { status: 400, create: { errors: { ...(input.ok ? {} : input.errors), ...(zone.ok ? {} : zone.errors) }, name, timeZone } });
    try {
      const brand = await ctx.deps.services.brands.create(ctx.principal, ctx.workspaceId, input.data);
      const queue = await ctx.deps.services.queue.setQueue(ctx.principal, ctx.workspaceId, brand.id, zone.data);
      return { redirect: backTo(`brand-${brand.id}`), flash: `Brand “${brand.name}” created, in ${queue.time_zone}.` };
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'limit_reached') return render(ctx, { status: err.status, create: { errors: { _: explainServiceError(err) }, name, timeZone } });
      throw err;
    }
  });

  pages.action(`${BRANDS_URL}/:brandId/rename`, async (ctx) => {
    const brandId = ctx.params.brandId!;
    const name = ctx.form.get('name');
    const input = check(brandInputSchema, { name });
    if (!input.ok) return render(ctx, { status: 400, brand: { brandId, form: 'rename', errors: input.errors, values: { name } } });
    try {
      const brand = await ctx.deps.services.brands.update(ctx.principal, ctx.workspaceId, brandId, input.data);
      return { redirect: backTo(`brand-${brand.id}`), flash: `Brand renamed to “${brand.name}”.` };
    } catch (err) {
      if (isNotFound(err)) return { redirect: BRANDS_URL, flash: GONE_BRAND };
      throw err;
    }
  });

  pages.action(`${BRANDS_URL}/:brandId/delete`, async (ctx) => {
    const { services } = ctx.deps;
    const brandId = ctx.params.brandId!;
    try {
      const brand = await services.brands.get(ctx.principal, ctx.workspaceId, brandId);
      await services.brands.remove(ctx.principal, ctx.workspaceId, brandId);
      return { redirect: BRANDS_URL, flash: `Brand “${brand.name}” deleted. Its connections were deactivated; its contents stay readable.` };
    } catch (err) {
      if (isNotFound(err)) return { redirect: BRANDS_URL, flash: GONE_BRAND };
      throw err;
    }
  });

  pages.action(`${BRANDS_URL}/:brandId/connections`, async (ctx) => {
    const { services } = ctx.deps;
    const brandId = ctx.params.brandId!;
    const values = { platform_slug: ctx.form.get('platform_slug'), name: ctx.form.get('name') };
    try {
      // Looked up first so a brand of another workspace is "not found" before anything about the form is said.
      const brand = await services.brands.get(ctx.principal, ctx.workspaceId, brandId);
      const input = check(createSandboxConnectionInputSchema, { ...values, mode: 'sandbox' });
      if (!input.ok) return render(ctx, { status: 400, brand: { brandId, form: 'sandbox', errors: input.errors, values } });
      const conn = await services.connections.createSandbox(ctx.principal, ctx.workspaceId, brandId, input.data);
      return { redirect: backTo(`conn-${conn.id}`), flash: `Connection “${conn.name}” added to ${brand.name}.` };
    } catch (err) {
      if (isNotFound(err)) return { redirect: BRANDS_URL, flash: GONE_BRAND };
      if (err instanceof ServiceError && err.code === 'limit_reached') {
        return render(ctx, { status: err.status, brand: { brandId, form: 'sandbox', banner: explainServiceError(err), values } });
      }
      throw err;
    }
  });

  pages.action(`${BRANDS_URL}/:brandId/connections/live`, async (ctx) => {
    const brandId = ctx.params.brandId!;
    const values = { platform_slug: ctx.form.get('platform_slug'), instance: ctx.form.get('instance') ?? '' };
    try {
      await ctx.deps.services.brands.get(ctx.principal, ctx.workspaceId, brandId);
      const input = check(startLiveInputSchema, values);
      if (!input.ok) return render(ctx, { status: 400, brand: { brandId, form: 'live', errors: input.errors, values } });
      const started = await ctx.deps.services.networkConnect.start(ctx.principal, ctx.workspaceId, brandId, input.data.platform_slug, { instance: input.data.instance });
      if (PLATFORMS[input.data.platform_slug].connect === 'instance_oauth') {
        return render(ctx, { brand: { brandId, form: 'live', values, continueTo: { url: started.authorization_url, origin: new URL(started.authorization_url).origin } } });
      }
      // The network's consent screen; the page CSP lists the networks' origins in form-action for this.
      return { redirect: started.authorization_url };
    } catch (err) {
      if (isNotFound(err)) return { redirect: BRANDS_URL, flash: GONE_BRAND };
      if (err instanceof ServiceError && (err.code === 'platform_not_supported' || err.code === 'validation_failed')) {
        return render(ctx, { status: err.status, brand: { brandId, form: 'live', banner: explainServiceError(err), values } });
      }
      throw err;
    }
  });

  pages.action(`${BRANDS_URL}/:brandId/connections/app-password`, async (ctx) => {
    const brandId = ctx.params.brandId!;
    const service = ctx.form.get('service').trim();
    const values = {
      platform_slug: ctx.form.get('platform_slug'),
      identifier: ctx.form.get('identifier'),
      app_password: ctx.form.get('app_password'),
      ...(service !== '' ? { service } : {}),
    };
    // The password is never echoed back into the page.
    const shown = { platform_slug: values.platform_slug ?? '', identifier: values.identifier ?? '', service };
    try {
      await ctx.deps.services.brands.get(ctx.principal, ctx.workspaceId, brandId);
      const input = check(connectAppPasswordInputSchema, values);
      if (!input.ok) return render(ctx, { status: 400, brand: { brandId, form: 'password', errors: input.errors, values: shown } });
      const { platform_slug, ...signIn } = input.data;
      const conn = await ctx.deps.services.networkConnect.signIn(ctx.principal, ctx.workspaceId, { brandId, platform: platform_slug }, signIn);
      return { redirect: backTo(`conn-${conn.id}`), flash: `Connected “${conn.name}” on ${platformName(conn.platform_slug)}.` };
    } catch (err) {
      if (isNotFound(err)) return { redirect: BRANDS_URL, flash: GONE_BRAND };
      if (err instanceof ServiceError && ['platform_not_supported', 'validation_failed', 'limit_reached'].includes(err.code)) {
        return render(ctx, { status: err.status, brand: { brandId, form: 'password', banner: explainServiceError(err), values: shown } });
      }
      throw err;
    }
  });

  pages.action('/dashboard/connections/:connId/app-password', async (ctx) => {
    const { services } = ctx.deps;
    const connId = ctx.params.connId!;
    try {
      const brandId = (await services.connections.get(ctx.principal, ctx.workspaceId, connId)).brand_id;
      const input = check(appPasswordSignInSchema, { app_password: ctx.form.get('app_password') });
      if (!input.ok) return render(ctx, { status: 400, brand: { brandId, form: 'connection', banner: 'Give the new app password to reconnect.' } });
      try {
        const conn = await services.networkConnect.signIn(ctx.principal, ctx.workspaceId, { connectionId: connId }, input.data);
        return { redirect: backTo(`conn-${conn.id}`), flash: `Reconnected “${conn.name}”.` };
      } catch (err) {
        if (err instanceof ServiceError && (err.code === 'platform_not_supported' || err.code === 'validation_failed')) {
          return render(ctx, { status: err.status, brand: { brandId, form: 'connection', banner: explainServiceError(err) } });
        }
        throw err;
      }
    } catch (err) {
      if (isNotFound(err)) return { redirect: BRANDS_URL, flash: GONE_CONNECTION };
      throw err;
    }
  });

  pages.action('/dashboard/connections/:connId/deactivate', async (ctx) => {
    try {
      const conn = await ctx.deps.services.connections.deactivate(ctx.principal, ctx.workspaceId, ctx.params.connId!);
      return { redirect: backTo(`conn-${conn.id}`), flash: `Connection “${conn.name}” deactivated; its slot is free.` };
    } catch (err) {
      if (isNotFound(err)) return { redirect: BRANDS_URL, flash: GONE_CONNECTION };
      throw err;
    }
  });

  pages.action('/dashboard/connections/:connId/reconnect', async (ctx) => {
    const { services } = ctx.deps;
    const connId = ctx.params.connId!;
    let conn: Connection;
    try {
      conn = await services.connections.get(ctx.principal, ctx.workspaceId, connId);
    } catch (err) {
      if (isNotFound(err)) return { redirect: BRANDS_URL, flash: GONE_CONNECTION };
      throw err;
    }
    try {
      // A sandbox connection has no network to ask: it is active again at once.
      if (conn.mode === 'sandbox') {
        await services.connections.reconnectSandbox(ctx.principal, ctx.workspaceId, connId);
        return { redirect: backTo(`conn-${conn.id}`), flash: `Reconnected “${conn.name}”.` };
      }
      const started = await services.networkConnect.startReconnect(ctx.principal, ctx.workspaceId, connId);
      return { redirect: started.authorization_url };
    } catch (err) {
      if (isNotFound(err)) return { redirect: BRANDS_URL, flash: GONE_CONNECTION };
      // A network no longer configured, or a sandbox connection: said in the brand's card.
      if (err instanceof ServiceError && (err.code === 'platform_not_supported' || err.code === 'validation_failed')) {
        return render(ctx, { status: err.status, brand: { brandId: conn.brand_id, form: 'connection', banner: explainServiceError(err) } });
      }
      throw err;
    }
  });
}
