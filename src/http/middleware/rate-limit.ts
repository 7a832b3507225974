import type { NextFunction, Request, Response } from 'express';
import { ServiceError } from '../../core/errors.js';
import type { WorkspaceRateLimiter } from '../../rate-limiter.js';
import { principalOf } from './authenticate.js';

/** Spec 4.7 and 8: the three headers on every authenticated response; 429 with Retry-After past the limit. */
export function rateLimit(limiter: WorkspaceRateLimiter) {
  return async (_req: Request, res: Response, next: NextFunction): Promise<void> => {
    const principal = principalOf(res);
    if (principal === null) {
      next();
      return;
    }
    const decision = await limiter.consume(principal.workspaceId);
    res.setHeader('X-RateLimit-Limit', String(decision.limit));
    res.setHeader('X-RateLimit-Remaining', String(Math.max(0, decision.remaining)));
    res.setHeader('X-RateLimit-Reset', new Date(decision.resetAt).toISOString());
    if (!decision.allowed) {
      const seconds = Math.max(1, Math.ceil((decision.resetAt - Date.now()) / 1000));
      res.setHeader('Retry-After', String(seconds));
      throw new ServiceError('rate_limited', `More than ${decision.limit} requests per minute for this workspace. Retry after ${seconds} s.`);
    }
    next();
  };
}
