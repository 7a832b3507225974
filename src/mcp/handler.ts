import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import {
  type AuthInfo,
  classifyInboundRequest,
  createMcpHandler as createSdkHandler,
  type InboundClassificationOutcome,
  type McpHttpHandler,
} from '@modelcontextprotocol/server';
import type { NextFunction, Request, Response } from 'express';
import { ServiceError } from '../core/errors.js';
import { MCP_SCOPE } from '../core/oauth-clients/oauth-clients.service.js';
import { type Authenticators, authenticate, principalOf } from '../web/bearer-auth.js';
import { type Handler, runChain } from '../web/chain.js';
import { jsonBody } from '../web/json-body.js';
import { type RateLimiter, rateLimit } from '../web/rate-limit.js';
import { locals, requestLog } from '../web/request-context.js';
import { bearerChallenge } from '../web/bearer-challenge.js';
import { hostOriginGuard, mcpCors } from './host-origin.js';
import { answerDirectCall, directCallOf } from './direct-call.js';
import { answerPlainExchange, isPlainExchange } from './json-exchange.js';
import { jsonRpcGuard } from './jsonrpc-guard.js';
import { buildMcpServer, type McpScope } from './server.js';
import type { ToolServices } from '../../tools/define-tool.js';

export interface McpHandlerDeps {
  /** The same authenticators the REST door uses: API keys and the OAuth server's access tokens. */
  auth: Authenticators;
  /**
   * The workspace rate limit shared with REST: every authenticated MCP request counts once, and each further
   * message of a JSON-RPC batch (protocol revisions before 2025-06-18) once more.
   */
  limiter: RateLimiter;
  services: ToolServices;
  /** Largest JSON body, as for REST. */
  bodyLimit: string;
  /** Public base URL; its host is one the endpoint answers to. */
  baseUrl: string;
  /** RFC 9728 document announced in `WWW-Authenticate` on 401, e.g. `{BASE_URL}/.well-known/oauth-protected-resource/mcp`. */
  resourceMetadataUrl: string;
}

/**
 * The 401 challenge on `/mcp` (RFC 6750 3, RFC 9728 5.1), from the builder every door shares. `scope` names the
 * scope a token needs: MCP 2025-11-25 authorization (scope selection) says the challenge SHOULD carry it, so
 * clients need not fall back to the metadata's `scopes_supported`.
 */
function wwwAuthenticate(resourceMetadataUrl: string, authorization: string | undefined): string {
  return bearerChallenge(authorization, { resourceMetadataUrl, scope: MCP_SCOPE });
}

/** An empty POST is refused in the REST error format before any JSON-RPC handling. */
function requireBody(req: Request, _res: Response, next: NextFunction): void {
  if (req.body === undefined) {
    next(new ServiceError('invalid_request', 'Send a JSON-RPC message as the body (Content-Type: application/json).'));
    return;
  }
  next();
}

/** Stateless Streamable HTTP has no server-to-client stream (GET) nor session to end (DELETE). */
function methodNotAllowed(_req: Request, res: Response): void {
  res.setHeader('Allow', 'POST, OPTIONS');
  res.status(405).json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed. Send JSON-RPC messages with POST.' }, id: null });
}

/** Express's match for a route path `/mcp`: case-insensitive, with an optional trailing slash. */
const MCP_PATH = /^\/mcp\/?$/i;

/** The header a request names its protocol revision in (Streamable HTTP transport, "Protocol Version Header"). */
function protocolHeader(req: Request): string | undefined {
  return req.get('mcp-protocol-version');
}

/**
 * The SDK's own classification of a request (which era, or why it is refused), on the already-parsed body and
 * the headers, so the routing never disagrees with it.
 */
function classify(req: Request): InboundClassificationOutcome {
  const optional = (name: string) => req.get(name);
  return classifyInboundRequest({
    httpMethod: req.method,
    body: req.body as unknown,
    ...(optional('mcp-protocol-version') !== undefined && { protocolVersionHeader: optional('mcp-protocol-version') }),
    ...(optional('mcp-method') !== undefined && { mcpMethodHeader: optional('mcp-method') }),
    ...(optional('mcp-name') !== undefined && { mcpNameHeader: optional('mcp-name') }),
  });
}

/** Headers that describe a body; the modern leg gets the parsed body beside the request, never a body in it. */
const BODY_HEADERS = new Set(['content-length', 'transfer-encoding', 'content-encoding']);

/**
 * Serves one request through the SDK's fetch-shaped handler. The web `Request` carries the method, URL and
 * headers the SDK checks, and the already-parsed body goes beside it (`parsedBody`), so nothing is serialized
 * again; a JSON answer is written in one piece, and only an event stream is piped. (The SDK's `toNodeHandler`
 * re-serializes the body into the request and copies every answer through a web stream.)
 */
async function serveThroughFetch(handler: McpHttpHandler, req: Request, res: Response, authInfo: AuthInfo): Promise<void> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || BODY_HEADERS.has(name)) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  const request = new globalThis.Request(`http://${req.headers.host ?? 'localhost'}${req.originalUrl}`, { method: req.method, headers });
  const response = await handler.fetch(request, { authInfo, parsedBody: req.body as unknown });
  res.status(response.status);
  response.headers.forEach((value, name) => res.setHeader(name, value));
  if (response.body === null) {
    res.end();
  } else if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
    Readable.fromWeb(response.body as WebReadableStream<Uint8Array>).pipe(res);
  } else {
    res.end(Buffer.from(await response.arrayBuffer()));
  }
}

/**
 * The MCP door at `/mcp`: Streamable HTTP, stateless, JSON responses, both protocol eras. Per request:
 * Host/Origin check → CORS → bearer auth → rate limit → JSON body → protocol version and batch check
 * (`jsonrpc-guard.ts`, which charges a batch per message) → a fresh server bound to the caller's principal.
 * - `tools/call` of a known tool, well-formed in either era: answered directly (`direct-call.ts`), as the SDK would.
 * - 2024-11-05 … 2025-11-25 (`initialize`, then stateless calls): one plain JSON request is answered through a
 *   single-exchange transport (`json-exchange.ts`); anything else through the SDK's Streamable HTTP transport.
 * - 2026-07-28 (`server/discover`, an envelope on every request, `Mcp-Method` headers): the SDK's per-request
 *   handler, which also answers malformed modern requests (header mismatches, bad envelopes) in that era's form.
 * Errors before the MCP layer (401, 403, 413, 429) are the REST error bodies, rendered by the app's error
 * handler; 401 also carries `WWW-Authenticate` so MCP clients can discover OAuth.
 */
export function createMcpHandler(deps: McpHandlerDeps): Handler {
  // The modern leg hands the factory only `authInfo`; each request's scope rides on its own AuthInfo object.
  const scopes = new WeakMap<AuthInfo, McpScope>();
  const modern = createSdkHandler(
    ({ authInfo }) => {
      const scope = authInfo === undefined ? undefined : scopes.get(authInfo);
      if (scope === undefined) throw new Error('the modern MCP leg was reached without an authenticated scope');
      return buildMcpServer(scope);
    },
    // 'auto' answers JSON: the tools emit no progress or log messages before their result.
    { legacy: 'reject' },
  );

  const pipeline = [authenticate(deps.auth), rateLimit(deps.limiter), jsonBody(deps.bodyLimit), requireBody, jsonRpcGuard(deps.limiter)];
  const serve = async (req: Request, res: Response): Promise<void> => {
    const principal = principalOf(res);
    if (principal === null) throw new Error('authenticate() let a request through without a principal');
    const { requestId } = locals(res);
    const scope: McpScope = {
      principal: async () => principal,
      services: deps.services,
      log: requestLog(res),
      requestId: () => requestId,
      baseUrl: deps.baseUrl,
      protocolVersion: protocolHeader(req),
    };

    let route: InboundClassificationOutcome | undefined;
    const routeOf = () => (route ??= classify(req));
    const direct = directCallOf(req.body, (name) => req.get(name), routeOf);
    if (direct !== undefined) {
      const answer = await answerDirectCall(direct, scope);
      res.status(200).setHeader('Content-Type', answer.contentType);
      res.end(answer.body);
      return;
    }

    if (routeOf().kind !== 'legacy') {
      const authInfo: AuthInfo = { token: '', clientId: principal.workspaceId, scopes: [MCP_SCOPE] };
      scopes.set(authInfo, scope);
      await serveThroughFetch(modern, req, res, authInfo);
      return;
    }

    const server = buildMcpServer(scope);
    if (isPlainExchange(req)) {
      await answerPlainExchange(server, req, res);
      return;
    }
    // A new server and transport per request (stateless mode: no session id), so no caller state outlives it.
    const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  };

  const guard = [hostOriginGuard(deps.baseUrl), mcpCors()];
  const post = [...guard, ...pipeline, serve];
  const other = [...guard, methodNotAllowed];

  // One middleware runs the chain of `/mcp` itself: a router would walk a layer per step on every call.
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!MCP_PATH.test(req.path)) {
      next();
      return;
    }
    // What the request metric labels the request with (src/web/request-context.ts), as Express's Route would.
    (req as { route?: unknown }).route = { path: '/mcp' };
    runChain(req.method === 'POST' ? post : other, req, res, (err?: unknown) => {
      // Decorates auth failures, then lets the app's error handler render the body (one renderer for both doors).
      if (err instanceof ServiceError && err.status === 401 && !res.headersSent) {
        res.setHeader('WWW-Authenticate', wwwAuthenticate(deps.resourceMetadataUrl, req.get('authorization')));
      }
      next(err);
    });
  };
}
