import type { NextFunction, Request, Response } from 'express';
import { ServiceError } from '../core/errors.js';
import { takeDecidedRate, principalOf } from './bearer-auth.js';
import type { RateDecision, RateLimiter } from './rate-limiter.js';

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

/** The last window end rendered: every request of a window shares it, so it is formatted once per window. */
let lastReset = { at: Number.NaN, text: '' };

function resetHeader(resetAt: number): string {
  if (lastReset.at !== resetAt) lastReset = { at: resetAt, text: new Date(resetAt).toISOString() };
  return lastReset.text;
}

/**
 * Spec 4.7 and 8: the three `X-RateLimit-*` headers of a workspace decision, and `Retry-After` when it refused.
 * Returns the seconds to wait when refused, null when allowed. Shared by the REST, MCP and dashboard doors so a
 * person's browser and a script see the same budget described the same way.
 */
export function applyRateLimitHeaders(res: HeaderSink, decision: RateDecision, now: number): number | null {
  res.setHeader('X-RateLimit-Limit', String(decision.limit));
  res.setHeader('X-RateLimit-Remaining', String(Math.max(0, decision.remaining)));
  res.setHeader('X-RateLimit-Reset', resetHeader(decision.resetAt));
  if (decision.allowed) return null;
  const seconds = retryAfterSeconds(decision.resetAt, now);
  res.setHeader('Retry-After', String(seconds));
  return seconds;
}

/** Spec 4.7 and 8: the three headers on every authenticated response; 429 with Retry-After past the limit. */
export function rateLimit(limiter: Pick<RateLimiter, 'consume'>) {
  return async (_req: Request, res: Response, next: NextFunction): Promise<void> => {
    const principal = principalOf(res);
    if (principal === null) {
      next();
      return;
    }
    // Counted already when the API key lookup did it in the same statement (`authenticate` with this limiter).
    const decision = takeDecidedRate(res) ?? (await limiter.consume(principal.workspaceId));
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
