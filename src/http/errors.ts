import type { NextFunction, Request, Response } from 'express';
import { SERVER_ERROR_MESSAGE, ServiceError } from '../core/errors.js';
import { type BearerChallengeOptions, bearerChallenge } from '../web/bearer-challenge.js';
import { locals, requestLog } from '../web/request-context.js';

/**
 * Failures raised before our code runs (body-parser, the router's parameter decoding) carry an HTTP status and
 * `expose`: they are the client's fault and answer in our format.
 */
function fromBodyParser(err: unknown): ServiceError | null {
  if (typeof err !== 'object' || err === null) return null;
  // The router's decoding of a malformed percent-escape in a path parameter.
  if (err instanceof URIError) return new ServiceError('invalid_request', 'The request path has a malformed percent-encoding.');
  if (!('type' in err)) {
    const status = (err as { status?: unknown; statusCode?: unknown }).status ?? (err as { statusCode?: unknown }).statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500 && (err as { expose?: unknown }).expose === true) {
      return status === 413
        ? new ServiceError('payload_too_large', 'The request body is larger than the service accepts.')
        : new ServiceError('invalid_request', 'The request could not be read (malformed path encoding or body).');
    }
    return null;
  }
  switch ((err as { type: unknown }).type) {
    case 'entity.parse.failed':
      return new ServiceError('invalid_request', 'The request body is not valid JSON.');
    case 'entity.too.large':
      return new ServiceError('payload_too_large', 'The request body is larger than the service accepts.');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new ServiceError('invalid_request', 'The request body must be UTF-8 JSON.');
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      return new ServiceError('invalid_request', 'The request body was incomplete.');
    default: {
      const status = (err as { status?: unknown }).status;
      return typeof status === 'number' && status >= 400 && status < 500
        ? new ServiceError('invalid_request', 'The request body could not be read (check Content-Encoding and Content-Type).')
        : null;
    }
  }
}

/** Spec 7.1: `{error, message, request_id, ...extra}` with the catalogue's status. */
export function sendError(res: Response, error: ServiceError): void {
  res.status(error.status).json(error.toBody(locals(res).requestId));
}

export interface ErrorHandlerOptions {
  /** What a 401 announces in `WWW-Authenticate` (the realm, and the RFC 9728 metadata where OAuth is served). */
  challenge: BearerChallengeOptions;
}

/**
 * The last middleware: every error becomes the spec's body; unknown ones become a bare `server_error`.
 * Every 401 leaves with a `WWW-Authenticate` challenge (RFC 7235 §3.1, RFC 6750 §3): a door that set its own
 * keeps it, any other gets the shared one, so no route can answer a bare 401.
 */
export function errorHandler(options: ErrorHandlerOptions) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    const known = err instanceof ServiceError ? err : fromBodyParser(err);
    if (known) {
      if (known.status === 401 && !res.headersSent && !res.hasHeader('WWW-Authenticate')) {
        res.setHeader('WWW-Authenticate', bearerChallenge(req.get('authorization'), options.challenge));
      }
      sendError(res, known);
      return;
    }
    requestLog(res).error({ err }, 'unhandled error');
    if (res.headersSent) {
      res.end();
      return;
    }
    sendError(res, new ServiceError('server_error', SERVER_ERROR_MESSAGE));
  };
}
