import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { type ErrorCode, errorBody } from '../core/errors.js';
import { newId } from '../core/ids.js';

/**
 * Answers for requests Node's HTTP parser refuses before any handler runs (an oversized header, an obs-fold
 * line, Content-Length together with Transfer-Encoding, a malformed request line, headers that never finish).
 * Without this the client gets Node's bare status line: no JSON body, no request id. Spec 7.1: every error is
 * JSON `{error, message, request_id}` and `X-Request-Id` is on every response.
 */
export interface ParserRefusal {
  status: number;
  code: ErrorCode;
  message: string;
}

/** Node's parser error code → our status and words. The status follows Node's own choice (RFC 6585 §5 for 431). */
export function parserRefusal(errorCode: string | undefined): ParserRefusal {
  switch (errorCode) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, code: 'invalid_request', message: 'The request headers are larger than the service accepts. Send fewer or shorter headers (cookies, long query strings).' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, code: 'payload_too_large', message: 'The chunk extensions of the request body are larger than the service accepts.' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, code: 'invalid_request', message: 'The request headers or body did not arrive in time.' };
    default:
      return {
        status: 400,
        code: 'invalid_request',
        message: 'The request is not valid HTTP/1.1 (a malformed request line or header, a folded header line, or both Content-Length and Transfer-Encoding).',
      };
  }
}

/** The raw HTTP/1.1 answer: the spec's JSON body, its request id in `X-Request-Id`, and the connection closed. */
export function renderRefusal(refusal: ParserRefusal, requestId: string): string {
  const json = JSON.stringify(errorBody(refusal.code, refusal.message, requestId));
  return [
    `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(json)}`,
    `X-Request-Id: ${requestId}`,
    'Cache-Control: no-store',
    'X-Content-Type-Options: nosniff',
    "Content-Security-Policy: default-src 'none'; frame-ancestors 'none'",
    // The parser cannot go on after an error: the request boundary is lost, so the connection ends here.
    'Connection: close',
    '',
    json,
  ].join('\r\n');
}

export interface ClientErrorLog {
  info(obj: Record<string, unknown>, msg: string): void;
}

/** The two listeners to put on an `http.Server`. */
export interface ParserErrorAnswers {
  /** For the server's `request` event: counts the responses still being written on each connection. */
  onRequest(req: IncomingMessage, res: ServerResponse): void;
  /** For the server's `clientError` event. */
  onClientError(err: Error & { code?: string }, socket: Duplex): void;
}

/**
 * Answers parser refusals in the spec's shape. On a keep-alive or pipelined connection an earlier response may
 * still be in progress when the parser fails on the next request: raw bytes then would land inside that answer,
 * so the refusal waits until the connection's last response has been written, then follows it.
 */
export function parserErrorAnswers(log: () => ClientErrorLog | undefined): ParserErrorAnswers {
  const writing = new WeakMap<Duplex, number>();
  const waiting = new WeakMap<Duplex, () => void>();

  return {
    onRequest(req, res) {
      const socket = req.socket;
      writing.set(socket, (writing.get(socket) ?? 0) + 1);
      res.once('close', () => {
        const left = (writing.get(socket) ?? 1) - 1;
        writing.set(socket, left);
        const pending = waiting.get(socket);
        if (left === 0 && pending !== undefined) {
          waiting.delete(socket);
          pending();
        }
      });
    },

    onClientError(err, socket) {
      if (err.code === 'ECONNRESET' || !socket.writable) {
        socket.destroy();
        return;
      }
      const refusal = parserRefusal(err.code);
      const requestId = newId('req_');
      log()?.info({ request_id: requestId, status: refusal.status, parser_error: err.code ?? 'unknown' }, 'request refused by the HTTP parser');
      const answer = () => {
        if (!socket.writable) {
          socket.destroy();
          return;
        }
        socket.end(renderRefusal(refusal, requestId));
        // A client that never reads the answer must not hold the socket open.
        setTimeout(() => socket.destroy(), 5_000).unref();
      };
      if ((writing.get(socket) ?? 0) === 0) {
        answer();
      } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
        // The request that timed out is the one in progress: its handler still owns the response, so only close.
        socket.destroy();
      } else {
        waiting.set(socket, answer);
        setTimeout(() => socket.destroy(), 60_000).unref();
      }
    },
  };
}
