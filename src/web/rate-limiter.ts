import type { Db } from '../../db/connect.js';
import { rateCounter, type WindowCount, type WorkspaceHit } from '../../db/repositories/rate-limits.repo.js';
import type { CountingPlace } from './rate-counting.js';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch ms at which the current window ends. */
  resetAt: number;
}

export interface RateLimiter {
  /**
   * Counts one request for the workspace (or `points` calls at once, e.g. the messages of an MCP JSON-RPC batch)
   * and says whether they fit in the current window.
   */
  consume(workspaceId: string, points?: number): Promise<RateDecision>;
  /**
   * The same count of one request, for a statement that finds the workspace and counts in one go (the API key
   * lookup on PostgreSQL); `decide` then reads the window it returns.
   */
  hit(): WorkspaceHit;
  decide(window: WindowCount): RateDecision;
}

const WINDOW_MS = 60_000;
/** How often ended windows are deleted; a window's row is only needed while the window lasts. */
const SWEEP_MS = 5 * 60_000;

/**
 * Spec 8: a fixed one-minute window per workspace, counted across all its keys and tokens. Every process sharing
 * the database, SQLite file or PostgreSQL, shares the budget exactly: the counters live in the service's own
 * database, one atomic upsert per request (db/repositories/rate-limits.repo.ts), except while a process is alone on
 * its SQLite file, when it counts in memory (`place`, src/web/rate-counting.ts).
 *
 * Windows follow the wall clock, not the injected clock: a budget is about real requests per real minute.
 */
export function createRateLimiter(db: Db, perMinute: number, keyPrefix = 'ws', place?: CountingPlace): RateLimiter {
  const counter = rateCounter(db);
  let nextSweep = Date.now() + SWEEP_MS;

  const sweepIfDue = (now: number) => {
    if (now < nextSweep) return;
    nextSweep = now + SWEEP_MS;
    place?.windows.sweep(now);
    // Housekeeping must not fail the request that happened to trigger it.
    counter.sweep(now).catch(() => undefined);
  };
  const decide = (window: WindowCount): RateDecision => {
    const allowed = window.points <= perMinute;
    return { allowed, limit: perMinute, remaining: allowed ? perMinute - window.points : 0, resetAt: window.expire };
  };

  return {
    async consume(workspaceId, points = 1) {
      const now = Date.now();
      sweepIfDue(now);
      const key = `${keyPrefix}:${workspaceId}`;
      if (place?.inMemory()) return decide(place.windows.hit(key, points, WINDOW_MS, now));
      return decide(await counter.hit(key, points, WINDOW_MS, now));
    },
    hit() {
      const now = Date.now();
      sweepIfDue(now);
      return { keyPrefix: `${keyPrefix}:`, points: 1, windowMs: WINDOW_MS, now };
    },
    decide,
  };
}
