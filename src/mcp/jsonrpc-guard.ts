import {
  DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
  LATEST_PROTOCOL_VERSION,
  PROTOCOL_VERSION_META_KEY,
  ProtocolErrorCode,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server';
import type { NextFunction, Request, Response } from 'express';
import { type RateLimiter, rateLimit } from '../web/rate-limit.js';

/**
 * What `/mcp` checks in a parsed body before the SDK transport sees it: the protocol version named in the
 * `MCP-Protocol-Version` header, and JSON-RPC batches.
 *
 * Batches and the rate limit (spec 8: a budget of calls per minute per workspace). The SDK dispatches up to 100 messages
 * of one JSON-RPC batch, while the HTTP rate limit counts the request once, so a batch would multiply the
 * budget by 100. MCP 2025-06-18 removed batching, so for 2025-06-18 and later a batch is refused outright; for
 * the older revisions that allow it (2025-03-26, 2024-11-05) every message of the batch costs one point,
 * charged before anything is dispatched. The server is stateless (no session remembers what `initialize`
 * negotiated), so the version is read from each request: the `protocolVersion` of an `initialize` message,
 * else the `MCP-Protocol-Version` header, else 2025-03-26 as the transport spec says a server assumes when the
 * header is missing.
 */

/**
 * The revisions of the per-request era (2026-07-28 and later). The SDK keeps that list internal; its exported
 * `SUPPORTED_PROTOCOL_VERSIONS` names the `initialize` era only.
 */
export const MODERN_PROTOCOL_VERSIONS: readonly string[] = ['2026-07-28'];

/** Every revision `/mcp` speaks, newest first. */
export const SPOKEN_PROTOCOL_VERSIONS: readonly string[] = [...MODERN_PROTOCOL_VERSIONS, ...SUPPORTED_PROTOCOL_VERSIONS];

/** The SDK transport's own ceiling on a batch; a longer one is refused here before its messages are charged. */
export const MAX_BATCH_SIZE = 100;

/** The first revision without JSON-RPC batching (MCP 2025-06-18 changelog: "Remove support for JSON-RPC batching"). */
export const BATCHLESS_SINCE = '2025-06-18';

type JsonRpcId = string | number | null;

interface JsonRpcErrorBody {
  jsonrpc: '2.0';
  id: JsonRpcId;
  error: { code: number; message: string; data?: Record<string, unknown> };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The id of a single request, echoed in errors about it (JSON-RPC 2.0 section 5); null for a batch or a notification. */
function requestIdOf(body: unknown): JsonRpcId {
  if (!isRecord(body)) return null;
  const id = body.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/**
 * Whether a message speaks the 2026-07-28 wire (a protocol version in its `_meta` envelope, or `server/discover`).
 * Its version checks are the SDK's: the error it gives lists exactly what `server/discover` offers, in that era's
 * code (-32022), and clients of that era compare the two.
 */
function speaksModernWire(message: unknown): boolean {
  if (!isRecord(message)) return false;
  if (message.method === 'server/discover') return true;
  const params = message.params;
  return isRecord(params) && isRecord(params._meta) && PROTOCOL_VERSION_META_KEY in params._meta;
}

function isInitialize(message: unknown): message is { params: { protocolVersion?: unknown } } {
  return isRecord(message) && message.method === 'initialize' && isRecord(message.params);
}

/**
 * The protocol version this request is spoken in. `initialize` negotiates: a version we support is kept, any
 * other is answered with the latest (MCP lifecycle, version negotiation).
 */
export function protocolVersionOf(messages: readonly unknown[], header: string | undefined): string {
  const init = messages.find(isInitialize);
  if (init !== undefined) {
    const asked = init.params.protocolVersion;
    return typeof asked === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(asked) ? asked : LATEST_PROTOCOL_VERSION;
  }
  return header ?? DEFAULT_NEGOTIATED_PROTOCOL_VERSION;
}

/** Whether a negotiated revision still has JSON-RPC batches. Revisions are dates, so they compare as strings. */
export function allowsBatches(version: string): boolean {
  return version < BATCHLESS_SINCE;
}

function reply(res: Response, status: number, body: JsonRpcErrorBody): void {
  res.status(status).json(body);
}

/**
 * Middleware after bearer auth, the per-request rate limit (one point) and the JSON body parser:
 * - an unsupported `MCP-Protocol-Version` on a non-initialize message is a 400 JSON-RPC error that echoes the
 *   request's id (the SDK answers the same error with `id: null`, which the 2026 wire schema rejects);
 * - a batch under 2025-06-18 or later is a 400 `-32600 Invalid Request` (id null: it concerns the whole batch);
 * - a batch under an older revision longer than the SDK accepts (100) is refused the same way, its messages not charged;
 * - a batch under an older revision is charged its remaining messages (n − 1 further points) on the workspace
 *   budget through the REST door's own `rateLimit`, so headers and the 429 body are the usual ones.
 */
export function jsonRpcGuard(limiter: RateLimiter) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const body: unknown = req.body;
    const messages: readonly unknown[] = Array.isArray(body) ? body : [body];
    const header = req.get('mcp-protocol-version');

    const ours = !messages.some(isInitialize) && !messages.some(speaksModernWire);
    if (header !== undefined && !SPOKEN_PROTOCOL_VERSIONS.includes(header) && ours) {
      reply(res, 400, {
        jsonrpc: '2.0',
        id: requestIdOf(body),
        error: {
          code: -32000,
          message: `Bad Request: Unsupported protocol version: ${header} (supported versions: ${SPOKEN_PROTOCOL_VERSIONS.join(', ')})`,
          data: { requested: header, supported: SPOKEN_PROTOCOL_VERSIONS },
        },
      });
      return;
    }

    if (!Array.isArray(body)) {
      next();
      return;
    }
    const version = protocolVersionOf(messages, header);
    if (!allowsBatches(version)) {
      reply(res, 400, {
        jsonrpc: '2.0',
        id: null,
        error: {
          code: ProtocolErrorCode.InvalidRequest,
          message: `Invalid Request: JSON-RPC batches are not part of MCP ${BATCHLESS_SINCE} and later (this request speaks ${version}); send one message per request.`,
        },
      });
      return;
    }
    if (body.length > MAX_BATCH_SIZE) {
      reply(res, 400, { jsonrpc: '2.0', id: null, error: { code: ProtocolErrorCode.InvalidRequest, message: `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages` } });
      return;
    }
    // The request itself already cost one point; the other messages of the batch cost one each.
    const extra = body.length - 1;
    if (extra <= 0) {
      next();
      return;
    }
    rateLimit(limiter, extra)(req, res, next).catch(next);
  };
}
