import type { NextFunction, Request, Response } from 'express';
import { SERVER_ERROR_MESSAGE, ServiceError } from '../src/core/errors.js';

/** Spec 7.5, RFC 6749 §5.2 and RFC 7591 §3.2.2: every OAuth answer is `{error, error_description}`. */
export function oauthError(res: Response, status: number, error: string, description: string): void {
  res.status(status).json({ error, error_description: description });
}

/** A failure raised by a body parser (express.json / urlencoded): it carries `type` or an exposed 4xx status. */
function fromBodyParser(err: object): { status: number; description: string } | null {
  const type = (err as { type?: unknown }).type;
  const status = (err as { status?: unknown }).status ?? (err as { statusCode?: unknown }).statusCode;
  if (type === 'entity.too.large' || status === 413) return { status: 413, description: 'The request body is larger than the server accepts.' };
  if (type === 'entity.parse.failed') return { status: 400, description: 'The request body is not valid JSON.' };
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') return { status: 400, description: 'The request body must be UTF-8.' };
  if (typeof status === 'number' && status >= 400 && status < 500) return { status: 400, description: 'The request body could not be read.' };
  return null;
}

/**
 * The error renderer for everything under the OAuth mount: the provider's own errors, our routes' errors, body
 * parser failures (malformed JSON, 413) and the per-address 429 raised before the OAuth routes run. Nothing under
 * the mount answers in the REST shape. Unknown failures are logged with the request's logger and answered with a
 * fixed `server_error` sentence (house rule 3: internals never leave).
 */
export function oauthErrorHandler(mount: string) {
  return (err: unknown, req: Request, res: Response, next: NextFunction): void => {
    if (req.path !== mount && !req.path.startsWith(`${mount}/`)) {
      next(err);
      return;
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    if (err instanceof ServiceError) {
      // e.g. 429 rate_limited (Retry-After already set), an RFC 6749 extension code.
      oauthError(res, err.status, err.code, err.message);
      return;
    }
    if (typeof err === 'object' && err !== null) {
      const e = err as { error?: unknown; error_description?: unknown; statusCode?: unknown; expose?: unknown };
      if (typeof e.error === 'string' && e.expose !== false) {
        oauthError(res, typeof e.statusCode === 'number' ? e.statusCode : 400, e.error, typeof e.error_description === 'string' ? e.error_description : 'The request could not be completed.');
        return;
      }
      const parser = fromBodyParser(err);
      if (parser) {
        oauthError(res, parser.status, 'invalid_request', parser.description);
        return;
      }
    }
    (res.locals as { log?: { error(obj: object, msg: string): void } }).log?.error({ err }, 'unhandled error in the authorization server');
    oauthError(res, 500, 'server_error', SERVER_ERROR_MESSAGE);
  };
}
