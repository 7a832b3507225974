import type { NextFunction, Request, RequestHandler, Response } from 'express';
import helmet, { type HelmetOptions } from 'helmet';

/**
 * helmet's security headers, taken from helmet once at start and written on every answer.
 *
 * With no directive computed per request (no nonces), helmet writes the same eleven headers on every answer, through
 * a chain of eleven middlewares; walking that chain was about a sixth of a plain request's CPU on an authenticated
 * read. helmet stays the source of the values, so its defaults follow its upgrades.
 *
 * @throws Error when the options make a header depend on the request (a directive given as a function): those
 * need helmet itself on every request.
 */
export function securityHeaders(options: HelmetOptions): RequestHandler {
  const dependsOnRequest = (value: unknown): boolean => typeof value === 'function' || (Array.isArray(value) && value.some(dependsOnRequest));
  const directives = typeof options.contentSecurityPolicy === 'object' ? Object.values(options.contentSecurityPolicy.directives ?? {}) : [];
  if (directives.some(dependsOnRequest)) throw new Error('a directive computed per request needs helmet on every request');
  const headers: [string, string][] = [];
  const sink = {
    setHeader(name: string, value: unknown) {
      headers.push([name, String(value)]);
    },
    // helmet removes X-Powered-By; Express's own is disabled on the app.
    removeHeader() {},
  };
  let finished = false;
  const probe = { get: () => undefined } as unknown as Request;
  helmet(options)(probe, sink as unknown as Response, (err?: unknown) => {
    if (err !== undefined) throw err instanceof Error ? err : new Error(String(err));
    finished = true;
  });
  if (!finished) throw new Error('helmet did not finish at once: its options need it on every request');
  return (_req: Request, res: Response, next: NextFunction) => {
    for (const [name, value] of headers) res.setHeader(name, value);
    next();
  };
}
