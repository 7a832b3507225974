import type { ErrorRequestHandler, Router } from 'express';
import type { Db } from '../db/connect.js';
import type { ApiKeysService } from '../src/core/api-keys/api-keys.service.js';
import type { GrantAccessService } from '../src/core/connected-apps/grant-access.js';
import type { Principal } from '../src/core/principal.js';
import type { SessionsService } from '../src/core/sessions/sessions.service.js';
import type { Logger } from '../src/observability/logger.js';
import type { RateLimiter } from '../src/web/rate-limit.js';
import { type ClientMetadataDocumentSettings, createClientMetadataDocuments } from './client-metadata-documents.js';
import { createProvider, mcpResourceOf } from './provider.js';
import { oauthHandlers } from './router.js';
import { createTokenVerifier } from './token-verifier.js';

export interface OAuthDoor {
  /**
   * Mounted as one unit at the root: the routes under /api/oauth/mcp and the well-known documents, then the
   * renderer that answers every failure under the mount in RFC 6749 form (spec 7.5).
   */
  router: [Router, ErrorRequestHandler];
  /** Resolves an access token to a Principal (null: not a token of ours); throws `invalid_token`. */
  verifyToken(token: string): Promise<Principal | null>;
  resourceMetadataUrl: string;
}

/** What the authorization server takes from the container (which satisfies it as it is). */
export interface OAuthDeps {
  db: Db;
  secretKey: Buffer;
  logger: Logger;
  services: { apiKeys: ApiKeysService; sessions: SessionsService; grantAccess: GrantAccessService };
  /** A named per-minute limiter on the store the container chose (memory, PostgreSQL or Redis). */
  rateLimiter(name: string, perMinute: number): RateLimiter;
  config: {
    allowLocalUrls: boolean;
    oauthAccessTokenTtlSeconds: number;
    /** TRUST_PROXY as read: false, a hop count, or addresses; anything but false sets the provider's `proxy`. */
    trustProxy: false | number | string[];
    /** OAUTH_CLIENT_METADATA_DOCUMENTS (`enabled`) and its fetch limits. */
    clientMetadataDocuments: Omit<ClientMetadataDocumentSettings, 'allowLocal'> & { enabled: boolean; fetchesPerMinute: number };
  };
}

/** Builds the authorization server for a base URL (known only once the process listens). */
export async function createOAuth(container: OAuthDeps, baseUrl: string): Promise<OAuthDoor> {
  const { db, secretKey, services, config } = container;
  const cimd = config.clientMetadataDocuments;
  const clientMetadataDocuments = cimd.enabled
    ? createClientMetadataDocuments(
        { ...cimd, allowLocal: config.allowLocalUrls },
        // Counted where the other per-address limits are, so every process shares one budget.
        { throttle: container.rateLimiter('cimd', cimd.fetchesPerMinute), log: container.logger },
      )
    : undefined;
  const provider = await createProvider(db.kysely, { baseUrl, secretKey, accessTokenTtlSeconds: config.oauthAccessTokenTtlSeconds, trustProxy: config.trustProxy !== false, clientMetadataDocuments });
  return {
    router: oauthHandlers({ provider, apiKeys: services.apiKeys, sessions: services.sessions, grantAccess: services.grantAccess, baseUrl, secretKey, clientMetadataDocuments: cimd.enabled }),
    verifyToken: createTokenVerifier({ provider, resource: mcpResourceOf(baseUrl), grantAccess: services.grantAccess, metadataDocumentClients: cimd.enabled }),
    resourceMetadataUrl: `${baseUrl}/.well-known/oauth-protected-resource/mcp`,
  };
}
