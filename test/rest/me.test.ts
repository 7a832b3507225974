import { expect, it } from 'vitest';
import type { Me } from '../../src/core/workspaces/workspaces.schema.js';
import { Browser, pkcePair } from '../support/oauth-browser.js';
import { describeEachDb, type TestServer } from '../support/server.js';

const CALLBACK = 'https://claude.ai/api/mcp/auth_callback';

/** Registration, PKCE, consent with `apiKey` and the code exchange, as an MCP client does; returns the access token. */
async function oauthToken(server: TestServer, apiKey: string, clientName: string): Promise<{ clientId: string; accessToken: string }> {
  const base = server.service.baseUrl;
  const registered = await fetch(`${base}/api/oauth/mcp/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: clientName, redirect_uris: [CALLBACK] }),
  });
  const clientId = ((await registered.json()) as { client_id: string }).client_id;
  const { verifier, challenge } = pkcePair();
  const auth = new URL(`${base}/api/oauth/mcp/authorize`);
  auth.search = new URLSearchParams({ client_id: clientId, redirect_uri: CALLBACK, response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256', state: 's', scope: 'mcp', resource: `${base}/mcp` }).toString();
  const callback = await new Browser().authorize(auth.toString(), base, apiKey);
  const token = await fetch(`${base}/api/oauth/mcp/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: callback.searchParams.get('code') ?? '', redirect_uri: CALLBACK, client_id: clientId, code_verifier: verifier, resource: `${base}/mcp` }).toString(),
  });
  expect(token.status).toBe(200);
  return { clientId, accessToken: ((await token.json()) as { access_token: string }).access_token };
}

describeEachDb('GET /api/v1/me', (server) => {
  it('names the workspace and the API key a key is, for each of two workspaces', async () => {
    const acme = await server().workspace('Acme Coffee');
    const other = await server().workspace('Other shop');
    const second = await server().request('POST', `/api/v1/workspaces/${acme.workspace_id}/api-keys`, { key: acme.api_key, body: { name: 'zapier' } });

    const me = await server().request<Me>('GET', '/api/v1/me', { key: acme.api_key });
    expect(me.status).toBe(200);
    expect(me.body.workspace).toEqual({ id: acme.workspace_id, name: 'Acme Coffee', plan: 'default', created_at: expect.stringMatching(/Z$/) });
    expect(me.body.credential).toEqual({ kind: 'api_key', key_id: acme.key_id, name: 'first key', prefix: acme.api_key.slice(0, 13) });

    const viaSecond = await server().request<Me>('GET', '/api/v1/me', { key: second.body.api_key as string });
    expect(viaSecond.body.workspace.id).toBe(acme.workspace_id);
    expect(viaSecond.body.credential).toMatchObject({ kind: 'api_key', key_id: second.body.id, name: 'zapier' });

    const theirs = await server().request<Me>('GET', '/api/v1/me', { key: other.api_key });
    expect(theirs.body.workspace).toMatchObject({ id: other.workspace_id, name: 'Other shop' });
    expect(theirs.body.credential).toMatchObject({ key_id: other.key_id });
    // The answer never carries a secret.
    expect(JSON.stringify(me.body)).not.toContain(acme.api_key);
  });

  it('follows a plan change', async () => {
    const ws = await server().workspace();
    await server().container.services.workspaces.setPlan(ws.workspace_id, 'business');
    const me = await server().request<Me>('GET', '/api/v1/me', { key: ws.api_key });
    expect(me.body.workspace.plan).toBe('business');
  });

  it('names the OAuth client and the approving key of an access token', async () => {
    const ws = await server().workspace('Agency');
    const { clientId, accessToken } = await oauthToken(server(), ws.api_key, 'Claude for Acme');
    const me = await server().request<Me>('GET', '/api/v1/me', { key: accessToken });
    expect(me.status).toBe(200);
    expect(me.body).toEqual({
      workspace: { id: ws.workspace_id, name: 'Agency', plan: 'default', created_at: expect.any(String) },
      credential: { kind: 'oauth', client_id: clientId, client_name: 'Claude for Acme', key_id: ws.key_id },
      // The token acts with its approving key's role and brands: the first key of a workspace is its owner.
      actor: { role: 'owner', brand_ids: null, key_id: ws.key_id, user_id: null, email: null },
    });
  });

  it('refuses a missing, unknown or revoked credential with 401', async () => {
    const ws = await server().workspace();
    const second = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: ws.api_key, body: { name: 'short-lived' } });
    const none = await server().request('GET', '/api/v1/me');
    expect(none.status).toBe(401);
    expect(none.body.error).toBe('invalid_api_key');
    const unknown = await server().request('GET', '/api/v1/me', { key: `svc_live_${'0'.repeat(32)}` });
    expect(unknown.status).toBe(401);
    await server().request('DELETE', `/api/v1/workspaces/${ws.workspace_id}/api-keys/${second.body.id as string}`, { key: ws.api_key });
    const revoked = await server().request('GET', '/api/v1/me', { key: second.body.api_key as string });
    expect(revoked.status).toBe(401);
    expect(revoked.body.error).toBe('invalid_api_key');
  });
});
