const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * The other spelling of a loopback `http` redirect URI whose path is empty or `/`: `http://127.0.0.1:33418` ↔
 * `http://127.0.0.1:33418/` (a query stays after it). RFC 3986 §6.2.3 and the WHATWG URL standard make both one
 * URL, and clients differ in which they send (`new URL(…).href` always adds the slash), while oidc-provider
 * compares redirect URIs as strings, also after taking the loopback port out (RFC 8252 §7.3). Undefined for any
 * other URI, whose spelling must match exactly as registered.
 */
export function otherLoopbackSpelling(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' || !LOOPBACK_HOSTS.has(url.hostname) || url.pathname !== '/') return undefined;
  // Worked on the string as written: the provider compares what the client sent, so nothing else may change.
  const authorityStart = uri.indexOf('://') + 3;
  const rest = uri.slice(authorityStart);
  const authorityEnd = authorityStart + (rest.search(/[/?#]/) === -1 ? rest.length : rest.search(/[/?#]/));
  const tail = uri.slice(authorityEnd);
  if (tail.startsWith('/')) return /^\/(?:[?#]|$)/.test(tail) ? uri.slice(0, authorityEnd) + tail.slice(1) : undefined;
  return `${uri.slice(0, authorityEnd)}/${tail}`;
}

interface RedirectChecks {
  redirectUriAllowed(this: unknown, value: string): boolean;
}

/**
 * Makes the provider's redirect URI check accept either spelling of an empty loopback path, for every client
 * (registered, made over REST or described by a metadata document) and with the any-port rule of native clients:
 * the value the client sent is tried first, then its other spelling. The redirect itself goes to the value sent,
 * and the token request must repeat that value exactly (RFC 6749 §4.1.3).
 */
export function acceptBothLoopbackSpellings(clientPrototype: RedirectChecks): void {
  const allowed = clientPrototype.redirectUriAllowed;
  clientPrototype.redirectUriAllowed = function redirectUriAllowed(this: unknown, value: string): boolean {
    if (allowed.call(this, value)) return true;
    const other = typeof value === 'string' ? otherLoopbackSpelling(value) : undefined;
    return other !== undefined && allowed.call(this, other);
  };
}
