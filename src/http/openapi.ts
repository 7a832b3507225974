import {
  OpenAPIRegistry,
  OpenApiGeneratorV31,
  type ResponseConfig,
  type RouteConfig,
} from '@asteasolutions/zod-to-openapi';
import { stringify } from 'yaml';
import { z } from 'zod';
import { type ErrorCode, errorBodySchema, errorCatalogue } from '../core/errors.js';
import { type AnyRoute, routeErrorCodes } from './route.js';

const requestIdHeader = {
  'X-Request-Id': { description: 'Tracing id of this request; equals request_id in error bodies.', schema: { type: 'string' as const } },
};

const rateLimitHeaders = {
  'X-RateLimit-Limit': { description: 'Requests allowed per minute for the workspace (600).', schema: { type: 'integer' as const } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window.', schema: { type: 'integer' as const } },
  'X-RateLimit-Reset': { description: 'When the window resets, ISO 8601 UTC.', schema: { type: 'string' as const, format: 'date-time' } },
};

function headersFor(route: AnyRoute) {
  return route.auth === 'bearer' ? { ...requestIdHeader, ...rateLimitHeaders } : requestIdHeader;
}

function errorResponses(route: AnyRoute): Record<string, ResponseConfig> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of routeErrorCodes(route)) {
    const { status } = errorCatalogue[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<string, ResponseConfig> = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const headers: ResponseConfig['headers'] =
      status === 429 ? { ...headersFor(route), 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } } } : headersFor(route);
    out[String(status)] = {
      description: codes.map((c) => `\`${c}\`: ${errorCatalogue[c].description}`).join('\n\n'),
      headers,
      content: { 'application/json': { schema: errorBodySchema } },
    };
  }
  return out;
}

function toRouteConfig(route: AnyRoute): RouteConfig {
  const success: ResponseConfig =
    route.success.schema === undefined
      ? { description: route.success.description, headers: headersFor(route) }
      : {
          description: route.success.description,
          headers: headersFor(route),
          content: { 'application/json': { schema: route.success.schema } },
        };
  const request: RouteConfig['request'] = {};
  if (route.params instanceof z.ZodObject) request.params = route.params;
  if (route.query instanceof z.ZodObject) request.query = route.query;
  if (route.headers !== undefined) request.headers = route.headers;
  if (route.body !== undefined) request.body = { required: true, content: { 'application/json': { schema: route.body } } };
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
      ...errorResponses(route),
    },
  };
}

/** The OpenAPI 3.1 document of every declared route, rendered from the same zod schemas that validate them. */
export function buildOpenApiDocument(routes: readonly AnyRoute[], baseUrl: string): ReturnType<OpenApiGeneratorV31['generateDocument']> {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description:
      'An API key (`svc_live_` + 32 hex characters) or an OAuth access token issued by /api/oauth/mcp/token. A key acts only on its own workspace.',
  });
  for (const route of routes) registry.registerPath(toRouteConfig(route));
  registry.registerPath({
    method: 'get',
    path: '/openapi.yaml',
    operationId: 'openapi',
    summary: 'This document',
    tags: ['Operations'],
    security: [],
    responses: {
      '200': { description: 'OpenAPI 3.1 document.', headers: requestIdHeader, content: { 'application/yaml': { schema: { type: 'string' } } } },
    },
  });
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Multi-network publishing API',
      version: '1.0.0',
      description:
        'Publish content to several social networks from one place. Every error is JSON `{error, message, request_id}` plus the fields of its code. Requests are limited to 600 per minute per workspace.',
    },
    servers: [{ url: baseUrl }],
  });
}

export function renderOpenApiYaml(document: object): string {
  return stringify(document, { aliasDuplicateObjects: false });
}
