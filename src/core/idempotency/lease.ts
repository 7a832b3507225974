import type { Kysely } from 'kysely';
import { renewIdempotencyKey } from '../../../db/repositories/idempotency.repo.js';
import type { Database } from '../../../db/schema.js';
import type { Clock } from '../clock.js';

/** Repeating timers, injected so tests drive the heartbeat without waiting on real time. */
export interface Timers {
  /** Calls `tick` every `ms` until the returned function is called. */
  every(ms: number, tick: () => void): () => void;
}

/** Real timers; unref'd so a pending heartbeat never keeps a stopping process alive. */
export const realTimers: Timers = {
  every(ms, tick) {
    const timer = setInterval(tick, ms);
    timer.unref();
    return () => clearInterval(timer);
  },
};

export interface Lease {
  /** Stops renewing and waits for a renewal under way, so nothing touches the key after the holder is done. */
  stop(): Promise<void>;
}

/**
 * Keeps a claim alive while its holder runs: every `heartbeatMs` the lease is pushed to `now + lockMs`, on the
 * condition that `ownerToken` still holds the key in flight. A claim therefore outlives any slow request, and
 * expires only when its process stopped renewing it (crashed, or cut off from the database for `lockMs`).
 * A failed renewal (the database briefly away) is retried at the next beat; a refused one (taken over or already
 * finished) ends the heartbeat: the holder's fenced write then decides.
 */
export function holdLease(args: {
  db: Kysely<Database>;
  clock: Clock;
  timers: Timers;
  workspaceId: string;
  key: string;
  ownerToken: string;
  lockMs: number;
  heartbeatMs: number;
}): Lease {
  const { db, clock, workspaceId, key, ownerToken, lockMs } = args;
  let renewing: Promise<void> | null = null;
  let stopped = false;
  const cancel = args.timers.every(args.heartbeatMs, () => {
    if (stopped || renewing) return;
    renewing = renewIdempotencyKey(db, workspaceId, key, ownerToken, clock.now() + lockMs)
      .then((held) => {
        if (!held) stop();
      })
      .catch(() => undefined)
      .finally(() => {
        renewing = null;
      });
  });
  function stop(): void {
    stopped = true;
    cancel();
  }
  return {
    async stop() {
      stop();
      await renewing;
    },
  };
}
