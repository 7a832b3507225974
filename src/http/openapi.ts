import {
  OpenAPIRegistry,
  OpenApiGeneratorV31,
  type ResponseConfig,
  type RouteConfig,
} from '@asteasolutions/zod-to-openapi';
import { stringify } from 'yaml';
import { z } from 'zod';
import { type ErrorCode, errorBodySchema, errorBodySchemas, errorCatalogue } from '../core/errors.js';
import { fillMissingExamples } from './openapi-examples.js';
import { TAG_GROUPS, TAGS } from './openapi-tags.js';
import { type AnyRoute, routeErrorCodes } from './route.js';

const requestIdHeader = {
  'X-Request-Id': { description: 'Tracing id of this request; equals request_id in error bodies.', schema: { type: 'string' as const } },
};

/** What the document says about the running service: its address and its configured limits (never a constant in prose). */
export interface DocumentSettings {
  baseUrl: string;
  /** RATE_LIMIT_PER_MINUTE of this service (spec 8 default: 600). */
  rateLimitPerMinute: number;
}

function rateLimitHeaders(perMinute: number) {
  return {
    'X-RateLimit-Limit': { description: `Requests allowed per minute for the workspace (${perMinute} on this service).`, schema: { type: 'integer' as const } },
    'X-RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer' as const } },
    'X-RateLimit-Reset': { description: 'When the window resets, ISO 8601 UTC.', schema: { type: 'string' as const, format: 'date-time' } },
  };
}

/** RFC 6750 §3 / RFC 9728 §5.1: the challenge every 401 carries. */
const challengeHeader = {
  'WWW-Authenticate': {
    description:
      'Bearer challenge: `realm`, `resource_metadata` (RFC 9728 document naming the authorization server) and, when a bearer token was sent and refused, `error="invalid_token"`.',
    schema: { type: 'string' as const },
  },
};

/** The body of an error response: the one code's exact body, or a choice among them keyed by `error`. */
function errorBodyOf(codes: readonly ErrorCode[]): z.ZodType {
  const [first, second, ...rest] = codes.map((code) => errorBodySchemas[code]);
  if (first === undefined) throw new Error('an error response needs a code');
  return second === undefined ? first : z.discriminatedUnion('error', [first, second, ...rest]);
}

function errorResponses(route: AnyRoute, headersFor: (route: AnyRoute) => ResponseConfig['headers']): Record<string, ResponseConfig> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of routeErrorCodes(route)) {
    const { status } = errorCatalogue[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<string, ResponseConfig> = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const headers: ResponseConfig['headers'] =
      status === 429
        ? { ...headersFor(route), 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } } }
        : status === 401
          ? { ...headersFor(route), ...challengeHeader }
          : headersFor(route);
    out[String(status)] = {
      description: codes.map((c) => `\`${c}\`: ${errorCatalogue[c].description}`).join('\n\n'),
      headers,
      content: { 'application/json': { schema: errorBodyOf(codes) } },
    };
  }
  return out;
}

/** A hand-written example, or nothing (the generated fallback fills the gap later). */
function exampleOf(value: unknown): { example?: unknown } {
  return value === undefined ? {} : { example: value };
}

function toRouteConfig(route: AnyRoute, settings: DocumentSettings): RouteConfig {
  const limitHeaders = rateLimitHeaders(settings.rateLimitPerMinute);
  const headersFor = (r: AnyRoute) => (r.auth === 'bearer' ? { ...requestIdHeader, ...limitHeaders } : requestIdHeader);
  const success: ResponseConfig =
    route.success.schema === undefined
      ? { description: route.success.description, headers: headersFor(route) }
      : {
          description: route.success.description,
          headers: headersFor(route),
          content: { 'application/json': { schema: route.success.schema, ...exampleOf(route.example?.response) } },
        };
  const request: RouteConfig['request'] = {};
  if (route.params instanceof z.ZodObject) request.params = route.params;
  if (route.query instanceof z.ZodObject) request.query = route.query;
  if (route.headers !== undefined) request.headers = route.headers;
  // A body schema that accepts undefined makes the body optional, as the mount accepts it (cancel, publish now).
  if (route.body !== undefined) request.body = { required: !route.body.safeParse(undefined).success, content: { 'application/json': { schema: route.body, ...exampleOf(route.example?.request) } } };
  if (route.rawBody !== undefined) {
    request.body = {
      required: true,
      description: route.rawBody.description,
      content: Object.fromEntries(route.rawBody.contentTypes.map((t) => [t, { schema: { type: 'string', format: 'binary' } }])),
    };
  }
  return {
    method: route.method,
    path: route.path,
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description === undefined ? {} : { description: route.description }),
    tags: [route.tag],
    security: route.auth === 'bearer' ? [{ bearerAuth: [] }] : [],
    request,
    responses: {
      [String(route.success.status)]: success,
      ...Object.fromEntries(
        (route.alternatives ?? []).map((alt) => [
          String(alt.status),
          { description: alt.description, headers: headersFor(route), content: { 'application/json': { schema: alt.schema } } },
        ]),
      ),
      ...errorResponses(route, headersFor),
    },
  };
}

/** The OpenAPI 3.1 document of every declared route, rendered from the same zod schemas that validate them. */
export function buildOpenApiDocument(routes: readonly AnyRoute[], settings: DocumentSettings): ReturnType<OpenApiGeneratorV31['generateDocument']> {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description:
      'An API key (`svc_live_` + 32 hex characters) or an OAuth access token issued by /api/oauth/mcp/token. A key acts only on its own workspace.',
  });
  for (const route of routes) registry.registerPath(toRouteConfig(route, settings));
  registry.registerPath({
    method: 'get',
    path: '/openapi.yaml',
    operationId: 'openapi',
    summary: 'This document',
    tags: ['Operations'],
    security: [],
    responses: {
      '200': {
        description: 'OpenAPI 3.1 document. Rendered for people at /docs.',
        headers: requestIdHeader,
        content: { 'application/yaml': { schema: { type: 'string' }, example: 'openapi: 3.1.0\ninfo:\n  title: Multi-network publishing API\n  version: 1.0.0\n…' } },
      },
    },
  });
  registerProtocolEndpoints(registry, settings.baseUrl);
  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Multi-network publishing API',
      version: '1.0.0',
      description: `Publish content to several social networks from one place. Every error is JSON \`{error, message, request_id}\` plus the fields of its code. Requests are limited to ${settings.rateLimitPerMinute} per minute per workspace. A request that is not valid HTTP/1.1 is refused before it reaches any operation, in the same error shape with \`invalid_request\` (or \`payload_too_large\`) and the connection closed: 431 for headers larger than the server accepts (a long query string counts), 408 for headers that never finish, 400 for a malformed request line or header.`,
    },
    servers: [{ url: settings.baseUrl, description: 'This service (its BASE_URL).' }],
    tags: TAGS.map((t) => ({ ...t })),
  });
  // Redoc's grouping of the tag list; other readers ignore an `x-` field.
  const withGroups = Object.assign(document, { 'x-tagGroups': TAG_GROUPS });
  fillMissingExamples(withGroups);
  return withGroups;
}

const oauthError = {
  description: 'RFC 6749 error: invalid_request, invalid_client, invalid_grant or unsupported_grant_type (spec 7.5).',
  content: { 'application/json': { schema: { type: 'object' as const, properties: { error: { type: 'string' as const }, error_description: { type: 'string' as const } }, required: ['error'] } } },
};
const json = (description: string, example: object) => ({ description, content: { 'application/json': { schema: { type: 'object' as const }, example } } });

/**
 * The endpoints that follow external protocols (OAuth 2.0, RFC 7591/8414/9728, MCP) rather than our zod
 * schemas: documented here so the document lists every path the service answers.
 */
function registerProtocolEndpoints(registry: OpenAPIRegistry, baseUrl: string): void {
  const tags = ['OAuth'];
  const issuer = `${baseUrl}/api/oauth/mcp`;
  registry.registerPath({
    method: 'get',
    path: '/api/oauth/mcp/authorize',
    operationId: 'oauthAuthorize',
    summary: 'Authorization endpoint (RFC 6749 4.1; PKCE S256 for public clients; RFC 8707 resource)',
    description: 'Redirects to the consent page, where the user approves with their own API key. `scope` defaults to `mcp`; `resource` defaults to {BASE_URL}/mcp.',
    tags,
    security: [],
    responses: { '303': { description: 'To the consent page, or back to the client with `code` or `error`.' }, '400': oauthError },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/oauth/mcp/token',
    operationId: 'oauthToken',
    summary: 'Token endpoint: authorization_code only',
    description: 'Form-encoded. Confidential clients authenticate with client_secret_post (or basic); public clients send code_verifier. No refresh tokens: authorize again when the access token expires.',
    tags,
    security: [],
    request: {
      body: {
        required: true,
        content: {
          'application/x-www-form-urlencoded': {
            schema: {
              type: 'object',
              properties: {
                grant_type: { type: 'string', enum: ['authorization_code'] },
                code: { type: 'string' },
                redirect_uri: { type: 'string' },
                client_id: { type: 'string' },
                code_verifier: { type: 'string', description: 'PKCE (RFC 7636), required of public clients.' },
                client_secret: { type: 'string', description: 'Confidential clients with client_secret_post.' },
              },
              required: ['grant_type', 'code', 'redirect_uri', 'client_id'],
            },
            example: {
              grant_type: 'authorization_code',
              code: 'Qm9vdHN0cmFwQ29kZUV4YW1wbGU',
              redirect_uri: 'http://127.0.0.1:33418/callback',
              client_id: 'mcp_client_5f2b8c1e9a3d4f60',
              code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
            },
          },
        },
      },
    },
    responses: {
      '200': json('{access_token, token_type: "Bearer", expires_in, scope: "mcp"}', { access_token: 'eW91ci1hY2Nlc3MtdG9rZW4tZXhhbXBsZQ', token_type: 'Bearer', expires_in: 3600, scope: 'mcp' }),
      '400': oauthError,
      '401': oauthError,
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/oauth/mcp/register',
    operationId: 'oauthRegister',
    summary: 'Dynamic Client Registration (RFC 7591), public clients',
    description: 'Registered clients are public (token_endpoint_auth_method none, authorization_code, PKCE). Custom-scheme and loopback redirects make a native client (any loopback port is accepted).',
    tags,
    security: [],
    request: {
      body: {
        required: true,
        content: {
          'application/json': {
            schema: { type: 'object', properties: { redirect_uris: { type: 'array', items: { type: 'string' } }, client_name: { type: 'string' } }, required: ['redirect_uris'] },
            example: { client_name: 'My assistant', redirect_uris: ['http://127.0.0.1:33418/callback'] },
          },
        },
      },
    },
    responses: {
      '201': json('Client information with client_id (mcp_client_…).', {
        client_id: 'mcp_client_5f2b8c1e9a3d4f60',
        client_name: 'My assistant',
        redirect_uris: ['http://127.0.0.1:33418/callback'],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        application_type: 'native',
      }),
      '400': oauthError,
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/oauth/mcp/revoke',
    operationId: 'oauthRevoke',
    summary: 'Token revocation (RFC 7009)',
    description: 'Form-encoded (RFC 7009 §2.1). Answers 200 whether or not the token was known; a token issued to another client is left valid.',
    tags,
    security: [],
    request: {
      body: {
        required: true,
        content: {
          'application/x-www-form-urlencoded': {
            schema: {
              type: 'object',
              properties: {
                token: { type: 'string', description: 'The access token to revoke.' },
                token_type_hint: { type: 'string', description: 'Optional hint of the kind of token: access_token (the only kind this server issues) or refresh_token.' },
                client_id: { type: 'string', description: 'The client the token was issued to (public clients, and confidential clients with client_secret_post).' },
                client_secret: { type: 'string', description: 'Confidential clients with client_secret_post; client_secret_basic sends it in the Authorization header instead.' },
              },
              required: ['token'],
            },
            example: { token: 'eW91ci1hY2Nlc3MtdG9rZW4tZXhhbXBsZQ', token_type_hint: 'access_token', client_id: 'mcp_client_5f2b8c1e9a3d4f60' },
          },
        },
      },
    },
    responses: { '200': { description: 'Revoked (or unknown).' }, '400': oauthError, '401': oauthError },
  });
  registry.registerPath({
    method: 'get',
    path: '/.well-known/oauth-authorization-server/api/oauth/mcp',
    operationId: 'oauthServerMetadata',
    summary: 'Authorization server metadata (RFC 8414)',
    tags,
    security: [],
    responses: {
      '200': json('Metadata.', {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        registration_endpoint: `${issuer}/register`,
        revocation_endpoint: `${issuer}/revoke`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code'],
        code_challenge_methods_supported: ['S256'],
        scopes_supported: ['mcp'],
      }),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/.well-known/oauth-protected-resource/mcp',
    operationId: 'protectedResourceMetadata',
    summary: 'Protected resource metadata for /mcp (RFC 9728)',
    tags,
    security: [],
    responses: {
      '200': json('Metadata.', { resource: `${baseUrl}/mcp`, authorization_servers: [issuer], bearer_methods_supported: ['header'], scopes_supported: ['mcp'] }),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/mcp',
    operationId: 'mcp',
    summary: 'MCP endpoint (Streamable HTTP, stateless)',
    description: 'JSON-RPC 2.0 per the Model Context Protocol. Bearer: an OAuth access token for this resource, or an API key. 401 carries WWW-Authenticate with resource_metadata.',
    tags: ['MCP'],
    security: [{ bearerAuth: [] }],
    request: {
      body: {
        required: true,
        content: { 'application/json': { schema: { type: 'object' }, example: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} } } },
      },
    },
    responses: {
      '200': json('JSON-RPC response.', { jsonrpc: '2.0', id: 1, result: { tools: [{ name: 'list_brands', description: 'List the brands of the workspace…', inputSchema: { type: 'object' } }] } }),
      '401': { description: 'Missing or invalid credential; see WWW-Authenticate.', headers: challengeHeader, content: { 'application/json': { schema: errorBodySchema } } } },
  });
}

export function renderOpenApiYaml(document: object): string {
  return stringify(document, { aliasDuplicateObjects: false });
}
