import * as oc from 'openid-client';
import { expect, it } from 'vitest';
import { Browser } from '../support/oauth-browser.js';
import { describeEachDb } from '../support/server.js';

/**
 * openid-client 6 with its defaults: `discovery()` reads the OpenID Connect document (`{issuer}/.well-known/
 * openid-configuration`), not the RFC 8414 one, and trusts what it says. Both kinds of client run end to end on
 * what that document advertises, which must equal the RFC 8414 one. `allowInsecureRequests` only lets it speak http to the local test server.
 */

const CB = 'https://claude.ai/api/mcp/auth_callback';
const GPT = 'https://chat.openai.com/aip/g-7/oauth/callback';
const insecure = { execute: [oc.allowInsecureRequests] };

describeEachDb('openid-client with its default discovery', (server) => {
  it('a public client (DCR, PKCE) and a confidential client (made over REST) complete the code flow and call /mcp and REST', async () => {
    const ws = await server().workspace();
    const base = server().service.baseUrl;
    const issuer = new URL(`${base}/api/oauth/mcp`);
    const mcpCall = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const mcpHeaders = new Headers({ 'content-type': 'application/json', accept: 'application/json, text/event-stream' });

    // Public: registration through the endpoint the discovered document names.
    const pub = await oc.dynamicClientRegistration(issuer, { client_name: 'openid-client public', redirect_uris: [CB], token_endpoint_auth_method: 'none' }, oc.None(), insecure);
    const meta = pub.serverMetadata();
    expect(meta.issuer).toBe(issuer.href);
    expect(meta.grant_types_supported).toEqual(['authorization_code']);
    expect(meta.scopes_supported).toEqual(['mcp']);
    expect(meta.dpop_signing_alg_values_supported).toBeUndefined();
    expect(meta.end_session_endpoint).toBeUndefined();
    expect(meta.pushed_authorization_request_endpoint).toBeUndefined();

    const verifier = oc.randomPKCECodeVerifier();
    const state = oc.randomState();
    const resource = `${base}/mcp`;
    const authUrl = oc.buildAuthorizationUrl(pub, { redirect_uri: CB, scope: 'mcp', state, resource, code_challenge: await oc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' });
    const callback = await new Browser().authorize(authUrl.href, base, ws.api_key);
    const tokens = await oc.authorizationCodeGrant(pub, callback, { pkceCodeVerifier: verifier, expectedState: state }, { resource });
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.scope).toBe('mcp');
    expect(tokens.refresh_token).toBeUndefined();
    const mcp = await oc.fetchProtectedResource(pub, tokens.access_token, new URL(resource), 'POST', mcpCall, mcpHeaders);
    expect(mcp.status).toBe(200);

    // Confidential: made by the workspace over REST, authenticated with client_secret_post, PKCE as well.
    const created = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/oauth-clients`, { key: ws.api_key, body: { client_name: 'openid-client confidential', redirect_uris: [GPT] } });
    expect(created.status).toBe(201);
    const conf = await oc.discovery(issuer, created.body.client_id as string, undefined, oc.ClientSecretPost(created.body.client_secret as string), insecure);
    const verifier2 = oc.randomPKCECodeVerifier();
    const state2 = oc.randomState();
    const authUrl2 = oc.buildAuthorizationUrl(conf, { redirect_uri: GPT, scope: 'mcp', state: state2, code_challenge: await oc.calculatePKCECodeChallenge(verifier2), code_challenge_method: 'S256' });
    const callback2 = await new Browser().authorize(authUrl2.href, base, ws.api_key);
    const tokens2 = await oc.authorizationCodeGrant(conf, callback2, { pkceCodeVerifier: verifier2, expectedState: state2 });
    expect(tokens2.token_type.toLowerCase()).toBe('bearer');
    const rest = await oc.fetchProtectedResource(conf, tokens2.access_token, new URL(`${base}/api/v1/workspaces/${ws.workspace_id}/api-keys`), 'GET');
    expect(rest.status).toBe(200);
    const mcp2 = await oc.fetchProtectedResource(conf, tokens2.access_token, new URL(resource), 'POST', mcpCall, mcpHeaders);
    expect(mcp2.status).toBe(200);

    // The revocation endpoint the document names works for the confidential client.
    await oc.tokenRevocation(conf, tokens2.access_token);
    // openid-client turns the 401 and its WWW-Authenticate challenge into an error carrying the response.
    const after = await oc.fetchProtectedResource(conf, tokens2.access_token, new URL(`${base}/api/v1/workspaces/${ws.workspace_id}/api-keys`), 'GET').catch((e: unknown) => e);
    expect(after).toBeInstanceOf(oc.WWWAuthenticateChallengeError);
    expect((after as oc.WWWAuthenticateChallengeError).response.status).toBe(401);
  });
});
