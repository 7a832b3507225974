import type Provider from 'oidc-provider';
import type { GrantAccessService } from '../src/core/connected-apps/grant-access.js';
import { ServiceError } from '../src/core/errors.js';
import { MCP_SCOPE, parseAccountId } from '../src/core/oauth-clients/oauth-clients.service.js';
import type { Principal } from '../src/core/principal.js';
import { isMetadataDocumentClientId } from '../src/core/connected-apps/connected-apps.service.js';

/** oidc-provider's opaque access tokens: 43 base64url characters. */
const OPAQUE_TOKEN = /^[A-Za-z0-9_-]{43}$/;

function invalidToken(): ServiceError {
  return new ServiceError('invalid_token', 'The access token is expired or revoked. Authorize again.');
}

/**
 * Turns an access token into a Principal, for /mcp and the REST API alike. The token must exist (revocation
 * deletes it), be unexpired, be bound to the MCP resource with the `mcp` scope, belong to a live grant and
 * client, and whoever approved it (an API key, a person) must still hold a role that covers some of it; it must not be sender-constrained. Returns null for strings that are not tokens
 * of ours (the caller answers `invalid_api_key`).
 */
export function createTokenVerifier(deps: { provider: Provider; resource: string; grantAccess: Pick<GrantAccessService, 'accessFor'>; metadataDocumentClients: boolean }) {
  return async function verify(presented: string): Promise<Principal | null> {
    if (!OPAQUE_TOKEN.test(presented)) return null;
    const token = await deps.provider.AccessToken.find(presented);
    if (!token || token.isExpired) throw invalidToken();
    // A sender-constrained token (DPoP `cnf.jkt`, mTLS `x5t#S256`) is never accepted as a plain bearer token:
    // nothing here verifies the proof, so accepting it would strip the binding (RFC 9449 §7.1). DPoP is off, so
    // only tokens minted before that could carry one.
    if (token.jkt !== undefined || token['x5t#S256'] !== undefined) throw invalidToken();
    const scopes = new Set(String(token.scope ?? '').split(' '));
    if (token.aud !== deps.resource || !scopes.has(MCP_SCOPE)) throw invalidToken();
    const account = parseAccountId(token.accountId ?? '');
    if (!account) throw invalidToken();
    const clientId = token.clientId ?? '';
    // A metadata-document client lives in no table, so there is no deletion to notice; revoking it deletes its
    // grants, which the grant check below sees. Looking it up would fetch its document from inside /mcp calls
    // whenever the cache has expired, and would make a call fail because the client's host is down.
    const documentClient = deps.metadataDocumentClients && isMetadataDocumentClientId(clientId);
    // The grant, its client and what the grant may do now are read together: one round trip's wait, not three.
    const [grant, client, access] = await Promise.all([
      token.grantId ? deps.provider.Grant.find(token.grantId) : undefined,
      documentClient ? { clientId } : deps.provider.Client.find(clientId),
      // The role and brands the grant was given, narrowed to what its approver (a person or a key) holds now: a
      // demotion narrows its tokens, a removal or a revoked key ends them.
      token.grantId ? deps.grantAccess.accessFor(account.workspaceId, account.approver, token.grantId) : undefined,
    ]);
    if (!grant || !client || grant.clientId !== clientId || !access) throw invalidToken();
    const approver = account.approver;
    return approver.kind === 'user'
      ? { kind: 'oauth', workspaceId: account.workspaceId, clientId: client.clientId, keyId: null, userId: approver.userId, ...access }
      : { kind: 'oauth', workspaceId: account.workspaceId, clientId: client.clientId, keyId: approver.keyId, ...access };
  };
}
