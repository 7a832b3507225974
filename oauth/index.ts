import type { ErrorRequestHandler, Router } from 'express';
import type { Container } from '../src/container.js';
import type { Principal } from '../src/core/principal.js';
import { createClientMetadataDocuments } from './client-metadata-documents.js';
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

/** Builds the authorization server for a base URL (known only once the process listens). */
export async function createOAuth(container: Container, baseUrl: string): Promise<OAuthDoor> {
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
    router: oauthHandlers({ provider, apiKeys: services.apiKeys, baseUrl, secretKey, clientMetadataDocuments: cimd.enabled }),
    verifyToken: createTokenVerifier({ provider, resource: mcpResourceOf(baseUrl), apiKeys: services.apiKeys, metadataDocumentClients: cimd.enabled }),
    resourceMetadataUrl: `${baseUrl}/.well-known/oauth-protected-resource/mcp`,
  };
}
