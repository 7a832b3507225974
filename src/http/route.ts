import type { Readable } from 'node:stream';
import type { z } from 'zod';
import type { ErrorCode } from '../core/errors.js';
import type { Principal } from '../core/principal.js';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

type Auth = 'bearer' | 'none';

/** Who is calling: always known on a bearer route (authentication ran before the handler), never on an open one. */
export type PrincipalFor<A extends Auth> = A extends 'bearer' ? Principal : null;

export interface RouteContext<P, Q, B, A extends Auth = Auth> {
  principal: PrincipalFor<A>;
  params: P;
  query: Q;
  body: B;
  requestId: string;
  /** Raw request headers, for the few routes that read one (e.g. Idempotency-Key). */
  header(name: string): string | undefined;
  /** Sets a response header (e.g. Idempotent-Replayed). */
  setHeader(name: string, value: string): void;
  /** Overrides the declared success status (e.g. 200 for a dry run). */
  setStatus(status: number): void;
  /** The unparsed request body, on routes declared with `rawBody`. */
  raw: Readable | null;
}

/**
 * One REST operation, declared once: the same object mounts the Express handler and renders its OpenAPI
 * entry, so a route cannot exist undocumented.
 */
export interface RouteSpec<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType, R, A extends Auth = Auth> {
  operationId: string;
  method: Method;
  /** OpenAPI form, e.g. `/api/v1/workspaces/{wsId}/api-keys`. */
  path: string;
  summary: string;
  description?: string;
  tag: string;
  auth: A;
  params?: P;
  query?: Q;
  body?: B;
  success: { status: 200 | 201 | 202 | 204; description: string; schema?: z.ZodType<R> };
  /** Further success answers the operation may give, documented beside the main one. */
  alternatives?: { status: 200 | 201 | 202; description: string; schema: z.ZodType }[];
  /** The body is a file streamed as is (uploads), not JSON. */
  rawBody?: { contentTypes: readonly string[]; description: string };
  /** Request headers the operation reads, documented as parameters. */
  headers?: z.ZodObject;
  /** Error codes this operation raises itself; auth, body and rate-limit codes are added automatically. */
  errors?: ErrorCode[];
  /**
   * Examples for the reference, written for a reader: a body the operation accepts and the main success answer.
   * Operations without one get a generated example; test/rest/openapi.test.ts validates both kinds against their
   * schemas. `NoInfer`: an example must fit the route's types, never widen them.
   */
  example?: { request?: NoInfer<z.input<B>>; response?: NoInfer<R> };
  handle(ctx: RouteContext<z.output<P>, z.output<Q>, z.output<B>, A>): Promise<R>;
}

// `handle` is declared as a method, so any concrete route is assignable here (method parameters are bivariant).
export type AnyRoute = RouteSpec<z.ZodType, z.ZodType, z.ZodType, unknown, Auth>;

export function defineRoute<
  P extends z.ZodType = z.ZodObject<Record<string, never>>,
  Q extends z.ZodType = z.ZodObject<Record<string, never>>,
  B extends z.ZodType = z.ZodUndefined,
  R = unknown,
  A extends Auth = Auth,
>(spec: RouteSpec<P, Q, B, R, A>): AnyRoute {
  return spec as unknown as AnyRoute;
}

/** Error codes a route can answer with, given how it is declared. */
export function routeErrorCodes(route: AnyRoute): ErrorCode[] {
  const codes = new Set<ErrorCode>(route.errors ?? []);
  if (route.auth === 'bearer') {
    codes.add('invalid_api_key');
    codes.add('invalid_token');
    codes.add('rate_limited');
    if (route.path.includes('{wsId}')) codes.add('forbidden');
  }
  // Any request can be unreadable before its route runs: a malformed percent-escape in the path, a body it cannot decode.
  codes.add('invalid_request');
  if (route.body !== undefined) codes.add('payload_too_large');
  if (route.body !== undefined || route.query !== undefined || route.params !== undefined) codes.add('validation_failed');
  codes.add('server_error');
  return [...codes];
}
