import type { NextFunction, Request, Response } from 'express';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterPostgres, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { ServiceError } from '../core/errors.js';
import { principalOf } from './bearer-auth.js';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch ms at which the current window ends. */
  resetAt: number;
}

/** The one port every door counts through; the container decides where the counters live. */
export interface RateLimiter {
  /**
   * Counts one request for `key` (a workspace id, or an address), or `points` calls at once (the messages of an
   * MCP JSON-RPC batch), and says whether they fit in the current window.
   */
  consume(key: string, points?: number): Promise<RateDecision>;
}

/**
 * Where the counters live:
 * - `memory`: this process alone (the embedded SQLite default, which is one serving process);
 * - `postgres`: the service's database, shared by every process on it (`table` has rate-limiter-flexible's
 *   documented shape and is created by our own migration, so the library is told not to create it);
 * - `redis`: a Redis shared by every process; `keyPrefix` keeps installations sharing one Redis apart.
 */
export type RateStore = { kind: 'memory' } | { kind: 'postgres'; pool: pg.Pool; table: string } | { kind: 'redis'; client: Redis; keyPrefix: string };

/**
 * Spec 8: a fixed one-minute window per key, opened by its first request, counted by rate-limiter-flexible in the
 * store the container chose. Windows follow the wall clock, not the injected clock: a budget is about real
 * requests per real minute.
 *
 * Store failures: on PostgreSQL the counter is the database that has just authenticated the request, so a failure
 * there fails the request (500) rather than letting it through uncounted. Redis is a second engine that can be down
 * while the database is fine, so its limiter has rate-limiter-flexible's `insuranceLimiter`: while Redis cannot be
 * reached each process counts in its own memory with the same limit (the budget is then per process, at most the
 * number of processes times the limit) and the service stays up; counting returns to Redis once it answers.
 */
export function createRateLimiter(store: RateStore, perMinute: number, name: string): RateLimiter {
  const limiter = buildLimiter(store, { points: perMinute, duration: 60, keyPrefix: name });
  return {
    async consume(key, points = 1) {
      let res: RateLimiterRes;
      try {
        res = await limiter.consume(key, points);
      } catch (err) {
        // Over the limit is an answer (a RateLimiterRes); anything else is the store failing.
        if (!(err instanceof RateLimiterRes)) throw err;
        res = err;
      }
      const allowed = res.consumedPoints <= perMinute;
      return { allowed, limit: perMinute, remaining: allowed ? res.remainingPoints : 0, resetAt: Date.now() + res.msBeforeNext };
    },
  };
}

/** Anything headers can be set on (an express Response). */
interface HeaderSink {
  setHeader(name: string, value: string): unknown;
}

/**
 * RFC 9110 §10.2.3 `Retry-After` in whole seconds until a rate window ends: at least 1, so a client never retries
 * at once into the same full window. One rule for every door that limits (REST, MCP, the dashboard, per address).
 */
export function retryAfterSeconds(resetAt: number, now: number): number {
  return Math.max(1, Math.ceil((resetAt - now) / 1000));
}

/**
 * Spec 4.7 and 8: the three `X-RateLimit-*` headers of a workspace decision, and `Retry-After` when it refused.
 * Returns the seconds to wait when refused, null when allowed. Shared by the REST, MCP and dashboard doors so a
 * person's browser and a script see the same budget described the same way.
 */
export function applyRateLimitHeaders(res: HeaderSink, decision: RateDecision, now: number): number | null {
  res.setHeader('X-RateLimit-Limit', String(decision.limit));
  res.setHeader('X-RateLimit-Remaining', String(Math.max(0, decision.remaining)));
  res.setHeader('X-RateLimit-Reset', new Date(decision.resetAt).toISOString());
  if (decision.allowed) return null;
  const seconds = retryAfterSeconds(decision.resetAt, now);
  res.setHeader('Retry-After', String(seconds));
  return seconds;
}

/**
 * Spec 4.7 and 8: the three headers on every authenticated response; 429 with Retry-After past the limit.
 * `points` is what the request costs (one, or the further messages of an MCP batch).
 */
export function rateLimit(limiter: RateLimiter, points = 1) {
  return async (_req: Request, res: Response, next: NextFunction): Promise<void> => {
    const principal = principalOf(res);
    if (principal === null) {
      next();
      return;
    }
    const decision = await limiter.consume(principal.workspaceId, points);
    const seconds = applyRateLimitHeaders(res, decision, Date.now());
    if (seconds !== null) {
      throw new ServiceError('rate_limited', `More than ${decision.limit} requests per minute for this workspace. Retry after ${seconds} s.`);
    }
    next();
  };
}

/**
 * A per-address budget for the doors that take no credential (signature checks, client registration, token
 * exchange, the consent form): they are where guessing and flooding happen (OWASP API4/API6).
 */
export function ipRateLimit(limiter: RateLimiter, bucket: string) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    // req.ip is the socket's address unless TRUST_PROXY names the proxy in front, then the client's it forwarded.
    const decision = await limiter.consume(`${bucket}:${req.ip ?? req.socket.remoteAddress ?? 'unknown'}`);
    if (!decision.allowed) {
      const seconds = retryAfterSeconds(decision.resetAt, Date.now());
      res.setHeader('Retry-After', String(seconds));
      next(new ServiceError('rate_limited', `Too many requests from this address. Retry after ${seconds} s.`));
      return;
    }
    next();
  };
}

/** rate-limiter-flexible's limiter for `store` (see `createRateLimiter` for how each store fails). */
function buildLimiter(store: RateStore, options: { points: number; duration: number; keyPrefix: string }): RateLimiterAbstract {
  switch (store.kind) {
    case 'memory':
      return new RateLimiterMemory(options);
    case 'postgres':
      return new RateLimiterPostgres({ ...options, storeClient: store.pool, storeType: 'pool', tableName: store.table, tableCreated: true });
    case 'redis':
      return new RateLimiterRedis({
        ...options,
        keyPrefix: `${store.keyPrefix}:${options.keyPrefix}`,
        storeClient: store.client,
        // Fail over at once while the connection is down instead of queueing behind it (the library's advice).
        rejectIfRedisNotReady: true,
        insuranceLimiter: new RateLimiterMemory(options),
      });
  }
}

/**
 * Failed attempts per key (an account, an address) over a longer window than a request budget: `failures` within
 * `windowSeconds` block the key until the window that began with the first failure ends. Only failures count,
 * so a person who types their password right is never held up by their own successes.
 */
export function createFailureThrottle(store: RateStore, options: { failures: number; windowSeconds: number; name: string }) {
  const limiter = buildLimiter(store, { points: options.failures, duration: options.windowSeconds, keyPrefix: options.name });
  return {
    async blockedFor(key: string): Promise<number> {
      const res = await limiter.get(key);
      return res !== null && res.consumedPoints >= options.failures ? Math.max(1, res.msBeforeNext) : 0;
    },
    async fail(key: string): Promise<void> {
      await limiter.consume(key).catch((err: unknown) => {
        // Over the limit is an answer (a RateLimiterRes); anything else is the store failing.
        if (!(err instanceof RateLimiterRes)) throw err;
      });
    },
    async clear(key: string): Promise<void> {
      await limiter.delete(key);
    },
  };
}
