import type { NextFunction, Request, Response } from 'express';
import { ServiceError } from '../core/errors.js';

/**
 * DNS-rebinding protection and CORS for `/mcp` (MCP transport spec: servers MUST validate Origin).
 *
 * The SDK's transport options for this (`allowedHosts`, `allowedOrigins`) are deprecated in favour of
 * middleware, and its `hostHeaderValidation` answers in JSON-RPC, not in our error format; this is the same
 * port-agnostic hostname rule, answering 403 `forbidden` like every other refusal of the service.
 */

const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];

const EXPOSED_HEADERS = 'WWW-Authenticate, Mcp-Session-Id, X-Request-Id, Retry-After';
// Mcp-Method and Mcp-Name ride on every 2026-07-28 POST: a browser client refused them would fall back to 2025.
const ALLOWED_HEADERS = 'Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Session-Id, Last-Event-ID, X-Request-Id';

/** The socket's local address in the form `URL.hostname` gives (`::ffff:127.0.0.1` → `127.0.0.1`, `::1` → `[::1]`). */
function socketHostname(address: string | undefined): string | undefined {
  if (address === undefined) return undefined;
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (v4 !== undefined) return v4;
  return address.includes(':') ? `[${address.toLowerCase()}]` : address;
}

function hostnameOf(url: string): string | null {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return null;
  }
}

function isLoopback(hostname: string): boolean {
  return LOOPBACK.includes(hostname) || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

/**
 * Hostnames this endpoint answers to: the public base URL's, and the address the connection actually arrived
 * on (so a wildcard `HOST` still accepts its own IP). When either is loopback, every loopback name is accepted,
 * so local tools (an inspector on localhost) work. An attacker's domain that resolves to us is never in the set.
 */
export function allowedHostnames(baseUrl: string, localAddress: string | undefined): Set<string> {
  const names = new Set<string>();
  const base = hostnameOf(baseUrl);
  if (base !== null) names.add(base);
  const local = socketHostname(localAddress);
  if (local !== undefined) names.add(local);
  if ([...names].some(isLoopback)) for (const name of LOOPBACK) names.add(name);
  return names;
}

/** Refuses a request whose Host, or whose Origin when one is sent, names a host we do not serve. */
export function hostOriginGuard(baseUrl: string) {
  // One set per local address the server listens on: a handful per process, computed once each.
  const byLocalAddress = new Map<string | undefined, Set<string>>();
  // Host headers already accepted, as sent ("127.0.0.1:8080"), so a repeat is not parsed again; bounded, since
  // every value in it passed the check (a client cannot grow it with hosts of its own).
  const accepted = new Set<string>();
  return (req: Request, _res: Response, next: NextFunction): void => {
    const local = req.socket.localAddress;
    let allowed = byLocalAddress.get(local);
    if (allowed === undefined) {
      allowed = allowedHostnames(baseUrl, local);
      byLocalAddress.set(local, allowed);
    }
    const raw = req.headers.host;
    if (raw === undefined || !accepted.has(`${local ?? ''} ${raw}`)) {
      const host = raw === undefined ? null : hostnameOf(`http://${raw}`);
      if (host === null || !allowed.has(host)) {
        next(new ServiceError('forbidden', 'The Host header does not name this MCP endpoint (DNS rebinding protection).'));
        return;
      }
      if (accepted.size < 256) accepted.add(`${local ?? ''} ${raw}`);
    }
    const origin = req.get('origin');
    if (origin !== undefined) {
      // `null` (sandboxed frames, file pages) parses to no hostname and is refused with the foreign ones.
      const from = hostnameOf(origin);
      if (from === null || !allowed.has(from)) {
        next(new ServiceError('forbidden', 'Requests from this Origin are not accepted by this MCP endpoint.'));
        return;
      }
    }
    next();
  };
}

/**
 * CORS for browser-based MCP clients, after `hostOriginGuard` (so the echoed Origin is one we accept). No
 * cookies are involved (bearer credentials only), hence no Allow-Credentials. Answers preflights itself.
 */
export function mcpCors() {
  return (req: Request, res: Response, next: NextFunction): void => {
    const origin = req.get('origin');
    if (origin !== undefined) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
      res.append('Vary', 'Origin');
    }
    if (req.method === 'OPTIONS') {
      res.setHeader('Access-Control-Allow-Methods', 'POST, GET, DELETE, OPTIONS');
      res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS);
      res.setHeader('Access-Control-Max-Age', '86400');
      res.status(204).end();
      return;
    }
    next();
  };
}
