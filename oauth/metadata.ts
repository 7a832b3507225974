import { MCP_SCOPE } from '../src/core/oauth-clients/oauth-clients.service.js';
import { CLIENT_AUTH_METHODS } from './provider.js';

/**
 * The one description of the authorization server, served at every address a client may look (RFC 8414 §3 and
 * OpenID Connect Discovery 1.0 §4, both under the issuer and path-inserted; MCP 2025-11-25 lets clients read
 * either). It states what the server does and nothing more: one scope, the code flow with PKCE S256, query
 * responses, no refresh grant, no DPoP, no PAR, no logout endpoint. oidc-provider's own discovery would describe
 * its features instead, so the router answers these addresses before the provider does; every address answers
 * from BASE_URL, never from request headers.
 *
 * `subject_types_supported` and `id_token_signing_alg_values_supported` are required by OpenID Connect
 * Discovery for the document to parse in OIDC libraries; no ID token is issued, since `openid` is not a scope
 * offered here.
 *
 * `client_id_metadata_document_supported` is stated only while metadata documents are accepted: clients pick
 * them only when it is true and `none` is among the token endpoint's methods (which it always is here), and a
 * failed document fetch has no fallback to registration, so the document must never promise what is off.
 */
export function authorizationServerMetadata(issuer: string, options: { clientMetadataDocuments?: boolean } = {}): Record<string, unknown> {
  return {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    registration_endpoint: `${issuer}/register`,
    revocation_endpoint: `${issuer}/revoke`,
    jwks_uri: `${issuer}/jwks`,
    scopes_supported: [MCP_SCOPE],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
    revocation_endpoint_auth_methods_supported: [...CLIENT_AUTH_METHODS],
    authorization_response_iss_parameter_supported: true,
    request_uri_parameter_supported: false,
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['ES256'],
    ...(options.clientMetadataDocuments === true ? { client_id_metadata_document_supported: true } : {}),
  };
}

/** Every address at which the metadata above is served, relative to the base URL. */
export function authorizationServerMetadataPaths(mount: string): string[] {
  return [
    `/.well-known/oauth-authorization-server${mount}`,
    '/.well-known/oauth-authorization-server',
    `${mount}/.well-known/oauth-authorization-server`,
    `/.well-known/openid-configuration${mount}`,
    `${mount}/.well-known/openid-configuration`,
  ];
}

/** RFC 9728 protected resource metadata for the MCP endpoint. */
export function protectedResourceMetadata(resource: string, issuer: string): Record<string, unknown> {
  return {
    resource,
    authorization_servers: [issuer],
    scopes_supported: [MCP_SCOPE],
    bearer_methods_supported: ['header'],
    resource_name: 'Multi-network publishing (MCP)',
  };
}
