import type { Request, Response } from 'express';
import type { z } from 'zod';
import { ServiceError, validationError } from '../core/errors.js';
import { assertWorkspaceAccess } from '../core/workspaces/access.js';
import { type Authenticators, authenticate, principalOf } from '../web/bearer-auth.js';
import { jsonBody } from '../web/json-body.js';
import { type RateLimiter, rateLimit } from '../web/rate-limit.js';
import { type Handler, runChain } from '../web/chain.js';
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

/** `{wsId}` → `:wsId`: the route's template in Express's spelling, as the request metric labels it. */
function expressPath(openapiPath: string): string {
  return openapiPath.replace(/\{(\w+)\}/g, ':$1');
}

/** A declared path: its pattern, its parameter names and the chain of each method it has. */
interface PathEntry {
  /** OpenAPI form, for messages. */
  path: string;
  pattern: RegExp;
  names: string[];
  template: string;
  methods: Map<string, Handler[]>;
  allow: string;
}

/**
 * The path's pattern as Express's router builds it by default: case-insensitive, an optional trailing slash, a
 * parameter being one non-empty segment.
 */
function pathPattern(openapiPath: string): { pattern: RegExp; names: string[] } {
  const names: string[] = [];
  const source = openapiPath
    .split(/(\{\w+\})/)
    .map((part) => {
      const name = /^\{(\w+)\}$/.exec(part)?.[1];
      if (name === undefined) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(name);
      return '([^/]+)';
    })
    .join('');
  return { pattern: new RegExp(`^${source}/?$`, 'i'), names };
}

/**
 * Mounts declared routes. Order per request: authenticate → rate limit → workspace check → body → validation
 * → handler, so a stranger learns nothing about a workspace (403 comes before any validation detail).
 *
 * One middleware finds the route itself, from the paths grouped by their number of segments, instead of an
 * Express router walking a layer per route, per OPTIONS answer and per method fallback on every request: the
 * walk was the largest part of what a read spent before its handler. The answers are Express's: GET also
 * answers HEAD, OPTIONS lists the path's methods, a method the path does not have gets the spec's error body.
 */
export function mountRoutes(routes: readonly AnyRoute[], deps: MountDeps): Handler {
  const auth = authenticate(deps.auth);
  const limit = rateLimit(deps.limiter);
  const body = jsonBody(deps.bodyLimit);
  const workspaceCheck: Handler = (req, res, next) => {
    const wsId = req.params.wsId;
    const principal = principalOf(res);
    if (wsId !== undefined && principal !== null) assertWorkspaceAccess(principal, String(wsId));
    next();
  };
  const paths = new Map<string, PathEntry>();

  for (const route of routes) {
    const chain: Handler[] = [];
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
      // Written directly: Express's res.json would also hash the body for an ETag, which no client of this API
      // uses (answers are per caller and change with every job step).
      const json = JSON.stringify(result);
      res.statusCode = status;
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.setHeader('Content-Length', Buffer.byteLength(json));
      res.end(json);
    });
    let entry = paths.get(route.path);
    if (entry === undefined) {
      entry = { path: route.path, ...pathPattern(route.path), template: expressPath(route.path), methods: new Map(), allow: '' };
      paths.set(route.path, entry);
    }
    entry.methods.set(route.method.toUpperCase(), chain);
  }

  // Paths by segment count, so a request is tested only against paths of its own length.
  const bySegments = new Map<number, PathEntry[]>();
  for (const [path, entry] of paths) {
    const methods = [...entry.methods.keys()];
    if (entry.methods.has('GET')) methods.push('HEAD');
    entry.allow = [...methods, 'OPTIONS'].join(', ');
    const segments = path.split('/').length;
    bySegments.set(segments, [...(bySegments.get(segments) ?? []), entry]);
  }

  /** The parameters of `path` if it is `entry`'s; throws URIError on a malformed percent-escape. */
  const paramsOf = (entry: PathEntry, path: string): Record<string, string> | null => {
    const match = entry.pattern.exec(path);
    if (match === null) return null;
    const params: Record<string, string> = {};
    entry.names.forEach((name, i) => (params[name] = decodeURIComponent(match[i + 1]!)));
    return params;
  };
  const enter = (req: Request, entry: PathEntry, params: Record<string, string>): void => {
    req.params = params;
    // What the request metric labels the request with (src/web/request-context.ts), as Express's Route would.
    (req as { route?: unknown }).route = { path: entry.template };
  };

  return (req, res, next) => {
    const path = req.path;
    // A trailing slash is optional, as in Express's router.
    const segments = path.split('/').length - (path.length > 1 && path.endsWith('/') ? 1 : 0);
    const candidates = bySegments.get(segments) ?? [];
    let firstMatch: { entry: PathEntry; params: Record<string, string> } | undefined;
    try {
      // In declaration order, the first path that has this method, as Express's router would pick it.
      for (const entry of candidates) {
        const chain = entry.methods.get(req.method) ?? (req.method === 'HEAD' ? entry.methods.get('GET') : undefined);
        if (chain === undefined && firstMatch !== undefined) continue;
        const params = paramsOf(entry, path);
        if (params === null) continue;
        if (chain !== undefined) {
          enter(req, entry, params);
          runChain(chain, req, res, next);
          return;
        }
        firstMatch = { entry, params };
      }
    } catch (err) {
      // A malformed percent-escape: the error handler answers invalid_request, as for the router's decoding.
      next(err);
      return;
    }
    if (firstMatch === undefined) {
      next();
      return;
    }
    // RFC 9110 §9.3.7 / §10.2.1: OPTIONS answers the path's methods with no body, and a method the path does not
    // have gets the spec's error body (with Allow) instead of the router's plain-text defaults.
    const { entry, params } = firstMatch;
    enter(req, entry, params);
    res.setHeader('Allow', entry.allow);
    if (req.method === 'OPTIONS') {
      res.status(204).end();
      return;
    }
    next(new ServiceError('not_found', `${req.method.slice(0, 20)} is not an operation of ${entry.path}; it accepts ${entry.allow}.`));
  };
}
