import { NodeStreamableHTTPServerTransport, toNodeHandler } from '@modelcontextprotocol/node';
import { type AuthInfo, classifyInboundRequest, createMcpHandler as createSdkHandler, type InboundClassificationOutcome } from '@modelcontextprotocol/server';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { ServiceError } from '../core/errors.js';
import { MCP_SCOPE } from '../core/oauth-clients/oauth-clients.service.js';
import { type Authenticators, authenticate, principalOf } from '../web/bearer-auth.js';
import { jsonBody } from '../web/json-body.js';
import { type RateLimiter, rateLimit } from '../web/rate-limit.js';
import { locals, requestLog } from '../web/request-context.js';
import { bearerChallenge } from '../web/bearer-challenge.js';
import { hostOriginGuard, mcpCors } from './host-origin.js';
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

/**
 * The MCP door at `/mcp`: Streamable HTTP, stateless, JSON responses, both protocol eras. Per request:
 * Host/Origin check → CORS → bearer auth → rate limit → JSON body → protocol version and batch check
 * (`jsonrpc-guard.ts`, which charges a batch per message) → a fresh SDK server bound to the caller's principal.
 * - 2024-11-05 … 2025-11-25 (`initialize`, then stateless calls): the SDK's Streamable HTTP transport, stateless
 *   with JSON responses, one per request, as the SDK's Express example wires it.
 * - 2026-07-28 (`server/discover`, an envelope on every request, `Mcp-Method` headers): the SDK's per-request
 *   handler, adapted to Node by the SDK's `toNodeHandler`; it also answers malformed modern requests (header
 *   mismatches, bad envelopes) in that era's form.
 * Which leg serves a request is the SDK's own classification. Errors before the MCP layer (401, 403, 413, 429)
 * are the REST error bodies, rendered by the app's error handler; 401 also carries `WWW-Authenticate` so MCP
 * clients can discover OAuth.
 */
export function createMcpHandler(deps: McpHandlerDeps): Router {
  // The modern leg hands the factory only `authInfo`; each request's scope rides on its own AuthInfo object.
  const scopes = new WeakMap<AuthInfo, McpScope>();
  const modern = toNodeHandler(
    createSdkHandler(
      ({ authInfo }) => {
        const scope = authInfo === undefined ? undefined : scopes.get(authInfo);
        if (scope === undefined) throw new Error('the modern MCP leg was reached without an authenticated scope');
        return buildMcpServer(scope);
      },
      // 'auto' answers JSON: the tools emit no progress or log messages before their result.
      { legacy: 'reject' },
    ),
  );

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
      protocolVersion: req.get('mcp-protocol-version'),
    };

    if (classify(req).kind !== 'legacy') {
      const authInfo: AuthInfo = { token: '', clientId: principal.workspaceId, scopes: [MCP_SCOPE] };
      scopes.set(authInfo, scope);
      // `toNodeHandler` hands `req.auth` to the SDK handler as its pass-through `authInfo`.
      await modern(Object.assign(req, { auth: authInfo }), res, req.body);
      return;
    }

    // A new server and transport per request (stateless mode: no session id), so no caller state outlives it.
    const server = buildMcpServer(scope);
    const transport = new NodeStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  };

  const guard = [hostOriginGuard(deps.baseUrl), mcpCors()];
  const router = express.Router();
  router.post('/mcp', ...guard, authenticate(deps.auth, 'mcp'), rateLimit(deps.limiter), jsonBody(deps.bodyLimit), requireBody, jsonRpcGuard(deps.limiter), serve);
  router.all('/mcp', ...guard, methodNotAllowed);
  // Decorates auth failures, then lets the app's error handler render the body (one renderer for both doors).
  router.use('/mcp', (err: unknown, req: Request, res: Response, next: NextFunction) => {
    if (err instanceof ServiceError && err.status === 401 && !res.headersSent) {
      res.setHeader('WWW-Authenticate', wwwAuthenticate(deps.resourceMetadataUrl, req.get('authorization')));
    }
    next(err);
  });
  return router;
}
