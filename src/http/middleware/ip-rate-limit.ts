import type { NextFunction, Request, Response } from 'express';
import { ServiceError } from '../../core/errors.js';
import type { WorkspaceRateLimiter } from '../../rate-limiter.js';
import { retryAfterSeconds } from '../../web/rate-limit-headers.js';

/**
 * A per-address budget for the doors that take no credential (signature checks, client registration, token
 * exchange, the consent form): they are where guessing and flooding happen (OWASP API4/API6).
 */
export function ipRateLimit(limiter: WorkspaceRateLimiter, bucket: string) {
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
