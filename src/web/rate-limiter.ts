import { RateLimiterPostgres, RateLimiterRes, RateLimiterSQLite, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Db } from '../../db/connect.js';

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
}

/**
 * Spec 8: a fixed one-minute window per workspace, counted across all its keys and tokens. The counters live
 * in the service's own database (rate-limiter-flexible's SQLite or PostgreSQL store, one atomic upsert per
 * request), so every process sharing the database shares the budget.
 *
 * The library reads the wall clock itself; windows therefore follow real time, not the injected clock.
 */
export function createRateLimiter(db: Db, perMinute: number, keyPrefix = 'ws'): RateLimiter {
  const common = { points: perMinute, duration: 60, keyPrefix, tableName: 'rate_limits', tableCreated: true, clearExpiredByTimeout: true };
  const limiter: RateLimiterAbstract =
    db.dialect === 'sqlite'
      ? new RateLimiterSQLite({ ...common, storeClient: db.sqlite, storeType: 'better-sqlite3' })
      : new RateLimiterPostgres({ ...common, storeClient: db.pool });

  return {
    async consume(workspaceId, points = 1) {
      try {
        const res = await limiter.consume(workspaceId, points);
        return { allowed: true, limit: perMinute, remaining: res.remainingPoints, resetAt: Date.now() + res.msBeforeNext };
      } catch (rejection) {
        // The library rejects with a RateLimiterRes when over the limit, with an Error when its store failed.
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        return { allowed: false, limit: perMinute, remaining: 0, resetAt: Date.now() + rejection.msBeforeNext };
      }
    },
  };
}
