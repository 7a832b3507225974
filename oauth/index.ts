import type { Router } from 'express';
import type { Container } from '../src/container.js';
import type { Principal } from '../src/core/principal.js';
import { createProvider, mcpResourceOf } from './provider.js';
import { oauthRouter } from './router.js';
import { createTokenVerifier } from './token-verifier.js';

export interface OAuthDoor {
  router: Router;
  /** Resolves an access token to a Principal (null: not a token of ours); throws `invalid_token`. */
  verifyToken(token: string): Promise<Principal | null>;
  resourceMetadataUrl: string;
}

/** Builds the authorization server for a base URL (known only once the process listens). */
export async function createOAuth(container: Container, baseUrl: string): Promise<OAuthDoor> {
  const { db, secretKey, services, config } = container;
  const provider = await createProvider(db.kysely, { baseUrl, secretKey, accessTokenTtlSeconds: config.oauthAccessTokenTtlSeconds });
  return {
    router: oauthRouter({ provider, apiKeys: services.apiKeys, baseUrl, secretKey }),
    verifyToken: createTokenVerifier({ provider, resource: mcpResourceOf(baseUrl), apiKeys: services.apiKeys }),
    resourceMetadataUrl: `${baseUrl}/.well-known/oauth-protected-resource/mcp`,
  };
}
