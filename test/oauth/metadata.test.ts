import { createServer } from 'node:http';
import { expect, it } from 'vitest';
import { authorizationServerMetadataPaths } from '../../oauth/metadata.js';
import { createProvider, PROVIDER_FEATURES } from '../../oauth/provider.js';
import { Browser, pkcePair } from '../support/oauth-browser.js';
import { describeEachDb } from '../support/server.js';

/**
 * Meta-tests: what the authorization server has switched on and what it tells clients are pinned here, so a
 * change (or an oidc-provider upgrade that turns a default on) cannot silently reopen a feature: a redirect after
 * logout, a second discovery document, a native feature the document does not offer.
 */

const CB = 'https://claude.ai/api/mcp/auth_callback';
const ENABLED = ['clientIdMetadataDocument', 'registration', 'resourceIndicators', 'revocation', 'rpInitiatedLogout'];

function expectedDocument(base: string): Record<string, unknown> {
  const issuer = `${base}/api/oauth/mcp`;
  return {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    registration_endpoint: `${issuer}/register`,
    revocation_endpoint: `${issuer}/revoke`,
    jwks_uri: `${issuer}/jwks`,
    scopes_supported: ['mcp'],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    authorization_response_iss_parameter_supported: true,
    request_uri_parameter_supported: false,
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: ['ES256'],
    client_id_metadata_document_supported: true,
  };
}

it('every feature oidc-provider has is named in PROVIDER_FEATURES, and only the five the service uses are on', async () => {
  // The library's own defaults: a feature added by an upgrade must get a decision here before it can be on.
  const { defaults } = (await import('oidc-provider/lib/helpers/defaults.js' as string)) as { defaults: { features: Record<string, { enabled?: boolean }> } };
  expect(Object.keys(PROVIDER_FEATURES).sort()).toEqual(Object.keys(defaults.features).sort());
  const on = Object.entries(PROVIDER_FEATURES).filter(([, f]) => f.enabled).map(([name]) => name);
  expect(on.sort()).toEqual(ENABLED);
});

describeEachDb('OAuth metadata', (server) => {
  it('one document at every discovery address (RFC 8414 and OIDC, path-inserted and appended), exactly this one', async () => {
    const base = server().service.baseUrl;
    expect(authorizationServerMetadataPaths('/api/oauth/mcp')).toEqual(
      expect.arrayContaining(['/.well-known/oauth-authorization-server/api/oauth/mcp', '/.well-known/openid-configuration/api/oauth/mcp', '/api/oauth/mcp/.well-known/openid-configuration']),
    );
    for (const path of authorizationServerMetadataPaths('/api/oauth/mcp')) {
      const res = await fetch(`${base}${path}`);
      expect(res.status, path).toBe(200);
      expect(await res.json(), path).toEqual(expectedDocument(base));
    }
  });

  it("the provider's own view of itself (its native discovery, served bare) offers nothing the document does not", async () => {
    const { container } = server();
    const http = createServer();
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    const bare = `http://127.0.0.1:${(http.address() as { port: number }).port}`;
    try {
      const provider = await createProvider(container.db.kysely, { baseUrl: bare, secretKey: container.secretKey, accessTokenTtlSeconds: 60, trustProxy: false });
      http.on('request', provider.callback());
      const native = (await (await fetch(`${bare}/.well-known/openid-configuration`, { headers: { 'x-forwarded-host': 'attacker.invalid' } })).json()) as Record<string, unknown>;
      expect(native).toMatchObject({
        grant_types_supported: ['authorization_code'],
        response_types_supported: ['code'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        subject_types_supported: ['public'],
        claims_parameter_supported: false,
        request_uri_parameter_supported: false,
      });
      expect(native.scopes_supported).not.toContain('offline_access');
      expect(String(native.authorization_endpoint).startsWith(bare)).toBe(true);
      for (const absent of [
        'dpop_signing_alg_values_supported',
        'pushed_authorization_request_endpoint',
        'userinfo_endpoint',
        'introspection_endpoint',
        'device_authorization_endpoint',
        'backchannel_authentication_endpoint',
        'request_parameter_supported',
        'authorization_details_types_supported',
        'client_id_metadata_document_supported',
        'tls_client_certificate_bound_access_tokens',
        'challenge_endpoint',
      ]) {
        expect(native[absent], absent).toBeUndefined();
      }
      // rpInitiatedLogout stays on for the provider's own account-switch step only: the served document does
      // not name it and the router refuses /session/end (see oauth-hardening).
      expect(native.end_session_endpoint).toBeDefined();
    } finally {
      http.close();
    }
  });

  it('the switched-off features do not answer, whatever a client tries', async () => {
    const ws = await server().workspace();
    const base = server().service.baseUrl;
    for (const [method, path] of [['POST', '/request'], ['GET', '/me'], ['POST', '/token/introspection'], ['GET', '/session/end'], ['POST', '/device/auth'], ['POST', '/backchannel']] as const) {
      const res = await fetch(`${base}/api/oauth/mcp${path}`, { method, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: method === 'POST' ? 'client_id=x' : undefined });
      expect(res.status, path).toBe(404);
      expect(await res.json(), path).toMatchObject({ error: expect.any(String), error_description: expect.any(String) });
    }

    // A full code flow whose token request carries a DPoP header: DPoP is off, so the token is a plain Bearer
    // token (a DPoP-enabled provider would refuse the malformed proof with invalid_dpop_proof).
    const reg = (await (await fetch(`${base}/api/oauth/mcp/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'dpop', redirect_uris: [CB] }) })).json()) as Record<string, string>;
    const { verifier, challenge } = pkcePair();
    const auth = `${base}/api/oauth/mcp/authorize?${new URLSearchParams({ client_id: reg.client_id!, redirect_uri: CB, response_type: 'code', scope: 'mcp', code_challenge: challenge, code_challenge_method: 'S256' })}`;
    const callback = await new Browser().authorize(auth, base, ws.api_key);
    const token = await fetch(`${base}/api/oauth/mcp/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: 'not.a.proof' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: CB, client_id: reg.client_id!, code_verifier: verifier }).toString(),
    });
    const body = (await token.json()) as Record<string, string>;
    expect(token.status, JSON.stringify(body)).toBe(200);
    expect(body.token_type).toBe('Bearer');
    expect(body.refresh_token).toBeUndefined();
  });
});
