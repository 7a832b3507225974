import type { Kysely } from 'kysely';
import { type DeliveryRow, findDelivery, insertDeliveries, listAttempts, listDeliveries, requestRedelivery } from '../../../db/repositories/deliveries.repo.js';
import {
  deleteWebhook,
  findWebhook,
  insertWebhook,
  listWebhooks,
  updateWebhook,
  type WebhookRow,
} from '../../../db/repositories/webhooks.repo.js';
import type { Database } from '../../../db/schema.js';
import { checkSignature, type SignatureVerdict } from '../../webhooks/signature.js';
import { type Clock, toIso } from '../clock.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { ServiceError } from '../errors.js';
import { newId, newSecret, newTimeOrderedId } from '../ids.js';
import type { MetersService } from '../meters/meters.service.js';
import type { Permission } from '../permissions/roles.js';
import { EVENT_TYPES, type EventType } from '../events/events.js';
import type { Principal } from '../principal.js';
import { seal } from '../secret-box.js';
import { assertWorkspaceAccess } from '../workspaces/access.js';
import { recordAudit } from '../audit/record.js';
import { testEventPayload } from './test-event.js';
import type {
  CreatedWebhook,
  CreateWebhookInput,
  Delivery,
  DeliveryDetail,
  DeliveryListQuery,
  SendTestEventInput,
  UpdateWebhookInput,
  Webhook,
  WebhookList,
} from './webhooks.schema.js';

function render(row: WebhookRow): Webhook {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    enabled_events: row.enabledEvents as Webhook['enabled_events'],
    active: row.active,
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
  };
}

/** Whether a stored body is a test event's (its JSON carries `"test": true` at the top). */
function isTest(body: string): boolean {
  try {
    return (JSON.parse(body) as { test?: unknown }).test === true;
  } catch {
    return false;
  }
}

async function renderDeliveries(db: Kysely<Database>, rows: DeliveryRow[]): Promise<Delivery[]> {
  return (await renderDetails(db, rows)).map(({ request_body: _body, ...d }) => ({
    ...d,
    attempts: d.attempts.map(({ response_excerpt: _excerpt, ...a }) => a),
  }));
}

async function renderDetails(db: Kysely<Database>, rows: DeliveryRow[]): Promise<DeliveryDetail[]> {
  const attempts = await listAttempts(db, rows.map((r) => r.id));
  return rows.map((r) => ({
    id: r.id,
    webhook_id: r.webhookId,
    event_id: r.eventId,
    event_type: r.eventType as Delivery['event_type'],
    status: r.status as Delivery['status'],
    attempt_count: r.attemptCount,
    next_attempt_at: r.status === 'pending' && r.nextAttemptAt !== null ? toIso(r.nextAttemptAt) : null,
    created_at: toIso(r.createdAt),
    delivered_at: r.deliveredAt === null ? null : toIso(r.deliveredAt),
    attempts: attempts
      .filter((a) => a.deliveryId === r.id)
      .map((a) => ({
        number: a.number,
        at: toIso(a.at),
        manual: a.manual,
        http_status: a.httpStatus,
        latency_ms: a.latencyMs,
        error: a.error,
        response_excerpt: a.responseExcerpt,
      })),
    test: isTest(r.body),
    request_body: r.body,
  }));
}

function webhookNotFound(id: string): ServiceError {
  return new ServiceError('not_found', `Webhook endpoint ${id} was not found in this workspace.`);
}

/** Checks the `url` rule of spec 2.3: public HTTPS (connect-time checks happen again when delivering). */
export type UrlRule = (url: string) => string | null;

export type WebhooksService = ReturnType<typeof createWebhooksService>;

export function createWebhooksService(deps: { db: Kysely<Database>; clock: Clock; meters: MetersService; secretKey: Buffer; checkUrl: UrlRule }) {
  const { db, clock, meters } = deps;

  function assertUrl(url: string | undefined): void {
    if (url === undefined) return;
    const problem = deps.checkUrl(url);
    if (problem !== null) throw new ServiceError('validation_failed', `url: ${problem}`, { fields: [{ path: 'url', message: problem }] });
  }

  async function get(principal: Principal, workspaceId: string, id: string, permission: Permission = 'webhooks.read'): Promise<WebhookRow> {
    assertWorkspaceAccess(principal, workspaceId, permission);
    const row = await findWebhook(db, workspaceId, id);
    if (!row) throw webhookNotFound(id);
    return row;
  }

  async function deliveryPage(principal: Principal, workspaceId: string, webhookId: string, query: DeliveryListQuery) {
    await get(principal, workspaceId, webhookId);
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const statuses = query.status === undefined ? undefined : query.status === 'failed' ? ['failed', 'dead'] : [query.status];
    const rows = await listDeliveries(db, webhookId, { statuses, after, limit: query.limit + 1 });
    const page = rows.slice(0, query.limit);
    const last = page[page.length - 1];
    return { rows: page, next_cursor: rows.length > query.limit && last ? encodeCursor(last) : null };
  }

  return {
    /**
     * Spec 4.4: registers an endpoint; its `whsec_` secret is returned here only and stored sealed (it must be
     * read back to sign). Counted on the `webhooks` stock meter.
     * @throws ServiceError `validation_failed` (url), `limit_reached`.
     */
    async create(principal: Principal, workspaceId: string, input: CreateWebhookInput): Promise<CreatedWebhook> {
      assertWorkspaceAccess(principal, workspaceId, 'webhooks.manage');
      assertUrl(input.url);
      const now = clock.now();
      const secret = newSecret('whsec_', 24);
      const row: WebhookRow = {
        id: newId('wh_'),
        workspaceId,
        url: input.url,
        description: input.description,
        enabledEvents: input.enabled_events,
        active: true,
        secretSealed: seal(deps.secretKey, secret),
        createdAt: now,
        updatedAt: now,
      };
      await db.transaction().execute(async (tx) => {
        await meters.consume(tx, workspaceId, [{ meter: 'webhooks', amount: 1 }]);
        await insertWebhook(tx, row);
        // The signing secret is never part of the entry.
        await recordAudit(tx, principal, 'webhook.created', { type: 'webhook', id: row.id, label: row.url }, now, { enabled_events: row.enabledEvents });
      });
      return { ...render(row), secret };
    },

    /** Every endpoint of the workspace, in the list envelope every door sends (`{data}`). */
    async list(principal: Principal, workspaceId: string): Promise<WebhookList> {
      assertWorkspaceAccess(principal, workspaceId, 'webhooks.read');
      return { data: (await listWebhooks(db, workspaceId)).map(render) };
    },

    /** @throws ServiceError `not_found`. */
    async get(principal: Principal, workspaceId: string, id: string): Promise<Webhook> {
      return render(await get(principal, workspaceId, id));
    },

    /** @throws ServiceError `not_found`, `validation_failed`. */
    async update(principal: Principal, workspaceId: string, id: string, input: UpdateWebhookInput): Promise<Webhook> {
      const before = await get(principal, workspaceId, id, 'webhooks.manage');
      assertUrl(input.url);
      const changes = { url: input.url, description: input.description, enabledEvents: input.enabled_events, active: input.active };
      const now = clock.now();
      await db.transaction().execute(async (tx) => {
        if (!(await updateWebhook(tx, workspaceId, id, changes, now))) throw webhookNotFound(id);
        const changed = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
        await recordAudit(tx, principal, 'webhook.updated', { type: 'webhook', id, label: input.url ?? before.url }, now, { changes: changed, ...(input.url !== undefined && input.url !== before.url ? { previous_url: before.url } : {}) });
      });
      return render(await get(principal, workspaceId, id));
    },

    /** Deletes an endpoint and frees its slot; its delivery records stay readable through their ids. */
    async remove(principal: Principal, workspaceId: string, id: string): Promise<void> {
      assertWorkspaceAccess(principal, workspaceId, 'webhooks.manage');
      const now = clock.now();
      await db.transaction().execute(async (tx) => {
        const before = await findWebhook(tx, workspaceId, id);
        if (!(await deleteWebhook(tx, workspaceId, id, now))) throw webhookNotFound(id);
        await meters.release(tx, workspaceId, 'webhooks', 1);
        await recordAudit(tx, principal, 'webhook.deleted', { type: 'webhook', id, label: before?.url ?? null }, now);
      });
    },

    /**
     * Deliveries of an endpoint, newest first; `status: failed` means "will not be retried automatically":
     * failed and dead.
     * @throws ServiceError `not_found`.
     */
    async deliveries(principal: Principal, workspaceId: string, webhookId: string, query: DeliveryListQuery): Promise<{ data: Delivery[]; next_cursor: string | null }> {
      const { rows, next_cursor } = await deliveryPage(principal, workspaceId, webhookId, query);
      return { data: await renderDeliveries(db, rows), next_cursor };
    },

    /**
     * The same page as `deliveries`, with each body as signed and each attempt's excerpt of the receiver's
     * answer: for the endpoint's owner in the dashboard only (the excerpt is the receiver's text).
     * @throws ServiceError `not_found`.
     */
    async deliveryDetails(principal: Principal, workspaceId: string, webhookId: string, query: DeliveryListQuery): Promise<{ data: DeliveryDetail[]; next_cursor: string | null }> {
      const { rows, next_cursor } = await deliveryPage(principal, workspaceId, webhookId, query);
      return { data: await renderDetails(db, rows), next_cursor };
    },

    /**
     * Queues a test event for one endpoint, delivered by the dispatcher like any other: signed, with
     * retries and redeliver. Spec 6.1 closes the list of event types, so the payload imitates one of them
     * (`event_type`, else the endpoint's first enabled one) and is marked `"test": true`, with placeholder ids
     * (`test_…`) that name nothing real. No event is recorded for it and nothing is counted. A paused endpoint
     * gets the delivery too; its attempt then says nothing was sent.
     * @throws ServiceError `not_found`.
     */
    async sendTest(principal: Principal, workspaceId: string, webhookId: string, input: SendTestEventInput = {}): Promise<Delivery> {
      const hook = await get(principal, workspaceId, webhookId, 'webhooks.manage');
      // A test imitates one of the spec's events: the endpoint's first enabled one of those.
      const type = input.event_type ?? (hook.enabledEvents.find((t): t is EventType => (EVENT_TYPES as readonly string[]).includes(t))) ?? 'content.published';
      const now = clock.now();
      const payload = testEventPayload({ eventId: newId('evt_'), type, workspaceId, now });
      const id = newTimeOrderedId('del_', now);
      await insertDeliveries(db, [{ id, workspaceId, webhookId, eventId: payload.id, eventType: type, body: JSON.stringify(payload), now }]);
      return this.delivery(principal, workspaceId, id);
    },

    /** @throws ServiceError `not_found`. */
    async delivery(principal: Principal, workspaceId: string, deliveryId: string): Promise<Delivery> {
      assertWorkspaceAccess(principal, workspaceId, 'webhooks.read');
      const row = await findDelivery(db, workspaceId, deliveryId);
      if (!row) throw new ServiceError('not_found', `Delivery ${deliveryId} was not found in this workspace.`);
      const [rendered] = await renderDeliveries(db, [row]);
      return rendered!;
    },

    /**
     * One delivery with its signed body and each attempt's excerpt of the receiver's answer, for the endpoint's
     * owner in the dashboard (see `deliveryDetails`).
     * @throws ServiceError `not_found`.
     */
    async deliveryDetail(principal: Principal, workspaceId: string, deliveryId: string): Promise<DeliveryDetail> {
      assertWorkspaceAccess(principal, workspaceId, 'webhooks.read');
      const row = await findDelivery(db, workspaceId, deliveryId);
      if (!row) throw new ServiceError('not_found', `Delivery ${deliveryId} was not found in this workspace.`);
      const [rendered] = await renderDetails(db, [row]);
      return rendered!;
    },

    /**
     * Spec 4.4: a new attempt now, whatever the delivery's status (dead ones above all), with the same `del_`
     * id. The attempt itself is made by the dispatcher. The 202 always leads to an attempt that starts after
     * it: asked while an attempt is in flight, the request is kept (a mark that attempt's outcome does not
     * clear) and one more attempt follows; several requests before the next attempt make that one attempt.
     * @throws ServiceError `not_found`.
     */
    async redeliver(principal: Principal, workspaceId: string, deliveryId: string): Promise<Delivery> {
      assertWorkspaceAccess(principal, workspaceId, 'webhooks.manage');
      if (!(await requestRedelivery(db, workspaceId, deliveryId, clock.now()))) {
        throw new ServiceError('not_found', `Delivery ${deliveryId} was not found in this workspace.`);
      }
      return this.delivery(principal, workspaceId, deliveryId);
    },

    /** Spec 4.4 `POST /api/v1/webhooks/verify`: the reference check, against the service clock. */
    verify(input: { secret: string; signature_header: string; payload: string; tolerance_seconds: number }): SignatureVerdict {
      return checkSignature({
        secret: input.secret,
        signatureHeader: input.signature_header,
        payload: input.payload,
        toleranceSeconds: input.tolerance_seconds,
        nowSeconds: Math.floor(clock.now() / 1000),
      });
    },
  };
}
