import type { Kysely } from 'kysely';
import PQueue from 'p-queue';
import type { Dispatcher } from 'undici';
import { claimDueDeliveries, type DeliveryRow, recordAttempt, releaseDeliveries } from '../../db/repositories/deliveries.repo.js';
import { findWebhookById } from '../../db/repositories/webhooks.repo.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../core/clock.js';
import { newId } from '../core/ids.js';
import { open } from '../core/secret-box.js';
import { RESPONSE_EXCERPT_BYTES, responseExcerpt } from '../core/webhooks/response-excerpt.js';
import { type AttemptResult, type TransportError, afterAttempt, classify, describeAttempt } from '../core/webhooks/retry-policy.js';
import type { Logger } from '../observability/logger.js';
import { type Claim, createClaimLoop } from './claim-loop.js';
import { signPayload } from '../webhooks/verify.js';

export interface DispatcherSettings {
  concurrency: number;
  /** At most this many attempts in flight per endpoint, so one slow receiver cannot take every slot. */
  perEndpoint: number;
  /** Longer than the response timeout, so a lease never runs out under a waiting attempt. */
  leaseMs: number;
  pollMs: number;
  timeoutMs: number;
}

export interface DispatcherDeps {
  db: Kysely<Database>;
  dialect: 'sqlite' | 'postgres';
  clock: Clock;
  logger: Logger;
  secretKey: Buffer;
  /** The SSRF-guarded HTTP agent (checks every resolved address at connect time). */
  http: Dispatcher;
  allowLocal: boolean;
  settings: DispatcherSettings;
  /** Observability: an attempt was recorded, leaving the delivery in `status`. */
  onAttempt?(status: string): void;
}

function transportError(err: unknown): TransportError {
  const e = err as { name?: string; code?: string; cause?: unknown };
  if (e.name === 'OutboundBlockedError') return 'blocked';
  if (e.name === 'AbortError' || e.name === 'TimeoutError' || e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT') return 'timeout';
  if (e.code === 'ECONNREFUSED') return 'refused';
  if (e.code === 'ECONNRESET' || e.code === 'UND_ERR_SOCKET' || e.code === 'EPIPE') return 'reset';
  if (e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN') return 'dns';
  if (e.cause !== undefined && e.cause !== err) return transportError(e.cause);
  return 'other';
}

/**
 * Reads the first `limit` bytes of an answer's body within the attempt's time, then drains the rest (up to 64 KB)
 * so the socket can be reused. A body that fails midway keeps what arrived.
 */
async function readHead(body: Dispatcher.ResponseData['body'], limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const piece = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      chunks.push(piece.subarray(0, limit - size));
      size += Math.min(piece.length, limit - size);
      if (size >= limit) break;
    }
  } catch {
    // The status already arrived; a broken body only shortens the excerpt.
  }
  await body.dump({ limit: 64 * 1024 }).catch(() => undefined);
  return Buffer.concat(chunks);
}

/**
 * Delivers the outbox (spec 6.3): claims due deliveries with a lease, signs the stored body, POSTs it with a hard
 * timeout, and records the attempt and the next state in one statement checked against the lease. Redirects are
 * never followed. Work is at least once: a crash between the receiver's 2xx and our record resends, with the same
 * `Service-Delivery-Id`.
 */
export function createWebhookDispatcher(deps: DispatcherDeps) {
  const { db, clock, logger, settings } = deps;
  const global = new PQueue({ concurrency: settings.concurrency });
  const perEndpoint = new Map<string, number>();
  const running = new Set<Promise<void>>();
  const loop = createClaimLoop({
    idPrefix: 'whd_',
    what: 'deliveries',
    clock,
    logger,
    pollMs: settings.pollMs,
    leaseMs: settings.leaseMs,
    room: () => settings.concurrency - running.size,
    claim,
  });
  /**
   * Endpoints and their opened secrets, kept briefly: a burst of deliveries to one endpoint then costs one read
   * and one decryption, not one per attempt. A change (URL, pause, delete) is seen within ENDPOINT_TTL_MS.
   */
  const endpoints = new Map<string, { at: number; webhook: Awaited<ReturnType<typeof findWebhookById>>; secret: string | null }>();
  const ENDPOINT_TTL_MS = 2_000;
  async function endpoint(id: string) {
    const cached = endpoints.get(id);
    if (cached && performance.now() - cached.at < ENDPOINT_TTL_MS) return cached;
    const webhook = await findWebhookById(db, id);
    const entry = { at: performance.now(), webhook, secret: webhook ? open(deps.secretKey, webhook.secretSealed) : null };
    endpoints.set(id, entry);
    return entry;
  }

  async function attempt(delivery: DeliveryRow, lease: string): Promise<void> {
    const { webhook, secret } = await endpoint(delivery.webhookId);
    const number = delivery.attemptCount + 1;
    let result: AttemptResult;
    let latencyMs = 0;
    let excerpt: string | null = null;
    const at = clock.now();
    if (!webhook || !webhook.active) {
      // A deleted or paused endpoint: nothing is sent; the record says why.
      await recordAttempt(db, {
        id: delivery.id,
        lease,
        attemptId: newId('att_'),
        attempt: { deliveryId: delivery.id, number, manual: delivery.manual, at, httpStatus: null, latencyMs: 0, error: 'The endpoint was deleted or deactivated; nothing was sent.', responseExcerpt: null },
        status: 'failed',
        nextAttemptAt: null,
        deliveredAt: null,
      });
      return;
    }
    const url = new URL(webhook.url);
    if (url.protocol !== 'https:' && !deps.allowLocal) {
      result = { kind: 'error', error: 'blocked' };
    } else {
      const timestamp = String(Math.floor(at / 1000));
      const headers = {
        'content-type': 'application/json',
        'service-timestamp': timestamp,
        'service-signature': signPayload(secret ?? '', `${timestamp}.${delivery.body}`),
        'service-webhook-id': webhook.id,
        'service-delivery-id': delivery.id,
      };
      const started = performance.now();
      try {
        const res = await deps.http.request({
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method: 'POST',
          headers,
          body: delivery.body,
          headersTimeout: settings.timeoutMs,
          bodyTimeout: settings.timeoutMs,
          signal: AbortSignal.timeout(settings.timeoutMs),
        });
        // A bounded excerpt is kept for the endpoint's owner (the dashboard); it never reaches REST or MCP answers.
        excerpt = responseExcerpt(await readHead(res.body, RESPONSE_EXCERPT_BYTES));
        result = { kind: 'response', status: res.statusCode };
      } catch (err) {
        result = { kind: 'error', error: transportError(err) };
      }
      latencyMs = Math.round(performance.now() - started);
    }
    const verdict = classify(result);
    const next = afterAttempt(number, verdict, clock.now());
    const recorded = await recordAttempt(db, {
      id: delivery.id,
      lease,
      attemptId: newId('att_'),
      attempt: {
        deliveryId: delivery.id,
        number,
        manual: delivery.manual,
        at,
        httpStatus: result.kind === 'response' ? result.status : null,
        latencyMs,
        error: describeAttempt(result, settings.timeoutMs),
        responseExcerpt: excerpt,
      },
      status: next.status,
      nextAttemptAt: next.nextAttemptAt,
      deliveredAt: verdict === 'delivered' ? clock.now() : null,
    });
    if (!recorded) logger.warn({ delivery_id: delivery.id }, 'delivery lease lost before the attempt was recorded');
    else deps.onAttempt?.(next.status);
  }

  function track(delivery: DeliveryRow, lease: string): void {
    perEndpoint.set(delivery.webhookId, (perEndpoint.get(delivery.webhookId) ?? 0) + 1);
    const task = global
      .add(() => attempt(delivery, lease))
      .catch((err: unknown) => logger.error({ err, delivery_id: delivery.id }, 'delivery attempt failed; retried when its lease ends'))
      .finally(() => {
        const left = (perEndpoint.get(delivery.webhookId) ?? 1) - 1;
        if (left <= 0) perEndpoint.delete(delivery.webhookId);
        else perEndpoint.set(delivery.webhookId, left);
        running.delete(task);
        loop.refill();
      });
    running.add(task);
  }

  /** Starts what one claim took, within each endpoint's room; returns how many were started. */
  async function claim(c: Claim): Promise<number> {
    const busy = [...perEndpoint].filter(([, n]) => n >= settings.perEndpoint).map(([id]) => id);
    // At most one endpoint's worth per claim: rows an endpoint has no room for are released again, and claiming
    // many of them only to release them is write traffic for nothing.
    const limit = Math.min(c.limit, settings.perEndpoint);
    const claimed = await claimDueDeliveries(db, deps.dialect, { ...c, limit, busyWebhooks: busy });
    const extra: string[] = [];
    let started = 0;
    for (const d of claimed) {
      if ((perEndpoint.get(d.webhookId) ?? 0) >= settings.perEndpoint) {
        extra.push(d.id);
        continue;
      }
      track(d, c.lease);
      started += 1;
    }
    await releaseDeliveries(db, extra, c.lease);
    return started;
  }

  return {
    tick: loop.tick,
    /** Attempts every due delivery until none is due (tests drive the clock with it). */
    async drain(): Promise<void> {
      for (;;) {
        const started = await loop.tick();
        await Promise.all([...running]);
        if (started === 0 && running.size === 0) return;
      }
    },
    start(): void {
      loop.start();
    },
    /** Stops claiming and waits for attempts in flight (each ends within the response timeout). */
    async stop(): Promise<void> {
      loop.stop();
      await Promise.all([...running]);
    },
  };
}
