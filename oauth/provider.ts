import { createHmac, generateKeyPairSync } from 'node:crypto';
import type { Kysely } from 'kysely';
import Provider, { type Configuration, errors, type JWK } from 'oidc-provider';
import { claimMetaFlag, readMeta } from '../db/repositories/workspaces.repo.js';
import type { Database } from '../db/schema.js';
import { open, seal } from '../src/core/secret-box.js';
import { constantTimeEqual, newId, sha256Hex } from '../src/core/ids.js';
import { CLIENT_ID_PREFIX, MCP_SCOPE, OAUTH_MOUNT } from '../src/core/oauth-clients/oauth-clients.service.js';

export { OAUTH_MOUNT };
import { adapterFactory } from './adapter.js';


export interface OAuthSettings {
  baseUrl: string;
  /** Seconds an access token lives; there is no refresh grant (spec 4.2), so clients authorize again. */
  accessTokenTtlSeconds: number;
  secretKey: Buffer;
}

export function issuerOf(baseUrl: string): string {
  return `${baseUrl}${OAUTH_MOUNT}`;
}

/** The one protected resource: tokens are bound to it exactly (its `aud`), trailing slash and case included. */
export function mcpResourceOf(baseUrl: string): string {
  return `${baseUrl}/mcp`;
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
 * The embedded authorization server (oidc-provider 9) for MCP clients. Configured for what this service needs and
 * nothing more: authorization code with PKCE (required for public clients), one resource and one scope, opaque
 * access tokens checked in-process (so revocation is immediate), no refresh tokens, dynamic registration of public
 * clients. Each setting below answers a trap met by real MCP clients (see the notes in the README).
 */
export async function createProvider(db: Kysely<Database>, settings: OAuthSettings): Promise<Provider> {
  const issuer = issuerOf(settings.baseUrl);
  const resource = mcpResourceOf(settings.baseUrl);
  const cookieKey = createHmac('sha256', settings.secretKey).update('oauth-cookies').digest('base64url');

  const configuration: Configuration = {
    adapter: adapterFactory(db),
    clients: [],
    jwks: { keys: [await signingKey(db, settings.secretKey)] },
    cookies: { keys: [cookieKey] },
    scopes: [MCP_SCOPE],
    claims: {},
    responseTypes: ['code'],
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
      devInteractions: { enabled: false },
      userinfo: { enabled: false },
      introspection: { enabled: false },
      revocation: { enabled: true },
      rpInitiatedLogout: { enabled: true },
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
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator.replace(/\/+$/, '') !== resource) throw new errors.InvalidTarget('unknown resource');
          return { scope: MCP_SCOPE, audience: resource, accessTokenTTL: settings.accessTokenTtlSeconds, accessTokenFormat: 'opaque' };
        },
      },
    },
    // A second authorization in the same browser must not end the first token (tokens are not session-bound).
    expiresWithSession: () => false,
    issueRefreshToken: () => false,
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
  provider.proxy = true;

  // Confidential client secrets are stored as SHA-256 digests (spec 4.2): compare digests in constant time.
  provider.Client.prototype.compareClientSecret = function compareDigest(this: { clientSecret?: string }, actual: string) {
    return this.clientSecret !== undefined && constantTimeEqual(sha256Hex(actual), this.clientSecret);
  };
  return provider;
}
