import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, buildConnector, fetch, type Dispatcher, type Response } from 'undici';

/** What outbound requests (media fetches, webhook deliveries) may reach. */
export interface OutboundPolicy {
  /** `ALLOW_LOCAL_URLS`: http and any address, for local testing only. */
  allowLocal: boolean;
  /**
   * Test seam, never set from configuration: permits `http:` while still refusing every
   * non-public address, so the address checks can be exercised against plain local servers.
   */
  allowHttp?: boolean;
  /**
   * Test seam, never set from configuration: replaces `dns.lookup` for the connect-time check
   * (and the addresses connected to), so tests can make a name resolve anywhere without a network.
   */
  resolve?: (host: string) => Promise<string[]>;
}

export type OutboundBlockReason = 'scheme' | 'credentials' | 'invalid_url' | 'address' | 'redirect_limit';

/**
 * An outbound request refused by policy. It is an expected outcome, but it is thrown because
 * callers hold a fetch-like API; a caller that wants a value (the media probe does) catches it.
 */
export class OutboundBlockedError extends Error {
  override readonly name = 'OutboundBlockedError';

  constructor(readonly reason: OutboundBlockReason, message: string) {
    super(message);
  }
}

// ipaddr.js names only the special-purpose blocks and calls everything else `unicast`; IANA has
// allocated nothing outside 2000::/3 for global unicast, so that is required too (it catches the
// deprecated IPv4-compatible ::a.b.c.d, which ipaddr.js would otherwise call `unicast`).
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/** True for an IP address that is globally routable unicast; false for anything else, including non-IPs. */
export function isPublicAddress(address: string): boolean {
  if (isIP(address) === 0) return false;
  // process() unwraps ::ffff:a.b.c.d so that the embedded IPv4 address is what gets judged.
  const ip = ipaddr.process(address);
  if (ip.range() !== 'unicast') return false;
  return ip.kind() === 'ipv4' || ip.match(GLOBAL_UNICAST_V6);
}

function schemeAllowed(protocol: string, policy: OutboundPolicy): boolean {
  if (protocol === 'https:') return true;
  return protocol === 'http:' && (policy.allowLocal || policy.allowHttp === true);
}

function addressAllowed(address: string, policy: OutboundPolicy): boolean {
  return policy.allowLocal ? isIP(address) !== 0 : isPublicAddress(address);
}

/** Refusal for a host that is an IP literal (brackets already removed), or null for a name or an allowed address. */
function refuseLiteral(host: string, policy: OutboundPolicy): OutboundBlockedError | null {
  if (isIP(host) === 0 || addressAllowed(host, policy)) return null;
  return new OutboundBlockedError('address', `destination address ${host} is not allowed`);
}

/** Parses and checks what can be judged before any DNS: scheme, credentials and an IP-literal host. */
function checkUrl(raw: string, base: URL | undefined, policy: OutboundPolicy): URL {
  let url: URL;
  try {
    // The WHATWG parser rewrites 2130706433, 0x7f.0.0.1 and 0177.0.0.1 to 127.0.0.1, so only
    // canonical literals reach the check below.
    url = new URL(raw, base);
  } catch {
    throw new OutboundBlockedError('invalid_url', 'not a valid URL');
  }
  if (!schemeAllowed(url.protocol, policy)) {
    throw new OutboundBlockedError('scheme', `scheme ${url.protocol} is not allowed`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new OutboundBlockedError('credentials', 'URLs with embedded credentials are not allowed');
  }
  const refusal = refuseLiteral(url.hostname.replace(/^\[(.*)\]$/, '$1'), policy);
  if (refusal) throw refusal;
  return url;
}

async function resolveAll(host: string, policy: OutboundPolicy): Promise<string[]> {
  if (policy.resolve) return policy.resolve(host);
  const found = await dnsLookup(host, { all: true, verbatim: true });
  return found.map((entry) => entry.address);
}

/** A `net` lookup that returns only addresses it has judged, so the socket connects to exactly what was checked. */
function checkedLookup(policy: OutboundPolicy): LookupFunction {
  return (hostname, options, callback) => {
    resolveAll(hostname, policy).then(
      (resolved) => {
        const family = { 4: 4, IPv4: 4, 6: 6, IPv6: 6 }[options.family ?? 0] ?? 0;
        const addresses = resolved
          .map((address) => ({ address, family: isIP(address) }))
          .filter((entry) => family === 0 || entry.family === family);
        // One bad address is enough to refuse: with several, we do not control which one is tried.
        const bad = addresses.find((entry) => !addressAllowed(entry.address, policy));
        const first = addresses[0];
        if (bad) {
          callback(new OutboundBlockedError('address', `${hostname} resolves to ${bad.address}, which is not allowed`), '');
        } else if (!first) {
          callback(Object.assign(new Error(`${hostname} has no usable address`), { code: 'ENOTFOUND' }), '');
        } else if (options.all) {
          callback(null, addresses);
        } else {
          callback(null, first.address, first.family);
        }
      },
      (err: unknown) => callback(err instanceof Error ? err : new Error(String(err)), ''),
    );
  };
}

/**
 * An undici Agent that checks every destination address at connect time. Checking here, after DNS
 * and on the very addresses the socket is given, is what closes DNS rebinding: a check made earlier
 * (say on the URL) could see a public address and the connection a private one a moment later. It
 * also covers every redirect hop and every new connection of a keep-alive pool.
 */
export function createSafeDispatcher(policy: OutboundPolicy): Dispatcher {
  const connectChecked = buildConnector({ lookup: checkedLookup(policy) });
  const connect: buildConnector.connector = (options, callback) => {
    // net.connect skips `lookup` for IP literals, so those are judged here instead.
    const refusal = schemeAllowed(options.protocol, policy)
      ? refuseLiteral(options.hostname, policy)
      : new OutboundBlockedError('scheme', `scheme ${options.protocol} is not allowed`);
    if (refusal) queueMicrotask(() => callback(refusal, null));
    else connectChecked(options, callback);
  };
  return new Agent({ connect });
}

// Policies are long-lived (read once from configuration), so one pool per policy object suffices.
const dispatchers = new WeakMap<OutboundPolicy, Dispatcher>();

function dispatcherFor(policy: OutboundPolicy): Dispatcher {
  const dispatcher = dispatchers.get(policy) ?? createSafeDispatcher(policy);
  dispatchers.set(policy, dispatcher);
  return dispatcher;
}

/** undici reports connect failures as `TypeError('fetch failed', { cause })`; the refusal is in the chain. */
function findRefusal(err: unknown): OutboundBlockedError | null {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof OutboundBlockedError) return e;
  }
  return null;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const CROSS_ORIGIN_DROPPED = new Set(['authorization', 'cookie', 'proxy-authorization']);
const BODY_HEADERS = new Set(['content-type', 'content-length', 'content-encoding', 'content-language']);

function without(headers: Record<string, string>, names: Set<string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !names.has(name.toLowerCase())));
}

export interface SafeFetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
  /** Redirects followed before giving up with reason `redirect_limit`; default 5. */
  maxRedirects?: number;
}

/**
 * fetch() under an {@link OutboundPolicy}: refuses disallowed schemes, credentials in the URL and
 * non-public addresses (IP literals here, resolved names at connect time in the dispatcher), and
 * follows redirects itself so that every hop is checked again.
 *
 * @param dispatcher one from {@link createSafeDispatcher}; any other dispatcher skips the DNS check.
 * @throws OutboundBlockedError when the policy refuses the request or a redirect.
 */
export async function safeFetch(url: string, init: SafeFetchInit, policy: OutboundPolicy, dispatcher?: Dispatcher): Promise<Response> {
  const via = dispatcher ?? dispatcherFor(policy);
  const maxRedirects = init.maxRedirects ?? 5;
  let current = checkUrl(url, undefined, policy);
  let method = (init.method ?? 'GET').toUpperCase();
  let body = init.body;
  let headers: Record<string, string> = { ...init.headers };

  for (let redirects = 0; ; redirects++) {
    let res: Response;
    try {
      res = await fetch(current, { method, headers, body, signal: init.signal, redirect: 'manual', dispatcher: via });
    } catch (err) {
      throw findRefusal(err) ?? err;
    }
    const location = REDIRECTS.has(res.status) ? res.headers.get('location') : null;
    if (location === null) return res;
    // Cancel rather than drain: a redirect body is not ours to read in full.
    await res.body?.cancel().catch(() => undefined);
    if (redirects >= maxRedirects) {
      throw new OutboundBlockedError('redirect_limit', `more than ${maxRedirects} redirects`);
    }
    const next = checkUrl(location, current, policy);
    // As browsers do: 303 always, and 301/302 after a POST, continue as a bodiless GET.
    if ((res.status === 303 && method !== 'HEAD') || ((res.status === 301 || res.status === 302) && method === 'POST')) {
      [method, body, headers] = ['GET', undefined, without(headers, BODY_HEADERS)];
    }
    // Credentials meant for one origin must not follow a redirect to another.
    if (next.origin !== current.origin) headers = without(headers, CROSS_ORIGIN_DROPPED);
    current = next;
  }
}

/**
 * A `fetch` for API calls to hosts a user names (a Mastodon instance, a Bluesky data server): the same address
 * checks as {@link safeFetch}, any body (uploads), and no redirect followed (an API answering with one is
 * answering unexpectedly; the caller sees the 3xx). A refusal rejects with {@link OutboundBlockedError}.
 */
export function guardedFetch(policy: OutboundPolicy, dispatcher?: Dispatcher): typeof globalThis.fetch {
  const via = dispatcher ?? dispatcherFor(policy);
  const guarded = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = checkUrl(input instanceof Request ? input.url : String(input), undefined, policy);
    try {
      return await fetch(url, { ...(init as Parameters<typeof fetch>[1]), redirect: 'manual', dispatcher: via });
    } catch (err) {
      throw findRefusal(err) ?? err;
    }
  };
  // undici's own fetch and Node's global one share the WHATWG shape; only their type declarations differ.
  return guarded as unknown as typeof globalThis.fetch;
}
