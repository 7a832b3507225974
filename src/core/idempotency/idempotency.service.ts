import type { Kysely } from 'kysely';
import {
  completeIdempotencyKey,
  findIdempotencyKey,
  type IdempotencyClaim,
  releaseIdempotencyKey,
  renewIdempotencyKey,
  takeOverIdempotencyKey,
  tryInsertIdempotencyKey,
} from '../../../db/repositories/idempotency.repo.js';
import type { Database } from '../../../db/schema.js';
import type { Clock } from '../clock.js';
import { type ErrorCode, ServiceError } from '../errors.js';
import { newId, sha256Hex } from '../ids.js';
import { keepLease, realTimers, type Timers } from '../lease.js';
import { releasesKey } from './outcome-policy.js';

/** How long claims last and how a duplicate waits; every duration is injectable so tests run in milliseconds. */
export interface IdempotencySettings {
  /** Keys are kept a day (spec 4.3 leaves it open; a day covers any sane client retry policy). */
  keyTtlMs: number;
  /**
   * The lease of an in-flight claim. The holder renews it every `heartbeatMs`, so it never runs out under a
   * running request; it only bounds how long a key stays blocked after its process died. Content creation itself
   * finishes well inside it (its media probes share one 10 s deadline).
   */
  lockMs: number;
  /** How often a running holder renews its lease: a few beats fit in one lease, so one lost beat is harmless. */
  heartbeatMs: number;
  /** How long a duplicate waits for the running first request before answering 409 "still in progress". */
  waitMs: number;
  /** How often a waiting duplicate looks at the key again. */
  pollMs: number;
}

export const DEFAULT_IDEMPOTENCY_SETTINGS: IdempotencySettings = {
  keyTtlMs: 24 * 60 * 60 * 1000,
  lockMs: 60_000,
  heartbeatMs: 15_000,
  waitMs: 10_000,
  pollMs: 25,
};

type Stored = { ok: true; value: unknown } | { ok: false; code: ErrorCode; message: string; extra: Record<string, unknown> };

export interface IdempotentResult<T> {
  replayed: boolean;
  /** The value of the first execution, or its error, which the caller rethrows. */
  outcome: { ok: true; value: T } | { ok: false; error: ServiceError };
}

/** Stores the holder's answer inside the transaction that makes its effects (see `run`). */
export type RecordOutcome<T> = (tx: Kysely<Database>, value: T) => Promise<void>;

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

/** Thrown by `record` when this request no longer holds its key: its transaction must roll back. */
class ClaimLost extends Error {
  constructor() {
    super('the idempotency claim was taken over');
    this.name = 'ClaimLost';
  }
}

const conflict = () =>
  new ServiceError('idempotency_conflict', 'This Idempotency-Key was already used with a different request body. Use a new key or the same body.');
const inProgress = () =>
  new ServiceError('idempotency_conflict', 'A request with this Idempotency-Key is still in progress. Retry shortly with the same key.');

export type IdempotencyService = ReturnType<typeof createIdempotencyService>;

export function createIdempotencyService(deps: {
  db: Kysely<Database>;
  clock: Clock;
  sleep?: (ms: number) => Promise<void>;
  timers?: Timers;
  settings?: Partial<IdempotencySettings>;
}) {
  const { db, clock } = deps;
  const settings: IdempotencySettings = { ...DEFAULT_IDEMPOTENCY_SETTINGS, ...deps.settings };
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const timers = deps.timers ?? realTimers;

  function fromStored<T>(text: string): IdempotentResult<T>['outcome'] {
    const stored = JSON.parse(text) as Stored;
    return stored.ok ? { ok: true, value: stored.value as T } : { ok: false, error: new ServiceError(stored.code, stored.message, stored.extra) };
  }

  /**
   * Takes the key for this request, or answers without running: the stored outcome of the same request, 409 for
   * a different body, 409 "in progress" when the holder still runs after `waitMs`. A key is taken over only when
   * its holder is provably gone (lease expired without renewal) and only for the identical body.
   */
  async function claim<T>(workspaceId: string, key: string, hash: string, ownerToken: string): Promise<{ owner: true } | { owner: false; answer: IdempotentResult<T> }> {
    const started = performance.now();
    for (;;) {
      const now = clock.now();
      const wanted: IdempotencyClaim = { workspaceId, key, requestHash: hash, ownerToken, lockedUntil: now + settings.lockMs, expiresAt: now + settings.keyTtlMs };
      if ((await tryInsertIdempotencyKey(db, wanted, now)) || (await takeOverIdempotencyKey(db, wanted, now))) return { owner: true };
      const row = await findIdempotencyKey(db, workspaceId, key);
      if (!row) continue; // released under us (the first request failed recoverably): try to take it
      // A key past its day that could not be taken is held by a running request: it is that request's, not ours.
      if (row.requestHash !== hash) throw conflict();
      if (row.state === 'done' && row.outcome !== null) return { owner: false, answer: { replayed: true, outcome: fromStored<T>(row.outcome) } };
      if (performance.now() - started >= settings.waitMs) throw inProgress();
      await sleep(settings.pollMs);
    }
  }

  /**
   * After losing the key to a takeover (this holder stalled past its lease): the taker's stored answer once it has
   * one, else 409 "in progress". Never claims: our own effects were rolled back, the taker's are the ones.
   */
  async function outcomeOfTaker<T>(workspaceId: string, key: string, hash: string): Promise<IdempotentResult<T>> {
    const started = performance.now();
    for (;;) {
      const row = await findIdempotencyKey(db, workspaceId, key);
      if (row && row.requestHash !== hash) throw conflict();
      if (row?.state === 'done' && row.outcome !== null) return { replayed: true, outcome: fromStored<T>(row.outcome) };
      if (!row || performance.now() - started >= settings.waitMs) throw inProgress();
      await sleep(settings.pollMs);
    }
  }

  return {
    settings,

    /**
     * Runs `work` at most once per (workspace, key) within a day (spec 4.3). The same key with the same request
     * replays the first outcome; with a different request it fails `idempotency_conflict`. A duplicate that
     * arrives while the first runs waits for it, then answers `idempotency_conflict` "still in progress": a
     * running request is never taken over, because its heartbeat keeps renewing its claim.
     *
     * `work` receives `record`, to store its value inside its own transaction: the write is conditional on this
     * request still holding the key, and throws otherwise, so the effect commits only together with the stored
     * answer and two requests can never both create. Errors that the caller can fix and retry (see
     * `releasesKey`), and faults, release the key instead of being stored; other expected errors are stored.
     * @throws ServiceError `idempotency_conflict`; rethrows faults of `work`.
     */
    async run<T>(workspaceId: string, key: string, hash: string, work: (record: RecordOutcome<T>) => Promise<T>): Promise<IdempotentResult<T>> {
      const ownerToken = newId('idem_');
      const claimed = await claim<T>(workspaceId, key, hash, ownerToken);
      if (!claimed.owner) return claimed.answer;

      // The claim outlives any slow request and expires only when its process stopped renewing it (crashed, or
      // cut off from the database for a whole lease). A failed renewal is simply tried at the next beat.
      const lease = keepLease(() => renewIdempotencyKey(db, workspaceId, key, ownerToken, clock.now() + settings.lockMs), settings.heartbeatMs, timers);
      let recorded = false;
      const record: RecordOutcome<T> = async (tx, value) => {
        if (!(await completeIdempotencyKey(tx, workspaceId, key, ownerToken, JSON.stringify({ ok: true, value } satisfies Stored)))) throw new ClaimLost();
        recorded = true;
      };
      try {
        const value = await work(record);
        // Work that does not record commits its effects first; the answer is then stored if the key is still ours.
        if (!recorded) await completeIdempotencyKey(db, workspaceId, key, ownerToken, JSON.stringify({ ok: true, value } satisfies Stored));
        return { replayed: false, outcome: { ok: true, value } };
      } catch (err) {
        if (err instanceof ClaimLost) {
          // Our transaction rolled back: the request that took the key over is the one that counts.
          return await outcomeOfTaker<T>(workspaceId, key, hash);
        }
        if (err instanceof ServiceError && !releasesKey(err)) {
          const stored: Stored = { ok: false, code: err.code, message: err.message, extra: err.extra };
          await completeIdempotencyKey(db, workspaceId, key, ownerToken, JSON.stringify(stored));
          return { replayed: false, outcome: { ok: false, error: err } };
        }
        await releaseIdempotencyKey(db, workspaceId, key, ownerToken);
        if (err instanceof ServiceError) return { replayed: false, outcome: { ok: false, error: err } };
        throw err;
      } finally {
        await lease.stop();
      }
    },
  };
}
