import type { RateDecision } from '../rate-limiter.js';

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
