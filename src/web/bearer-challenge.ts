/**
 * The `WWW-Authenticate` challenge of a 401 from any door that takes a bearer credential (REST and `/mcp`), built
 * in one place so the doors cannot drift apart.
 *
 * - RFC 7235 §4.1 / RFC 6750 §3: every 401 carries a challenge.
 * - RFC 6750 §3.1: `error="invalid_token"` only when a bearer token was sent and refused (bad, revoked, expired);
 *   a request with no credential, or one in another scheme, gets the challenge without an error code.
 * - RFC 9728 §5.1: `resource_metadata` tells the client where the protected resource's metadata lives, from which
 *   it discovers the authorization server.
 */
export interface BearerChallengeOptions {
  /** The protection space (RFC 7235 §2.2), e.g. the service's base URL. */
  realm?: string | undefined;
  /** RFC 9728 document, e.g. `{BASE_URL}/.well-known/oauth-protected-resource/mcp`. */
  resourceMetadataUrl?: string | undefined;
  /** RFC 6750 §3 `scope`: the scope a token needs (e.g. `mcp`). */
  scope?: string | undefined;
}

/** A `Bearer` credential with a token (RFC 6750 §2.1 `b64token`); the scheme name is case-insensitive. */
const BEARER_TOKEN = /^Bearer +\S/i;

/** Whether the request presented a bearer token at all (as opposed to nothing, or another scheme). */
export function presentsBearerToken(authorization: string | undefined): boolean {
  return authorization !== undefined && BEARER_TOKEN.test(authorization.trim());
}

/** RFC 7230 §3.2.6 quoted-string: backslash and double quote are escaped; anything else passes as is. */
function quoted(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * The header value for a 401 answered to a request whose `Authorization` header was `authorization`.
 *
 *     bearerChallenge(undefined, { realm, resourceMetadataUrl })
 *       // Bearer realm="http://localhost:8080", resource_metadata="…"
 *     bearerChallenge('Bearer expired…', { realm, resourceMetadataUrl })
 *       // Bearer realm="http://localhost:8080", error="invalid_token", resource_metadata="…"
 */
export function bearerChallenge(authorization: string | undefined, options: BearerChallengeOptions): string {
  const params: string[] = [];
  if (options.realm !== undefined) params.push(`realm=${quoted(options.realm)}`);
  if (presentsBearerToken(authorization)) params.push('error="invalid_token"');
  if (options.resourceMetadataUrl !== undefined) params.push(`resource_metadata=${quoted(options.resourceMetadataUrl)}`);
  if (options.scope !== undefined) params.push(`scope=${quoted(options.scope)}`);
  return params.length === 0 ? 'Bearer' : `Bearer ${params.join(', ')}`;
}
