import type { NextFunction, Request, Response } from 'express';
import { ServiceError } from '../../core/errors.js';
import type { WorkspaceRateLimiter } from '../../rate-limiter.js';
import { applyRateLimitHeaders } from '../../web/rate-limit-headers.js';
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
    const seconds = applyRateLimitHeaders(res, decision, Date.now());
    if (seconds !== null) {
      throw new ServiceError('rate_limited', `More than ${decision.limit} requests per minute for this workspace. Retry after ${seconds} s.`);
    }
    next();
  };
}
