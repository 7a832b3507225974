import { generateKeyPairSync } from 'node:crypto';
import type { Kysely } from 'kysely';
import Provider, { type Configuration, errors, type JWK } from 'oidc-provider';
import { claimMetaFlag, readMeta } from '../db/repositories/service-meta.repo.js';
import type { Database } from '../db/schema.js';
import { deriveKey, open, seal } from '../src/core/secret-box.js';
import { constantTimeEqual, newId, sha256Hex } from '../src/core/ids.js';
import { CLIENT_ID_PREFIX, MCP_SCOPE, OAUTH_MOUNT } from '../src/core/oauth-clients/oauth-clients.service.js';

export { OAUTH_MOUNT };
import { adapterFactory } from './adapter.js';
import type { ClientMetadataDocuments } from './client-metadata-documents.js';
import { acceptBothLoopbackSpellings } from './loopback-redirect.js';


export interface OAuthSettings {
  baseUrl: string;
  /** Seconds an access token lives; there is no refresh grant (spec 4.2), so clients authorize again. */
  accessTokenTtlSeconds: number;
  secretKey: Buffer;
  /**
   * True only when configuration names a trusted reverse proxy (`TRUST_PROXY`): only then are the forwarded
   * headers it sets believed. Endpoint addresses never come from headers either way (see `pinOrigin`).
   */
  trustProxy: boolean;
  /**
   * Client ID Metadata Documents: the gated fetch, the fence and the cache limits. Absent, the feature is off and
   * the authorization server makes no outbound request at all.
   */
  clientMetadataDocuments?: ClientMetadataDocuments | undefined;
}

export function issuerOf(baseUrl: string): string {
  return `${baseUrl}${OAUTH_MOUNT}`;
}

/** The one protected resource: tokens are bound to it exactly (its `aud`), trailing slash and case included. */
export function mcpResourceOf(baseUrl: string): string {
  return `${baseUrl}/mcp`;
}

/**
 * A `resource` indicator written another way for the same resource (`{BASE}/mcp/`, an upper-case host, the
 * default port spelled out) becomes the canonical form, so the grant the user approves and the token's `aud` name
 * one resource and a second consent never appears (RFC 8707 §2). Anything else is returned unchanged, for the
 * provider to refuse with `invalid_target`.
 */
export function canonicalResource(indicator: string, resource: string): string {
  let url: URL;
  try {
    url = new URL(indicator);
  } catch {
    return indicator;
  }
  const canonical = new URL(resource);
  const samePath = url.pathname.replace(/\/+$/, '') === canonical.pathname;
  return url.origin === canonical.origin && samePath && url.search === '' && url.hash === '' && !url.username && !url.password ? resource : indicator;
}

/**
 * The signing key is generated once per installation and kept sealed in the database, so every process and
 * every restart signs with the same key (never the development keystore).
 */
async function signingKey(db: Kysely<Database>, secretKey: Buffer): Promise<JWK> {
  const existing = await readMeta(db, 'oauth_signing_key');
  if (existing !== undefined) return JSON.parse(open(secretKey, existing)) as JWK;
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = { ...(privateKey.export({ format: 'jwk' }) as JWK), kid: newId('k_', 12), alg: 'ES256', use: 'sig' };
  await claimMetaFlag(db, 'oauth_signing_key', seal(secretKey, JSON.stringify(jwk)), Date.now());
  // Another process may have won the race: use whatever is stored.
  return JSON.parse(open(secretKey, (await readMeta(db, 'oauth_signing_key'))!)) as JWK;
}

/**
 * Every feature oidc-provider 9 has, each named with its decision, so a library upgrade that turns a default on
 * changes nothing here (a meta-test checks that no feature of the library is left unnamed). Five are on:
 * - `registration`: RFC 7591 for public MCP clients (spec 4.2);
 * - `clientIdMetadataDocument`: an https `client_id` naming the client's metadata document (MCP 2025-11-25),
 *   which Claude Code and VS Code use; `createProvider` always replaces this entry, by the gated configuration
 *   (oauth/client-metadata-documents.ts) or by "off" when `OAUTH_CLIENT_METADATA_DOCUMENTS` is false;
 * - `resourceIndicators`: tokens bound to the one MCP resource (RFC 8707);
 * - `revocation`: RFC 7009, advertised in the metadata;
 * - `rpInitiatedLogout`: not offered to clients (not advertised, `/session/end` refused, no logout redirect is
 *   ever allowed), but the provider needs its confirm step to end the old login when a second workspace's key
 *   is used in the same browser, then resume the authorization with the new one.
 * DPoP is off: no resource server here checks proofs or `cnf.jkt` (RFC 9449 §7.1), so a DPoP-bound token
 * would be a bearer token in disguise; no client the service supports needs it. PAR, request objects,
 * userinfo, introspection and the rest are unused by MCP clients and stay off (nothing advertises them).
 */
export const PROVIDER_FEATURES = {
  attestClientAuth: { enabled: false },
  backchannelLogout: { enabled: false },
  ciba: { enabled: false },
  claimsParameter: { enabled: false },
  clientCredentials: { enabled: false },
  clientIdMetadataDocument: { enabled: true },
  devInteractions: { enabled: false },
  deviceFlow: { enabled: false },
  dPoP: { enabled: false },
  encryption: { enabled: false },
  externalSigningSupport: { enabled: false },
  fapi: { enabled: false },
  introspection: { enabled: false },
  jwtIntrospection: { enabled: false },
  jwtResponseModes: { enabled: false },
  jwtUserinfo: { enabled: false },
  mTLS: { enabled: false },
  openid4vci: { enabled: false },
  pushedAuthorizationRequests: { enabled: false },
  registration: { enabled: true },
  registrationManagement: { enabled: false },
  requestObjects: { enabled: false },
  resourceIndicators: { enabled: true },
  // RFC 7009 §2.1: a client revokes only its own tokens; a foreign token gets the same 200 and stays valid, so
  // the endpoint tells nobody whether a token they do not own exists.
  revocation: { enabled: true, allowedPolicy: async (_ctx: unknown, client: { clientId: string }, token: { clientId?: string }) => token.clientId === client.clientId },
  richAuthorizationRequests: { enabled: false },
  rpInitiatedLogout: { enabled: true },
  rpMetadataChoices: { enabled: false },
  userinfo: { enabled: false },
  webMessageResponseMode: { enabled: false },
} as const;

/** Client authentication at the token and revocation endpoints: secrets for REST-made clients, none for DCR. */
export const CLIENT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'] as const;

/** A client registered anonymously (RFC 7591, public): its redirect URIs were vetted by nobody. */
function isAnonymous(client: { clientAuthMethod?: string | undefined } | undefined): boolean {
  return client?.clientAuthMethod === 'none';
}

/**
 * The embedded authorization server (oidc-provider 9) for MCP clients. Configured for what this service needs and
 * nothing more: authorization code with PKCE (required for public clients), one resource and one scope, opaque
 * access tokens checked in-process (so revocation is immediate), no refresh tokens, dynamic registration of public
 * clients. Each setting below answers a trap met by real MCP clients (see the notes in the README).
 */
export async function createProvider(db: Kysely<Database>, settings: OAuthSettings): Promise<Provider> {
  const issuer = issuerOf(settings.baseUrl);
  const resource = mcpResourceOf(settings.baseUrl);
  const cookieKey = deriveKey(settings.secretKey, 'oauth-cookies').toString('base64url');

  const configuration: Configuration = {
    adapter: adapterFactory(db, {
      // Read when a grant is saved, right after the client was resolved: a cache hit of the provider's.
      documentClientName: async (clientId) => (await provider.Client.find(clientId))?.clientName,
    }),
    clients: [],
    jwks: { keys: [await signingKey(db, settings.secretKey)] },
    cookies: { keys: [cookieKey] },
    scopes: [MCP_SCOPE],
    claims: {},
    subjectTypes: ['public'],
    responseTypes: ['code'],
    clientAuthMethods: [...CLIENT_AUTH_METHODS],
    clientDefaults: {
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
      id_token_signed_response_alg: 'ES256',
    },
    enabledJWA: { idTokenSigningAlgValues: ['ES256'] },
    pkce: { required: (_ctx, client) => client.clientAuthMethod === 'none' },
    routes: {
      authorization: '/authorize',
      token: '/token',
      registration: '/register',
      revocation: '/revoke',
      jwks: '/jwks',
      end_session: '/session/end',
    },
    features: {
      ...PROVIDER_FEATURES,
      clientIdMetadataDocument: settings.clientMetadataDocuments?.feature ?? { enabled: false },
      registration: {
        enabled: true,
        initialAccessToken: false,
        idFactory: () => newId(CLIENT_ID_PREFIX),
      },
      resourceIndicators: {
        enabled: true,
        // Clients that send no `resource` (custom GPT actions, some CLIs) still get a token for /mcp.
        defaultResource: () => resource,
        useGrantedResource: () => true,
        // Exact: the router has already rewritten equivalent spellings to this one (`canonicalResource`).
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== resource) throw new errors.InvalidTarget('unknown resource');
          return { scope: MCP_SCOPE, audience: resource, accessTokenTTL: settings.accessTokenTtlSeconds, accessTokenFormat: 'opaque' };
        },
      },
    },
    // RFC 6749 §4.1.2.1: an unknown scope is `invalid_scope` before the consent page, not `access_denied` after
    // it. The provider ignores scopes it does not know (they could be a resource's), so the one vocabulary is
    // checked here, late in its authorization checks, where its own error handling (and ours) applies.
    extraParams: {
      scope: (_ctx, value) => {
        const unknown = (value ?? '').split(' ').filter((s) => s !== '' && s !== MCP_SCOPE);
        if (unknown.length > 0) throw new errors.InvalidScope(`only the "${MCP_SCOPE}" scope is offered`, unknown.join(' '));
      },
    },
    // One outbound request only: a client metadata document that `allowFetch` has just approved, through the
    // service's outbound-address guard. Every other fetched URI (jwks_uri, sector_identifier_uri, request_uri) is
    // stripped at registration and from documents; this makes a missed one fail closed instead of reaching a
    // loopback or private host outside the guard.
    fetch: settings.clientMetadataDocuments?.fetch ?? (() => Promise.reject(new Error('the authorization server makes no outbound requests'))),
    ...(settings.clientMetadataDocuments ? { fetchResponseBodyLimits: { 'client_id metadata document': settings.clientMetadataDocuments.maxBytes } } : {}),
    sectorIdentifierUriValidate: () => false,
    // A second authorization in the same browser must not end the first token (tokens are not session-bound).
    // No `issueRefreshToken`: the default issues none without `offline_access`, and overriding it would make the
    // provider register (and advertise) the refresh grant.
    expiresWithSession: () => false,
    ttl: {
      // A function, not a number: a number would silently override the resource server's TTL (same value here).
      AccessToken: () => settings.accessTokenTtlSeconds,
      AuthorizationCode: 60,
      Interaction: 3600,
      Session: 14 * 24 * 3600,
      Grant: 365 * 24 * 3600,
      RegistrationAccessToken: 365 * 24 * 3600,
    },
    loadExistingGrant: async (ctx) => {
      const grantId = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session?.grantIdFor(ctx.oidc.client!.clientId);
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    findAccount: (_ctx, accountId) => ({ accountId, claims: () => ({ sub: accountId }) }),
    interactions: { url: (_ctx, interaction) => `${OAUTH_MOUNT}/interaction/${interaction.uid}` },
    clientBasedCORS: () => true,
    renderError: (ctx, out) => {
      // Always JSON (RFC 6749 5.2), even when a browser prefers HTML; never internals.
      ctx.type = 'application/json';
      ctx.body = { error: out.error, error_description: out.error_description };
    },
  };

  const provider = new Provider(issuer, configuration);
  provider.proxy = settings.trustProxy;
  pinOrigin(provider, settings.baseUrl);

  // Outermost, so that it reads each answer as finally shaped.
  if (settings.clientMetadataDocuments) provider.use(settings.clientMetadataDocuments.explainRefusals);

  // RFC 9700 §4.11.2: the authorization endpoint must not be an open redirector. Anyone can register a public
  // client with any redirect URI, so an error found before the user has seen the consent page (prompt=none's
  // login_required, a bad parameter) is answered here instead of bouncing the browser to that unvetted address.
  // Confidential clients were registered by a workspace over the authenticated API, and errors after the user's
  // own choice (Deny) still go back to the client, as RFC 6749 §4.1.2.1 expects.
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.oidc?.route !== 'authorization' || ctx.status < 300 || ctx.status >= 400 || !isAnonymous(ctx.oidc.client)) return;
    const location = ctx.response.get('location');
    const target = location ? new URL(location, issuer) : undefined;
    const error = target?.searchParams.get('error');
    if (!error) return;
    ctx.remove('location');
    ctx.status = error === 'server_error' ? 500 : 400;
    ctx.type = 'application/json';
    ctx.body = { error, error_description: target?.searchParams.get('error_description') ?? 'The authorization request was refused.' };
  });

  // Spec 7.5: a path under the mount that no feature serves (PAR, userinfo, introspection, ...) answers in the
  // OAuth shape too, not Koa's plain-text "Not Found".
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.status !== 404 || ctx.body !== undefined) return;
    ctx.body = { error: 'invalid_request', error_description: `unrecognized route or not allowed method (${ctx.method} on ${ctx.path.slice(0, 100)})` };
    ctx.status = 404;
  });

  // Confidential client secrets are stored as SHA-256 digests (spec 4.2): compare digests in constant time.
  provider.Client.prototype.compareClientSecret = function compareDigest(this: { clientSecret?: string }, actual: string) {
    return this.clientSecret !== undefined && constantTimeEqual(sha256Hex(actual), this.clientSecret);
  };
  // No logout ever redirects to a client's address (an anonymous registration would make it an open redirect):
  // registrations drop post_logout_redirect_uris, and clients stored before that rule are covered too.
  provider.Client.prototype.postLogoutRedirectUriAllowed = () => false;
  // `http://127.0.0.1:33418` and `http://127.0.0.1:33418/` are one loopback callback, on any port for a native client.
  acceptBothLoopbackSpellings(provider.Client.prototype);
  return provider;
}

/**
 * The provider builds every absolute address it emits (discovery, redirects to resume an authorization, the
 * registration client URI) from the request's host and protocol. They are pinned to `BASE_URL`, so a
 * client-sent `Host` or `X-Forwarded-Host` can never put another origin into them, behind a proxy or not.
 * Koa reads both through its request prototype, which each application may extend.
 */
function pinOrigin(provider: Provider, baseUrl: string): void {
  const origin = new URL(baseUrl);
  Object.defineProperties(provider.request, {
    host: { get: () => origin.host, configurable: true },
    protocol: { get: () => origin.protocol.slice(0, -1), configurable: true },
  });
}
