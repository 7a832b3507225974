import type { Request, Response } from 'express';

/** Reads one cookie of the request (RFC 6265 `name=value; …`). */
export function readCookie(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    try {
      return decodeURIComponent(value);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

export interface CookieOptions {
  secure: boolean;
  /** Seconds; omitted means a browser-session cookie. */
  maxAge?: number;
  sameSite?: 'Lax' | 'Strict';
  /** Defaults to /dashboard. */
  path?: string;
}

/** Sets an HttpOnly cookie scoped to the dashboard (or to `options.path`). */
export function setCookie(res: Response, name: string, value: string, options: CookieOptions): void {
  const parts = [`${name}=${encodeURIComponent(value)}`, `Path=${options.path ?? '/dashboard'}`, 'HttpOnly', `SameSite=${options.sameSite ?? 'Lax'}`];
  if (options.secure) parts.push('Secure');
  if (options.maxAge !== undefined) parts.push(`Max-Age=${options.maxAge}`);
  res.append('Set-Cookie', parts.join('; '));
}

export function clearCookie(res: Response, name: string, secure: boolean): void {
  setCookie(res, name, '', { secure, maxAge: 0 });
}
