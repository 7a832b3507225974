import express, { type NextFunction, type Request, type Response } from 'express';
import { ServiceError } from '../core/errors.js';

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Parses a JSON body for routes that take one. Parsing is per route (not global) because oidc-provider reads
 * its own bodies. A body that is not `application/json` is `invalid_request`, never silently ignored.
 */
export function jsonBody(limit: string) {
  const parse = express.json({ limit, strict: false, type: () => true });
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!hasBody(req)) {
      req.body = undefined;
      next();
      return;
    }
    if (!req.is('application/json') && !req.is('application/*+json')) {
      next(new ServiceError('invalid_request', 'Content-Type must be application/json.'));
      return;
    }
    parse(req, res, next);
  };
}
