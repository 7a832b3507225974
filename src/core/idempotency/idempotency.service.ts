import type { Kysely } from 'kysely';
import {
  completeIdempotencyKey,
  deleteIdempotencyKey,
  findIdempotencyKey,
  takeOverIdempotencyKey,
  tryInsertIdempotencyKey,
} from '../../../db/repositories/idempotency.repo.js';
import type { Database } from '../../../db/schema.js';
import type { Clock } from '../clock.js';
import { type ErrorCode, ServiceError } from '../errors.js';
import { sha256Hex } from '../ids.js';

/** Keys are kept a day (spec 4.3 leaves it open; a day covers any sane client retry policy). */
const KEY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * How long an in-flight holder keeps the key before another request may assume its process died: longer than
 * the slowest content creation (media probes time out at 10 s each), short enough that a client retrying after a
 * crash is served within a minute.
 */
const IN_FLIGHT_LOCK_MS = 30_000;
/** How long a duplicate waits for the first request to finish before answering 409. */
const WAIT_FOR_FIRST_MS = 10_000;

type Stored = { ok: true; value: unknown } | { ok: false; code: ErrorCode; message: string; extra: Record<string, unknown> };

/** What an `Idempotency-Key` may be: 1 to 255 printable ASCII characters. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export interface IdempotentResult<T> {
  replayed: boolean;
  /** The value of the first execution, or its error, which the caller rethrows. */
  outcome: { ok: true; value: T } | { ok: false; error: ServiceError };
}

/** The value a request hash is computed from: key order does not matter, content does. */
export function requestHash(value: unknown): string {
  const canonical = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(canonical);
    if (v !== null && typeof v === 'object') {
      return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Record<string, unknown>)[k])]));
    }
    return v;
  };
  return sha256Hex(JSON.stringify(canonical(value) ?? null));
}

export type IdempotencyService = ReturnType<typeof createIdempotencyService>;

export function createIdempotencyService(deps: { db: Kysely<Database>; clock: Clock; sleep?: (ms: number) => Promise<void> }) {
  const { db, clock } = deps;
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));

  function fromStored<T>(text: string): IdempotentResult<T>['outcome'] {
    const stored = JSON.parse(text) as Stored;
    return stored.ok ? { ok: true, value: stored.value as T } : { ok: false, error: new ServiceError(stored.code, stored.message, stored.extra) };
  }

  return {
    /**
     * Runs `work` at most once per (workspace, key) within a day (spec 4.3). The same key with the same request
     * replays the first outcome, errors included (except server_error, which may be retried); with a different
     * request it fails `idempotency_conflict`. A duplicate that arrives while the first runs waits for it.
     * `work` receives `record`, to store its value inside its own transaction so that the effect and the stored
     * answer commit together.
     * @throws ServiceError `idempotency_conflict`.
     */
    async run<T>(
      workspaceId: string,
      key: string,
      hash: string,
      work: (record: (tx: Kysely<Database>, value: T) => Promise<void>) => Promise<T>,
    ): Promise<IdempotentResult<T>> {
      const started = performance.now();
      for (;;) {
        const now = clock.now();
        const claim = { workspaceId, key, requestHash: hash, state: 'in_flight' as const, outcome: null, lockedUntil: now + IN_FLIGHT_LOCK_MS, expiresAt: now + KEY_TTL_MS };
        const owner = (await tryInsertIdempotencyKey(db, claim, now)) || (await takeOverIdempotencyKey(db, claim, now));
        if (owner) break;
        const row = await findIdempotencyKey(db, workspaceId, key);
        if (!row) continue; // deleted under us (the first request failed with a fault): try to take it
        if (row.requestHash !== hash) {
          throw new ServiceError('idempotency_conflict', 'This Idempotency-Key was already used with a different request body. Use a new key or the same body.');
        }
        if (row.state === 'done' && row.outcome !== null) return { replayed: true, outcome: fromStored<T>(row.outcome) };
        if (performance.now() - started > WAIT_FOR_FIRST_MS) {
          throw new ServiceError('idempotency_conflict', 'A request with this Idempotency-Key is still in progress. Retry shortly with the same key.');
        }
        await sleep(25);
      }

      let recorded = false;
      const record = async (tx: Kysely<Database>, value: T) => {
        await completeIdempotencyKey(tx, workspaceId, key, JSON.stringify({ ok: true, value } satisfies Stored));
        recorded = true;
      };
      try {
        const value = await work(record);
        if (!recorded) await completeIdempotencyKey(db, workspaceId, key, JSON.stringify({ ok: true, value } satisfies Stored));
        return { replayed: false, outcome: { ok: true, value } };
      } catch (err) {
        if (err instanceof ServiceError && err.code !== 'server_error') {
          const stored: Stored = { ok: false, code: err.code, message: err.message, extra: err.extra };
          await completeIdempotencyKey(db, workspaceId, key, JSON.stringify(stored));
          return { replayed: false, outcome: { ok: false, error: err } };
        }
        await deleteIdempotencyKey(db, workspaceId, key);
        throw err;
      }
    },
  };
}
