import { type NextFunction, type Request, type Response, Router } from 'express';
import type { z } from 'zod';
import { ServiceError, validationError } from '../core/errors.js';
import { assertWorkspaceAccess } from '../core/workspaces/access.js';
import type { RateLimiter } from '../web/rate-limiter.js';
import { type Authenticators, authenticate, principalOf } from '../web/bearer-auth.js';
import { jsonBody } from '../web/json-body.js';
import { rateLimit } from '../web/rate-limit.js';
import { locals } from '../web/request-context.js';
import type { AnyRoute } from './route.js';

export interface MountDeps {
  auth: Authenticators;
  limiter: RateLimiter;
  bodyLimit: string;
}

/**
 * The path of the first string holding a NUL character: PostgreSQL cannot store one, and no field needs it.
 * Iterative, because a hostile body can nest deeper than the call stack.
 */
function nulAt(root: unknown): string | null {
  const stack: [unknown, string][] = [[root, '']];
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return path;
    } else if (Array.isArray(value)) {
      value.forEach((v, i) => stack.push([v, `${path}[${i}]`]));
    } else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) stack.push([v, path === '' ? k : `${path}.${k}`]);
    }
  }
  return null;
}

function parseOrThrow(schema: z.ZodType | undefined, value: unknown, where: 'body' | 'query' | 'path'): unknown {
  const nul = nulAt(value);
  if (nul !== null) {
    const path = nul === '' ? `(${where})` : nul;
    throw new ServiceError('validation_failed', `${path}: must not contain the NUL character`, { fields: [{ path, message: 'contains NUL' }] });
  }
  if (schema === undefined) return value;
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw validationError(parsed.error, where);
  return parsed.data;
}

/** `{wsId}` → `:wsId`. */
function expressPath(openapiPath: string): string {
  return openapiPath.replace(/\{(\w+)\}/g, ':$1');
}

/**
 * Mounts declared routes. Order per request: authenticate → rate limit → workspace check → body → validation
 * → handler, so a stranger learns nothing about a workspace (403 comes before any validation detail).
 */
export function mountRoutes(routes: readonly AnyRoute[], deps: MountDeps): Router {
  const router = Router();
  const auth = authenticate(deps.auth);
  const limit = rateLimit(deps.limiter);
  const body = jsonBody(deps.bodyLimit);
  /** Methods of each declared path (OpenAPI form), for OPTIONS and for a method the path does not have. */
  const allowed = new Map<string, Set<string>>();

  for (const route of routes) {
    const chain = [];
    if (route.auth === 'bearer') {
      chain.push(auth, limit, (req: Request, res: Response, next: NextFunction) => {
        const wsId = req.params.wsId;
        const principal = principalOf(res);
        if (wsId !== undefined && principal !== null) assertWorkspaceAccess(principal, String(wsId));
        next();
      });
    }
    if (route.body !== undefined) chain.push(body);
    chain.push(async (req: Request, res: Response) => {
      if (route.rawBody !== undefined && req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) {
        throw new ServiceError('invalid_request', 'This operation needs the file as the request body.');
      }
      // A body schema that accepts undefined (`.optional()`) makes the body optional: no body is then no fields.
      if (route.body !== undefined && req.body === undefined && !route.body.safeParse(undefined).success) {
        throw new ServiceError('invalid_request', 'This operation needs a JSON body (Content-Type: application/json).');
      }
      let status: number = route.success.status;
      const principal = principalOf(res);
      // The chain above authenticated every bearer route; an open route has no caller.
      if (route.auth === 'bearer' && principal === null) throw new ServiceError('invalid_api_key', 'The API key is missing, malformed, revoked or unknown.');
      const result = await route.handle({
        principal: route.auth === 'bearer' ? principal : null,
        params: parseOrThrow(route.params, { ...req.params }, 'path'),
        query: parseOrThrow(route.query, { ...req.query }, 'query'),
        body: parseOrThrow(route.body, req.body, 'body'),
        requestId: locals(res).requestId,
        header: (name) => req.get(name),
        setHeader: (name, value) => res.setHeader(name, value),
        setStatus: (s) => (status = s),
        raw: route.rawBody === undefined ? null : req,
      });
      if (status === 204) res.status(204).end();
      else res.status(status).json(result);
    });
    router[route.method](expressPath(route.path), ...chain);
    const methods = allowed.get(route.path) ?? new Set<string>();
    methods.add(route.method.toUpperCase());
    if (route.method === 'get') methods.add('HEAD');
    allowed.set(route.path, methods);
  }
  // RFC 9110 §9.3.7 / §10.2.1: OPTIONS answers the path's methods with no body, and a method the path does not
  // have gets the spec's error body (with Allow) instead of the router's plain-text defaults.
  for (const [path, methods] of allowed) {
    const allow = [...methods, 'OPTIONS'].join(', ');
    router.options(expressPath(path), (_req: Request, res: Response) => {
      res.setHeader('Allow', allow);
      res.status(204).end();
    });
    router.all(expressPath(path), (req: Request, res: Response) => {
      res.setHeader('Allow', allow);
      throw new ServiceError('not_found', `${req.method.slice(0, 20)} is not an operation of ${path}; it accepts ${allow}.`);
    });
  }
  return router;
}
