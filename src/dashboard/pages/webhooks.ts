import { ServiceError } from '../../core/errors.js';
import { EVENT_TYPES, WEBHOOK_EVENT_TYPES } from '../../core/events/events.js';
import { durationWords } from '../../core/webhooks/retry-policy.js';
import {
  createWebhookInputSchema,
  type Delivery,
  type DeliveryDetail,
  deliveryListQuerySchema,
  type DeliveryListQuery,
  sendTestEventInputSchema,
  updateWebhookInputSchema,
  type Webhook,
} from '../../core/webhooks/webhooks.schema.js';
import { explainServiceError } from '../explain.js';
import { check, errorAt, type FieldErrors, fieldErrorsOf, optional } from '../forms.js';
import { html, type SafeHtml } from '../../web/html.js';
import { actionButton, badge, csrfField, describedBy, errorBanner, field, isoDate, secretOnce, table } from '../layout.js';
import type { PageContext, PageResult, PageRouter } from '../page-router.js';

/** What the endpoint form holds, kept when it is shown again with its errors. */
interface EndpointValues {
  url: string;
  description: string;
  events: readonly string[];
  active: boolean;
}

const BLANK: EndpointValues = { url: '', description: '', events: EVENT_TYPES, active: true };

/** The delivery filters people choose from; `failed` also covers dead deliveries (the REST filter's meaning). */
const STATUS_FILTERS = [
  { value: 'all', label: 'All' },
  { value: 'pending', label: 'Pending (waiting for an attempt)' },
  { value: 'delivered', label: 'Delivered' },
  { value: 'failed', label: 'Failed (stopped or gave up)' },
] as const;

function valuesFrom(ctx: PageContext): EndpointValues {
  return { url: ctx.form.get('url').trim(), description: ctx.form.get('description'), events: ctx.form.all('enabled_events'), active: ctx.form.get('active') === 'true' };
}

/** The core and zod speak of the address as a bare predicate ("must be a public HTTPS URL"): make it a sentence. */
function sentence(message: string | undefined, subject: string): string | undefined {
  if (message === undefined) return undefined;
  return /^must\b/.test(message) ? `The ${subject} ${message}.` : message;
}

/** Errors of a form turned into words for people; an empty or tampered event list gets one plain request. */
function friendly(errors: FieldErrors): FieldErrors {
  const out: FieldErrors = { ...errors };
  const url = sentence(errorAt(errors, 'url'), 'URL');
  if (url !== undefined) out.url = url;
  if (errorAt(errors, 'enabled_events') !== undefined) out.enabled_events = 'Choose at least one event from the list.';
  return out;
}

/** URL, Description and the Events checkboxes, shared by the create and the edit form (ids prefixed per form). */
function endpointFields(prefix: string, values: EndpointValues, errors: FieldErrors | undefined): SafeHtml {
  const urlError = errorAt(errors, 'url');
  const descriptionError = errorAt(errors, 'description');
  const eventsError = errorAt(errors, 'enabled_events');
  return html`${field({
    id: `${prefix}-url`,
    label: 'URL',
    hint: 'A public HTTPS address of yours that receives the events, e.g. https://example.com/hooks/publisher.',
    error: urlError,
    control: html`<input id="${prefix}-url" name="url" type="url" inputmode="url" maxlength="2048" required autocomplete="off" spellcheck="false" value="${values.url}"${describedBy(`${prefix}-url`, { hint: true, error: urlError })}>`,
  })}
${field({
  id: `${prefix}-description`,
  label: 'Description',
  hint: 'Optional: what this endpoint is for.',
  error: descriptionError,
  control: html`<input id="${prefix}-description" name="description" type="text" maxlength="500" value="${values.description}"${describedBy(`${prefix}-description`, { hint: true, error: descriptionError })}>`,
})}
<fieldset class="field${eventsError ? ' invalid' : ''}"${describedBy(`${prefix}-events`, { hint: true, error: eventsError })}>
  <legend>Events</legend>
  <p class="hint" id="${prefix}-events-hint">Only the checked events are sent to this endpoint.</p>
  <div class="choices">
    ${WEBHOOK_EVENT_TYPES.map((type) => {
      const id = `${prefix}-event-${type.replace('.', '-')}`;
      return html`<label for="${id}"><input id="${id}" type="checkbox" name="enabled_events" value="${type}"${values.events.includes(type) ? html` checked` : ''}> ${type}</label>`;
    })}
  </div>
  ${eventsError ? html`<p class="field-error" id="${prefix}-events-error">${eventsError}</p>` : ''}
</fieldset>`;
}

function activeBadge(active: boolean): SafeHtml {
  return active ? badge('active') : html`<span class="badge badge-inactive">paused</span>`;
}

/** A short version of the signing contract of the REST docs: enough to write a receiver. */
function signingHelp(timeoutMs: number): SafeHtml {
  return html`<section class="card" aria-labelledby="signing-h">
  <h2 id="signing-h">Checking that an event really comes from us</h2>
  <p>Each event arrives as a POST with a JSON body and the headers <code>Service-Timestamp</code>, <code>Service-Signature</code>, <code>Service-Webhook-Id</code> and <code>Service-Delivery-Id</code>. To check it:</p>
  <ol>
    <li>Join the timestamp, a dot and the raw body exactly as received: <code>{timestamp}.{raw body}</code>.</li>
    <li>Compute the HMAC-SHA256 of that text with the endpoint's signing secret, in lowercase hex.</li>
    <li>Compare <code>sha256=</code> followed by that hex with <code>Service-Signature</code>, using a constant-time comparison, and refuse timestamps that are more than a few minutes old.</li>
  </ol>
  <p>Answer with a 2xx status within ${durationWords(timeoutMs)}. Server errors, 408, 429, redirects, timeouts and refused connections are retried after 1 min, 5 min, 30 min, 2 h and 12 h; other 4xx answers stop the delivery, and after 6 failed attempts it is given up. An event can arrive more than once: ignore repeats of a <code>Service-Delivery-Id</code> you have already handled.</p>
</section>`;
}

/** Text of one attempt: the HTTP status when there was an answer, our words when something went wrong. */
function attemptOutcome(a: Delivery['attempts'][number]): string {
  const status = a.http_status === null ? null : `HTTP ${a.http_status}`;
  if (a.error === null) return status ?? 'no answer';
  if (status === null || a.error.includes(status)) return a.error;
  return `${status}: ${a.error}`;
}

/** The last attempt in one line, its reason inline: the first thing to read when a delivery fails. */
function lastAttempt(d: Delivery): SafeHtml {
  const last = d.attempts.at(-1);
  if (!last) return html`<span class="muted">No attempt yet.</span>`;
  const failed = last.error !== null;
  return html`<span${failed ? html` class="warn"` : ''}>${attemptOutcome(last)}</span><br><span class="muted">${isoDate(last.at)}, ${last.latency_ms} ms${last.manual ? ' (redelivery)' : ''}</span>`;
}

function eventLabel(d: Pick<Delivery, 'event_type' | 'test'>): SafeHtml {
  return html`${d.event_type}${d.test ? html` <span class="tag">test</span>` : ''}`;
}

/** The stored body, indented when it is JSON (it always is; a damaged row is shown as stored). */
function prettyBody(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    return body;
  }
}

/** One attempt of the detail page: status, our reason and the receiver's own words, each on the page. */
function attemptBlock(a: DeliveryDetail['attempts'][number]): SafeHtml {
  return html`<li class="attempt">
  <p><strong>Attempt ${a.number}</strong>${a.manual ? ' (redelivery)' : ''} · ${isoDate(a.at)} · ${a.latency_ms} ms</p>
  <p>Response status: ${a.http_status === null ? 'no answer' : html`<strong>HTTP ${a.http_status}</strong>`}</p>
  ${a.error !== null ? html`<p class="warn">Why it failed: ${a.error}</p>` : html`<p>Delivered.</p>`}
  ${
    a.response_excerpt !== null
      ? html`<p class="hint">What your endpoint answered (its first 2 KB, as text):</p><pre class="excerpt" tabindex="0">${a.response_excerpt}</pre>`
      : a.http_status !== null
        ? html`<p class="muted">The answer had no body.</p>`
        : ''
  }
</li>`;
}

/** Webhook endpoints (spec 4.4): register (secret shown once), edit, pause, delete, and their deliveries. */
export function webhookPages(pages: PageRouter): void {
  async function renderList(ctx: PageContext, extra: { created?: SafeHtml; errors?: FieldErrors; banner?: string; values?: EndpointValues; status?: number } = {}): Promise<PageResult> {
    const { data: hooks } = await ctx.deps.services.webhooks.list(ctx.principal, ctx.workspaceId);
    const rows = hooks.map(
      (w) => html`<tr>
  <th scope="row"><code>${w.url}</code>${w.description ? html`<br><span class="muted">${w.description}</span>` : ''}</th>
  <td>${w.enabled_events.join(', ')}</td>
  <td>${activeBadge(w.active)}</td>
  <td>${isoDate(w.created_at)}</td>
  <td><a href="/dashboard/webhooks/${w.id}" aria-label="Deliveries and settings of ${w.url}">Deliveries and settings</a></td>
</tr>`,
    );
    return {
      title: 'Webhooks',
      active: 'webhooks',
      status: extra.status ?? 200,
      body: html`<h1>Webhooks</h1>
<p>We send an HTTPS POST to your endpoints when a content is published, partly published or fails, and when a network connection expires.</p>
${extra.created ?? ''}
<section class="card" aria-labelledby="new-webhook-h">
  <h2 id="new-webhook-h">Add an endpoint</h2>
  ${errorBanner(extra.banner ?? extra.errors?._)}
  <form method="post" action="/dashboard/webhooks">
    ${csrfField(ctx.csrf)}
    ${endpointFields('new-webhook', extra.values ?? BLANK, extra.errors)}
    <button type="submit" class="primary">Create webhook</button>
  </form>
</section>
<section class="card" aria-labelledby="webhooks-h">
  <h2 id="webhooks-h">Endpoints</h2>
  ${table({ caption: 'Webhook endpoints of this workspace', head: ['URL', 'Events', 'Status', 'Created', 'Details'], rows, empty: 'No endpoints yet.' })}
</section>
${signingHelp(ctx.deps.webhookTimeoutMs)}`,
    };
  }

  /** The delivery query a page asks for; a bad filter or cursor in the address falls back to the newest of all. */
  function deliveryQuery(ctx: PageContext): { query: DeliveryListQuery; filter: string; refused: boolean } {
    const filter = ctx.query.status ?? 'all';
    const wanted = check(deliveryListQuerySchema, { status: filter === 'all' ? undefined : filter, cursor: optional(ctx.query.cursor ?? '') });
    if (wanted.ok) return { query: wanted.data, filter, refused: false };
    return { query: { limit: 20 }, filter: 'all', refused: true };
  }

  async function loadDeliveries(ctx: PageContext, hook: Webhook) {
    const wanted = deliveryQuery(ctx);
    try {
      return { ...wanted, page: await ctx.deps.services.webhooks.deliveries(ctx.principal, ctx.workspaceId, hook.id, wanted.query) };
    } catch (err) {
      // A cursor that decodes to nothing is a stale or edited link, not a reason for an error page.
      if (!(err instanceof ServiceError) || err.code !== 'validation_failed') throw err;
      return { query: { limit: 20 }, filter: 'all', refused: true, page: await ctx.deps.services.webhooks.deliveries(ctx.principal, ctx.workspaceId, hook.id, { limit: 20 }) };
    }
  }

  function deliveriesSection(ctx: PageContext, hook: Webhook, found: Awaited<ReturnType<typeof loadDeliveries>>): SafeHtml {
    const { page, filter, query } = found;
    const base = `/dashboard/webhooks/${hook.id}`;
    const rows = page.data.map(
      (d) => html`<tr>
  <td>${eventLabel(d)}</td>
  <td><a href="/dashboard/deliveries/${d.id}" aria-label="Request and responses of ${d.id}"><code>${d.id}</code></a></td>
  <td>${badge(d.status)}</td>
  <td>${d.attempt_count}</td>
  <td>${lastAttempt(d)}</td>
  <td>${isoDate(d.next_attempt_at)}</td>
  <td>${actionButton({ action: `/dashboard/deliveries/${d.id}/redeliver`, csrf: ctx.csrf, label: 'Redeliver', describe: `Redeliver ${d.id}` })}</td>
</tr>`,
    );
    const pending = page.data.some((d) => d.status === 'pending');
    const older = page.next_cursor === null ? null : `${base}?${new URLSearchParams({ status: filter, cursor: page.next_cursor }).toString()}`;
    return html`<section class="card" aria-labelledby="deliveries-h">
  <h2 id="deliveries-h">Deliveries</h2>
  ${found.refused ? html`<p class="warn" role="status">That filter or page link is not valid any more, so the newest deliveries are shown.</p>` : ''}
  <form method="get" action="${base}" class="actions">
    <div class="field">
      <label for="delivery-status">Status</label>
      <select id="delivery-status" name="status">
        ${STATUS_FILTERS.map((s) => html`<option value="${s.value}"${s.value === filter ? html` selected` : ''}>${s.label}</option>`)}
      </select>
    </div>
    <button type="submit">Filter</button>
  </form>
  ${table({
    id: 'deliveries',
    caption: 'Deliveries to this endpoint, newest first',
    head: ['Event', 'Delivery', 'Status', 'Attempts', 'Last attempt', 'Next attempt', 'Action'],
    rows,
    empty: query.status === undefined && query.cursor === undefined ? 'No deliveries yet: they appear here when an event this endpoint listens to happens.' : 'No deliveries match.',
    ...(pending ? { attrs: html` data-refresh-while` } : {}),
  })}
  <p class="actions">
    ${query.cursor !== undefined ? html`<a href="${base}?${new URLSearchParams({ status: filter }).toString()}">Newest deliveries</a>` : ''}
    ${older ? html`<a href="${older}">Older deliveries</a>` : ''}
  </p>
</section>`;
  }

  async function renderEndpoint(ctx: PageContext, extra: { errors?: FieldErrors; banner?: string; values?: EndpointValues; status?: number } = {}): Promise<PageResult> {
    const hook = await ctx.deps.services.webhooks.get(ctx.principal, ctx.workspaceId, ctx.params.whId!);
    const found = await loadDeliveries(ctx, hook);
    const values = extra.values ?? { url: hook.url, description: hook.description, events: hook.enabled_events, active: hook.active };
    return {
      title: 'Webhook endpoint',
      active: 'webhooks',
      status: extra.status ?? 200,
      body: html`<h1>Webhook endpoint</h1>
<p><code>${hook.url}</code> ${activeBadge(hook.active)}</p>
${hook.description ? html`<p>${hook.description}</p>` : ''}
<p class="muted">Created ${isoDate(hook.created_at)} · <a href="/dashboard/webhooks">All endpoints</a></p>
<section class="card" aria-labelledby="settings-h">
  <h2 id="settings-h">Settings</h2>
  ${errorBanner(extra.banner ?? extra.errors?._)}
  <form method="post" action="/dashboard/webhooks/${hook.id}">
    ${csrfField(ctx.csrf)}
    ${endpointFields('webhook', values, extra.errors)}
    <div class="field check">
      <input id="webhook-active" name="active" type="checkbox" value="true"${values.active ? html` checked` : ''} aria-describedby="webhook-active-hint">
      <label for="webhook-active">Active (uncheck to pause deliveries)</label>
      <p class="hint" id="webhook-active-hint">While paused, events are not queued for this endpoint.</p>
    </div>
    <button type="submit" class="primary">Save changes</button>
  </form>
</section>
<section class="card" aria-labelledby="test-h">
  <h2 id="test-h">Send a test event</h2>
  <p>Sends a signed event to this endpoint now, the way real events go, so you can check your receiver. Its body has <code>"test": true</code> and placeholder ids such as <code>test_content</code>.</p>
  <form method="post" action="/dashboard/webhooks/${hook.id}/test" class="actions">
    ${csrfField(ctx.csrf)}
    <div class="field">
      <label for="test-event-type">Event</label>
      <select id="test-event-type" name="event_type">
        ${hook.enabled_events.map((t) => html`<option value="${t}">${t}</option>`)}
      </select>
    </div>
    <button type="submit" class="primary">Send test event</button>
  </form>
</section>
${deliveriesSection(ctx, hook, found)}
<section class="card" aria-labelledby="delete-h">
  <h2 id="delete-h">Delete this endpoint</h2>
  <p>Nothing more is sent to it, and its slot on the plan is freed. The signing secret cannot be recovered.</p>
  ${actionButton({
    action: `/dashboard/webhooks/${hook.id}/delete`,
    csrf: ctx.csrf,
    label: 'Delete endpoint',
    danger: true,
    confirm: `Delete the endpoint ${hook.url}? Events will no longer be sent to it.`,
  })}
</section>
${signingHelp(ctx.deps.webhookTimeoutMs)}`,
    };
  }

  pages.page('/dashboard/webhooks', (ctx) => renderList(ctx));

  pages.action('/dashboard/webhooks', async (ctx) => {
    const values = valuesFrom(ctx);
    const input = check(createWebhookInputSchema, { url: values.url, description: values.description, enabled_events: values.events });
    if (!input.ok) return renderList(ctx, { errors: friendly(input.errors), values, status: 400 });
    let created;
    try {
      created = await ctx.deps.services.webhooks.create(ctx.principal, ctx.workspaceId, input.data);
    } catch (err) {
      const fields = fieldErrorsOf(err);
      if (fields) return renderList(ctx, { errors: friendly(fields), values, status: 400 });
      if (err instanceof ServiceError && err.code !== 'not_found') return renderList(ctx, { banner: explainServiceError(err), values, status: err.status });
      throw err;
    }
    return renderList(ctx, {
      status: 201,
      created: html`<section class="card created" aria-labelledby="created-h">
  <h2 id="created-h">Endpoint created</h2>
  <p>Events are now sent to <code>${created.url}</code>. Your receiver checks each one with this secret (see below how).</p>
  ${secretOnce({ id: 'new-webhook-secret', label: 'Signing secret', value: created.secret })}
  <p><a class="button" href="/dashboard/webhooks/${created.id}">Open the endpoint</a></p>
</section>`,
    });
  });

  pages.page('/dashboard/webhooks/:whId', (ctx) => renderEndpoint(ctx));

  pages.action('/dashboard/webhooks/:whId', async (ctx) => {
    const whId = ctx.params.whId!;
    const values = valuesFrom(ctx);
    const input = check(updateWebhookInputSchema, { url: values.url, description: values.description, enabled_events: values.events, active: values.active });
    if (!input.ok) return renderEndpoint(ctx, { errors: friendly(input.errors), values, status: 400 });
    try {
      await ctx.deps.services.webhooks.update(ctx.principal, ctx.workspaceId, whId, input.data);
    } catch (err) {
      const fields = fieldErrorsOf(err);
      if (fields) return renderEndpoint(ctx, { errors: friendly(fields), values, status: 400 });
      throw err;
    }
    return { redirect: `/dashboard/webhooks/${whId}`, flash: values.active ? 'Changes saved.' : 'Changes saved. Deliveries to this endpoint are paused.' };
  });

  pages.action('/dashboard/webhooks/:whId/delete', async (ctx) => {
    const whId = ctx.params.whId!;
    const hook = await ctx.deps.services.webhooks.get(ctx.principal, ctx.workspaceId, whId);
    await ctx.deps.services.webhooks.remove(ctx.principal, ctx.workspaceId, whId);
    // A flash is a short cookie: name the endpoint only when its address is short.
    return { redirect: '/dashboard/webhooks', flash: hook.url.length <= 200 ? `The endpoint ${hook.url} was deleted.` : 'The endpoint was deleted.' };
  });

  pages.action('/dashboard/webhooks/:whId/test', async (ctx) => {
    const whId = ctx.params.whId!;
    const input = check(sendTestEventInputSchema, { event_type: optional(ctx.form.get('event_type')) });
    const delivery = await ctx.deps.services.webhooks.sendTest(ctx.principal, ctx.workspaceId, whId, input.ok ? input.data : {});
    return { redirect: `/dashboard/deliveries/${delivery.id}`, flash: `Test event ${delivery.event_type} queued as ${delivery.id}. This page updates until it is delivered or fails.` };
  });

  pages.page('/dashboard/deliveries/:delId', async (ctx) => {
    const d = await ctx.deps.services.webhooks.deliveryDetail(ctx.principal, ctx.workspaceId, ctx.params.delId!);
    const hook = await ctx.deps.services.webhooks.get(ctx.principal, ctx.workspaceId, d.webhook_id).catch((err: unknown) => {
      if (err instanceof ServiceError && err.code === 'not_found') return null;
      throw err;
    });
    return {
      title: `Delivery ${d.id}`,
      active: 'webhooks',
      body: html`<h1>Delivery <code>${d.id}</code></h1>
<p>${eventLabel(d)} ${badge(d.status)} · created ${isoDate(d.created_at)}${d.next_attempt_at ? html` · next attempt ${isoDate(d.next_attempt_at)}` : ''}</p>
<p class="muted">${hook ? html`To <code>${hook.url}</code> · <a href="/dashboard/webhooks/${hook.id}">Back to the endpoint</a>` : html`Its endpoint was deleted. <a href="/dashboard/webhooks">All endpoints</a>`}</p>
<section class="card" aria-labelledby="attempts-h"${d.status === 'pending' ? html` data-refresh-while` : ''}>
  <h2 id="attempts-h">Attempts</h2>
  ${d.attempts.length === 0 ? html`<p class="muted">No attempt yet: the first one is made within seconds.</p>` : html`<ol class="attempts">${d.attempts.map(attemptBlock)}</ol>`}
  ${actionButton({ action: `/dashboard/deliveries/${d.id}/redeliver`, csrf: ctx.csrf, label: 'Redeliver', describe: `Redeliver ${d.id}`, fields: { from: 'delivery' } })}
</section>
<section class="card" aria-labelledby="request-h">
  <h2 id="request-h">Request</h2>
  <p>A POST to the endpoint with <code>Content-Type: application/json</code>, <code>Service-Timestamp</code> (the time of each attempt), <code>Service-Signature</code>, <code>Service-Webhook-Id: ${d.webhook_id}</code> and <code>Service-Delivery-Id: ${d.id}</code>. The body, the same at every attempt:</p>
  <pre class="excerpt" tabindex="0">${prettyBody(d.request_body)}</pre>
  <p class="hint">The signature covers the body exactly as sent (without the indentation shown here).</p>
</section>`,
    };
  });

  pages.action('/dashboard/deliveries/:delId/redeliver', async (ctx) => {
    const delivery = await ctx.deps.services.webhooks.redeliver(ctx.principal, ctx.workspaceId, ctx.params.delId!);
    const flash = `Delivery ${delivery.id} queued again.`;
    // The delivery outlives a deleted endpoint; then the list is the page left to go back to.
    try {
      await ctx.deps.services.webhooks.get(ctx.principal, ctx.workspaceId, delivery.webhook_id);
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'not_found') return { redirect: '/dashboard/webhooks', flash };
      throw err;
    }
    // From the delivery's own page, back to it; from the endpoint's list, back to the list.
    const from = ctx.form.get('from');
    return { redirect: from === 'delivery' ? `/dashboard/deliveries/${delivery.id}` : `/dashboard/webhooks/${delivery.webhook_id}`, flash };
  });
}
