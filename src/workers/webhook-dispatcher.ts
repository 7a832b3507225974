import type { Kysely } from 'kysely';
import type { Dispatcher } from 'undici';
import { type AttemptRecord, claimDueDeliveries, type DeliveryRow, endpointsWithPending, recordAttempts } from '../../db/repositories/deliveries.repo.js';
import { findWebhookById } from '../../db/repositories/webhooks.repo.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../core/clock.js';
import { newTimeOrderedId } from '../core/ids.js';
import { open } from '../core/secret-box.js';
import { RESPONSE_EXCERPT_BYTES, responseExcerpt } from '../core/webhooks/response-excerpt.js';
import { type AttemptResult, type TransportError, afterAttempt, classify, describeAttempt } from '../core/webhooks/retry-policy.js';
import type { Logger } from '../observability/logger.js';
import { type Claim, createClaimLoop } from './claim-loop.js';
import { signPayload } from '../webhooks/signature.js';

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

/**
 * The reason an attempt's timer aborts it with: one shared value, since building an error (a DOMException with its
 * stack, as `AbortSignal.timeout` does) per abandoned attempt is event-loop time a dead receiver would cost everyone.
 */
const TIMED_OUT = Object.assign(new Error('the attempt ran out of time'), { name: 'TimeoutError' });

/** How many endpoints one claim looks at: each is one index probe, and one pick in the claiming statement. */
const ENDPOINTS_PER_CLAIM = 100;

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
 * timeout, and records the attempt and the next state checked against the lease. Redirects are never followed.
 * Work is at least once: a crash between the receiver's 2xx and our record resends, with the same
 * `Service-Delivery-Id`.
 *
 * Throughput and isolation: claims go endpoint by endpoint, each endpoint getting at most its free room
 * (`perEndpoint` minus its attempts in hand), so a receiver that never answers holds at most `perEndpoint` slots
 * and its backlog is never read, claimed or released; attempts that end together are recorded in one
 * transaction, and the slots they free are claimed again together.
 */
export function createWebhookDispatcher(deps: DispatcherDeps) {
  const { db, clock, logger, settings } = deps;
  /** Attempts in hand per endpoint, from claim until their record is written. */
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

  /** Records waiting for the next batch, each with the promise of its attempt. */
  const unrecorded: { record: AttemptRecord; settle(recorded: boolean): void; fail(err: unknown): void }[] = [];
  let flushing = false;

  /** Writes every waiting record in one transaction, again while more arrived meanwhile. */
  async function flush(): Promise<void> {
    // Attempts that end in the same turn of the event loop join this batch.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (unrecorded.length > 0) {
      const batch = unrecorded.splice(0);
      try {
        const kept = await recordAttempts(db, batch.map((b) => b.record));
        batch.forEach((b, i) => b.settle(kept[i] === true));
      } catch (err) {
        for (const b of batch) b.fail(err);
      }
    }
    flushing = false;
  }

  function record(r: AttemptRecord): Promise<boolean> {
    return new Promise<boolean>((settle, fail) => {
      unrecorded.push({ record: r, settle, fail });
      if (!flushing) {
        flushing = true;
        void flush();
      }
    });
  }

  /** Sends one attempt (nothing for a deleted or paused endpoint) and says what to record. */
  async function send(delivery: DeliveryRow, lease: string): Promise<AttemptRecord> {
    const { webhook, secret } = await endpoint(delivery.webhookId);
    const number = delivery.attemptCount + 1;
    const at = clock.now();
    const base = { id: delivery.id, lease, attemptId: newTimeOrderedId('att_', at) };
    if (!webhook || !webhook.active) {
      // A deleted or paused endpoint: nothing is sent; the record says why.
      return {
        ...base,
        attempt: { deliveryId: delivery.id, number, manual: delivery.manual, at, httpStatus: null, latencyMs: 0, error: 'The endpoint was deleted or deactivated; nothing was sent.', responseExcerpt: null },
        status: 'failed',
        nextAttemptAt: null,
        deliveredAt: null,
      };
    }
    let result: AttemptResult;
    let latencyMs = 0;
    let excerpt: string | null = null;
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
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(TIMED_OUT), settings.timeoutMs);
      try {
        const res = await deps.http.request({
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method: 'POST',
          headers,
          body: delivery.body,
          headersTimeout: settings.timeoutMs,
          bodyTimeout: settings.timeoutMs,
          signal: abort.signal,
        });
        // A bounded excerpt is kept for the endpoint's owner (the dashboard); it never reaches REST or MCP answers.
        excerpt = responseExcerpt(await readHead(res.body, RESPONSE_EXCERPT_BYTES));
        result = { kind: 'response', status: res.statusCode };
      } catch (err) {
        result = { kind: 'error', error: transportError(err) };
      } finally {
        clearTimeout(timer);
      }
      latencyMs = Math.round(performance.now() - started);
    }
    const verdict = classify(result);
    const next = afterAttempt(number, verdict, clock.now());
    return {
      ...base,
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
    };
  }

  async function attempt(delivery: DeliveryRow, lease: string): Promise<void> {
    const r = await send(delivery, lease);
    if (!(await record(r))) logger.warn({ delivery_id: delivery.id }, 'delivery lease lost before the attempt was recorded');
    else deps.onAttempt?.(r.status);
  }

  function track(delivery: DeliveryRow, lease: string): void {
    perEndpoint.set(delivery.webhookId, (perEndpoint.get(delivery.webhookId) ?? 0) + 1);
    const task = attempt(delivery, lease)
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

  /** Where the next claim starts looking among endpoints (in id order), so every endpoint gets its turn. */
  let cursor = '';

  /** Endpoints with pending deliveries, from the cursor on and then from the start again, at most `limit`. */
  async function candidates(limit: number): Promise<string[]> {
    const found = await endpointsWithPending(db, deps.dialect, { after: cursor, limit });
    if (found.length < limit && cursor !== '') {
      const wrapped = await endpointsWithPending(db, deps.dialect, { after: '', limit: limit - found.length });
      for (const id of wrapped) if (id <= cursor && !found.includes(id)) found.push(id);
    }
    return found;
  }

  /**
   * Claims, endpoint by endpoint, what fits in each endpoint's room and in the free slots; starts it. One claim at
   * a time (a poll and refills may ask at once): a request that arrives during a claim makes one more claim right
   * after it, which reads the rooms the first has filled and takes its lease from its own start.
   */
  let claiming: Promise<number> | undefined;
  let claimAgain = false;
  function claim(c: Claim): Promise<number> {
    if (claiming) {
      claimAgain = true;
      return Promise.resolve(0);
    }
    const run = (async () => {
      try {
        let started = await claimNow(c.lease);
        for (let round = 1; claimAgain && !loop.stopping; round += 1) {
          claimAgain = false;
          started += await claimNow(`${c.lease}.${round}`);
        }
        return started;
      } finally {
        claiming = undefined;
      }
    })();
    claiming = run;
    return run;
  }

  async function claimNow(lease: string): Promise<number> {
    let room = settings.concurrency - running.size;
    if (room <= 0) return 0;
    const looked = Math.min(ENDPOINTS_PER_CLAIM, settings.concurrency);
    const found = await candidates(looked);
    const wants: { webhookId: string; limit: number }[] = [];
    for (const webhookId of found) {
      const free = settings.perEndpoint - (perEndpoint.get(webhookId) ?? 0);
      if (free <= 0) continue;
      const limit = Math.min(free, room);
      wants.push({ webhookId, limit });
      room -= limit;
      // The next claim starts after the last endpoint served: the ones this claim had no slot for come first.
      cursor = webhookId;
      if (room === 0) break;
    }
    if (room > 0) cursor = found.length === looked ? (found.at(-1) ?? '') : '';
    if (wants.length === 0) return 0;
    // The lease runs from now, not from when the claim was asked for.
    const now = clock.now();
    const claimed = await claimDueDeliveries(db, deps.dialect, { now, lease, lockedUntil: now + settings.leaseMs, endpoints: wants });
    for (const d of claimed) track(d, lease);
    return claimed.length;
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
      // A claim under way may still start attempts: wait for it, then for every attempt.
      await claiming?.catch(() => 0);
      await Promise.all([...running]);
    },
  };
}
