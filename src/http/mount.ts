import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { z } from 'zod';
import { ServiceError, validationError } from '../core/errors.js';
import { assertWorkspaceAccess } from '../core/workspaces/access.js';
import { type Authenticators, authenticate, principalOf } from '../web/bearer-auth.js';
import { jsonBody } from '../web/json-body.js';
import { type RateLimiter, rateLimit } from '../web/rate-limit.js';
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

/** `{wsId}` → `:wsId`: the route's template in Express's spelling. */
function expressPath(openapiPath: string): string {
  return openapiPath.replace(/\{(\w+)\}/g, ':$1');
}

type Handler = (req: Request, res: Response, next: NextFunction) => unknown;

/**
 * The prefixes that get a router of their own, so a request walks only the routes under its own prefix. Paths
 * under none of them (`/healthz`, `/readyz`) sit on the top router.
 */
const PREFIXES = ['/api/v1', '/v1'] as const;

function prefixOf(path: string): string {
  return PREFIXES.find((prefix) => path.startsWith(`${prefix}/`)) ?? '';
}

/**
 * Mounts declared routes on Express routers, one sub-router per path prefix. Order per request: authenticate →
 * rate limit → workspace check → body → validation → handler, so a stranger learns nothing about a workspace
 * (403 comes before any validation detail).
 *
 * The router answers HEAD with a path's GET. After every declared method, one handler per path answers the rest:
 * OPTIONS lists the path's methods with no body (RFC 9110 §9.3.7), and a method the path does not have gets the
 * spec's error body with `Allow` (RFC 9110 §10.2.1) instead of falling through to the catch-all 404.
 */
export function mountRoutes(routes: readonly AnyRoute[], deps: MountDeps): Router {
  const auth = authenticate(deps.auth);
  const limit = rateLimit(deps.limiter);
  const body = jsonBody(deps.bodyLimit);
  const workspaceCheck: Handler = (req, res, next) => {
    const wsId = req.params.wsId;
    const principal = principalOf(res);
    if (wsId !== undefined && principal !== null) assertWorkspaceAccess(principal, String(wsId));
    next();
  };

  const top = express.Router();
  const routers = new Map<string, Router>([['', top]]);
  for (const prefix of PREFIXES) {
    const router = express.Router();
    routers.set(prefix, router);
    top.use(prefix, router);
  }
  /** Each path's router, its template relative to it, and the methods declared on it, in declaration order. */
  const paths = new Map<string, { router: Router; template: string; methods: string[] }>();

  for (const route of routes) {
    const prefix = prefixOf(route.path);
    const router = routers.get(prefix)!;
    const template = expressPath(route.path.slice(prefix.length));
    const label = expressPath(route.path);
    const chain: Handler[] = [
      (_req, res, next) => {
        // What the request metric labels the request with (src/web/request-context.ts), also when an error
        // leaves the sub-router for the app's error handler.
        locals(res).route = label;
        next();
      },
    ];
    if (route.auth === 'bearer') chain.push(auth, limit, workspaceCheck);
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
      if (status === 204) {
        res.status(204).end();
        return;
      }
      res.status(status).json(result);
    });
    router[route.method](template, ...chain);
    let entry = paths.get(route.path);
    if (entry === undefined) {
      entry = { router, template, methods: [] };
      paths.set(route.path, entry);
    }
    entry.methods.push(route.method.toUpperCase());
  }

  // Registered after every declared method, so a later path that has the method still wins over an earlier one
  // that merely matches the same URL, as it would without these handlers.
  for (const [path, { router, template, methods }] of paths) {
    const allow = [...methods, ...(methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS'].join(', ');
    const label = expressPath(path);
    router.all(template, (req, res, next) => {
      locals(res).route = label;
      res.setHeader('Allow', allow);
      if (req.method === 'OPTIONS') {
        res.status(204).end();
        return;
      }
      next(new ServiceError('not_found', `${req.method.slice(0, 20)} is not an operation of ${path}; it accepts ${allow}.`));
    });
  }
  return top;
}
