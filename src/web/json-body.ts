import express, { type NextFunction, type Request, type Response } from 'express';
import { ServiceError } from '../core/errors.js';

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 * 1024 };

/** `1mb`, `512kb`, `100b` (the forms BODY_LIMIT accepts) in bytes, as body-parser counts them. */
export function limitBytes(limit: string): number {
  const match = /^(\d+)(b|kb|mb)$/i.exec(limit);
  if (match === null) throw new Error(`not a body size: ${limit}`);
  return Number(match[1]) * UNITS[match[2]!.toLowerCase()]!;
}

/**
 * What almost every client sends: `application/json` (UTF-8, the only charset JSON has), no content coding, a
 * declared length. Such a body is read here; anything else (chunked, compressed, another charset) goes through
 * body-parser, which knows every variant.
 */
function isPlainJson(req: Request): boolean {
  const type = req.headers['content-type'];
  const coding = req.headers['content-encoding'];
  return (
    (type === 'application/json' || (type !== undefined && /^application\/json;\s*charset="?utf-8"?$/i.test(type))) &&
    (coding === undefined || coding.toLowerCase() === 'identity') &&
    req.headers['transfer-encoding'] === undefined &&
    req.headers['content-length'] !== undefined
  );
}

const TOO_LARGE = () => new ServiceError('payload_too_large', 'The request body is larger than the service accepts.');
const INCOMPLETE = () => new ServiceError('invalid_request', 'The request body was incomplete.');

function parsed(body: Buffer, req: Request, next: NextFunction): void {
  const text = body.toString('utf8');
  try {
    // A leading byte-order mark is dropped, as body-parser's decoder does.
    req.body = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text) as unknown;
  } catch {
    next(new ServiceError('invalid_request', 'The request body is not valid JSON.'));
    return;
  }
  next();
}

/**
 * Reads a plain JSON body of a declared length: the same answers as body-parser (413 over the limit, `invalid_request`
 * for a body that is not JSON or ends early) without its per-request decoding and type machinery. A small body
 * usually arrives with the headers, and the HTTP parser has then already buffered all of it: it is taken in one
 * read, without switching the stream to flowing mode or adding a listener.
 */
function readPlainJson(req: Request, max: number, next: NextFunction): void {
  const declared = Number(req.headers['content-length']);
  if (!Number.isSafeInteger(declared) || declared < 0) {
    next(INCOMPLETE());
    return;
  }
  if (declared > max) {
    next(TOO_LARGE());
    return;
  }
  // Every declared byte is buffered already (`complete` is often still false then: the parser marks the message
  // complete after the request's first handlers have run), and the parser never buffers past a declared length.
  if (req.readableLength === declared) {
    const whole = req.read() as Buffer | null;
    parsed(whole ?? Buffer.alloc(0), req, next);
    return;
  }
  const chunks: Buffer[] = [];
  let received = 0;
  let settled = false;
  const settle = (err?: ServiceError) => {
    if (settled) return;
    settled = true;
    if (err !== undefined) {
      req.pause();
      next(err);
      return;
    }
    parsed(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), req, next);
  };
  req.on('data', (chunk: Buffer) => {
    received += chunk.length;
    if (received > declared) settle(INCOMPLETE());
    else chunks.push(chunk);
  });
  req.on('end', () => settle(received === declared ? undefined : INCOMPLETE()));
  req.on('error', () => settle(INCOMPLETE()));
  req.on('aborted', () => settle(INCOMPLETE()));
}

/**
 * Parses a JSON body for routes that take one. Parsing is per route (not global) because oidc-provider reads
 * its own bodies. A body that is not `application/json` is `invalid_request`, never silently ignored.
 */
export function jsonBody(limit: string) {
  const parse = express.json({ limit, strict: false, type: () => true });
  const max = limitBytes(limit);
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!hasBody(req)) {
      req.body = undefined;
      next();
      return;
    }
    if (isPlainJson(req)) {
      readPlainJson(req, max, next);
      return;
    }
    if (!req.is('application/json') && !req.is('application/*+json')) {
      next(new ServiceError('invalid_request', 'Content-Type must be application/json.'));
      return;
    }
    parse(req, res, next);
  };
}
