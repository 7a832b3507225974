import * as oidc from 'openid-client';
import { expect, it, vi } from 'vitest';
import { Browser, pkcePair } from '../support/oauth-browser.js';
import { describeEachDb, type TestServer } from '../support/server.js';

const CLAUDE = 'https://claude.ai/api/mcp/auth_callback';
const GPT = 'https://chat.openai.com/aip/g-123/oauth/callback';

async function register(base: string, body: Record<string, unknown>) {
  const res = await fetch(`${base}/api/oauth/mcp/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function tokenRequest(base: string, params: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/api/oauth/mcp/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(params).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

/** DCR + PKCE + consent + code exchange, as an MCP client does; returns the token and what it took. */
async function publicFlow(server: TestServer, apiKey: string, options: { redirect?: string; scope?: string | null; browser?: Browser; clientId?: string } = {}) {
  const base = server.service.baseUrl;
  const redirect = options.redirect ?? CLAUDE;
  const clientId = options.clientId ?? ((await register(base, { client_name: 'Test MCP client', redirect_uris: [redirect] })).body.client_id as string);
  const { verifier, challenge } = pkcePair();
  const auth = new URL(`${base}/api/oauth/mcp/authorize`);
  const params: Record<string, string> = { client_id: clientId, redirect_uri: redirect, response_type: 'code', code_challenge: challenge, code_challenge_method: 'S256', state: 's1', resource: `${base}/mcp` };
  if (options.scope !== null) params.scope = options.scope ?? 'mcp';
  auth.search = new URLSearchParams(params).toString();
  const callback = await (options.browser ?? new Browser()).authorize(auth.toString(), base, apiKey);
  const code = callback.searchParams.get('code')!;
  const token = await tokenRequest(base, { grant_type: 'authorization_code', code, redirect_uri: redirect, client_id: clientId, code_verifier: verifier, resource: `${base}/mcp` });
  return { clientId, code, verifier, redirect, token };
}

async function callMcp(server: TestServer, token: string | null, headers: Record<string, string> = {}) {
  return fetch(`${server.service.baseUrl}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      ...headers,
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
}

describeEachDb('OAuth authorization server', (server) => {
  it('serves RFC 8414 and RFC 9728 metadata, and /mcp answers 401 with WWW-Authenticate pointing at it', async () => {
    const base = server().service.baseUrl;
    const as = (await (await fetch(`${base}/.well-known/oauth-authorization-server/api/oauth/mcp`)).json()) as Record<string, unknown>;
    expect(as).toMatchObject({
      issuer: `${base}/api/oauth/mcp`,
      authorization_endpoint: `${base}/api/oauth/mcp/authorize`,
      token_endpoint: `${base}/api/oauth/mcp/token`,
      registration_endpoint: `${base}/api/oauth/mcp/register`,
      grant_types_supported: ['authorization_code'],
      code_challenge_methods_supported: ['S256'],
    });
    const pr = (await (await fetch(`${base}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<string, unknown>;
    expect(pr).toMatchObject({ resource: `${base}/mcp`, authorization_servers: [`${base}/api/oauth/mcp`], scopes_supported: ['mcp'] });
    const oidcDiscovery = await fetch(`${base}/api/oauth/mcp/.well-known/openid-configuration`);
    expect(oidcDiscovery.status).toBe(200);
    const unauth = await callMcp(server(), null);
    expect(unauth.status).toBe(401);
    expect(unauth.headers.get('www-authenticate')).toContain(`resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`);
  });

  it('a public client (DCR + PKCE + consent) gets a token that works on /mcp and on the REST API, for its workspace only', async () => {
    const ws = await server().workspace();
    const other = await server().workspace('other');
    const { token } = await publicFlow(server(), ws.api_key);
    expect(token.status).toBe(200);
    expect(token.body).toMatchObject({ token_type: 'Bearer', scope: 'mcp' });
    expect(token.body.refresh_token).toBeUndefined();
    const access = token.body.access_token!;
    expect((await callMcp(server(), access)).status).toBe(200);
    const rest = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: access });
    expect(rest.status).toBe(200);
    expect(rest.headers.get('x-ratelimit-limit')).toBe('600');
    const cross = await server().request('GET', `/api/v1/workspaces/${other.workspace_id}/api-keys`, { key: access });
    expect(cross.status).toBe(403);
    expect(cross.body.error).toBe('forbidden');
  });

  it('a confidential client made over REST completes the code flow with client_secret_post (openid-client), then calls /mcp and REST', async () => {
    const ws = await server().workspace();
    const base = server().service.baseUrl;
    const created = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/oauth-clients`, {
      key: ws.api_key,
      body: { client_name: 'My GPT', redirect_uris: ['https://chat.openai.com/aip/g-0/oauth/callback'] },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      client_id: expect.stringMatching(/^mcp_client_/),
      client_secret: expect.stringMatching(/^mcp_csec_/),
      authorization_endpoint: `${base}/api/oauth/mcp/authorize`,
      token_endpoint: `${base}/api/oauth/mcp/token`,
      scopes_supported: ['mcp'],
    });
    const clientId = created.body.client_id as string;
    const secret = created.body.client_secret as string;
    const stored = await server().container.db.kysely.selectFrom('oauth_clients').select('metadata').where('id', '=', clientId).executeTakeFirstOrThrow();
    expect(stored.metadata).not.toContain(secret);
    // The assistant builder tells us its real callback afterwards.
    const patched = await server().request('PATCH', `/api/v1/workspaces/${ws.workspace_id}/oauth-clients/${clientId}`, { key: ws.api_key, body: { redirect_uris: [GPT] } });
    expect(patched.body.redirect_uris).toEqual([GPT]);

    const config = await oidc.discovery(new URL(`${base}/api/oauth/mcp`), clientId, undefined, oidc.ClientSecretPost(secret), {
      execute: [oidc.allowInsecureRequests],
      algorithm: 'oauth2',
    });
    // Custom GPT style: no PKCE, no resource.
    const authUrl = oidc.buildAuthorizationUrl(config, { redirect_uri: GPT, scope: 'mcp', state: 'st' });
    const callback = await new Browser().authorize(authUrl.toString(), base, ws.api_key);
    const tokens = await oidc.authorizationCodeGrant(config, callback, { expectedState: 'st' });
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect((await callMcp(server(), tokens.access_token)).status).toBe(200);
    const rest = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: tokens.access_token });
    expect(rest.status).toBe(200);

    // Deleting the client kills its tokens at once.
    expect((await server().request('DELETE', `/api/v1/workspaces/${ws.workspace_id}/oauth-clients/${clientId}`, { key: ws.api_key })).status).toBe(204);
    const after = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: tokens.access_token });
    expect(after.status).toBe(401);
    expect(after.body.error).toBe('invalid_token');
  });

  it('refuses a wrong client secret, other grant types, a reused code (revoking its tokens) and a wrong PKCE verifier', async () => {
    const ws = await server().workspace();
    const base = server().service.baseUrl;
    const created = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/oauth-clients`, { key: ws.api_key, body: { client_name: 'GPT', redirect_uris: [GPT] } });
    const clientId = created.body.client_id as string;
    const wrong = await tokenRequest(base, { grant_type: 'authorization_code', code: 'x', redirect_uri: GPT, client_id: clientId, client_secret: 'mcp_csec_wrong' });
    expect(wrong).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    for (const grant of ['refresh_token', 'client_credentials', 'password']) {
      const res = await tokenRequest(base, { grant_type: grant, client_id: clientId, client_secret: created.body.client_secret as string });
      expect(res).toMatchObject({ status: 400, body: { error: 'unsupported_grant_type', error_description: expect.any(String) } });
    }

    const first = await publicFlow(server(), ws.api_key);
    expect(first.token.status).toBe(200);
    const reuse = await tokenRequest(base, { grant_type: 'authorization_code', code: first.code, redirect_uri: first.redirect, client_id: first.clientId, code_verifier: first.verifier });
    expect(reuse).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    const revoked = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: first.token.body.access_token });
    expect(revoked.status).toBe(401);
    expect(revoked.body.error).toBe('invalid_token');

    const clientB = (await register(base, { client_name: 'B', redirect_uris: [CLAUDE] })).body.client_id as string;
    const { challenge } = pkcePair();
    const auth = new URL(`${base}/api/oauth/mcp/authorize`);
    auth.search = new URLSearchParams({ client_id: clientB, redirect_uri: CLAUDE, response_type: 'code', scope: 'mcp', code_challenge: challenge, code_challenge_method: 'S256' }).toString();
    const callback = await new Browser().authorize(auth.toString(), base, ws.api_key);
    const badPkce = await tokenRequest(base, { grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: CLAUDE, client_id: clientB, code_verifier: pkcePair().verifier });
    expect(badPkce).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('an unregistered redirect_uri is refused without redirecting; a public client without PKCE is refused', async () => {
    const base = server().service.baseUrl;
    const clientId = (await register(base, { client_name: 'C', redirect_uris: [CLAUDE] })).body.client_id as string;
    const { challenge } = pkcePair();
    const evil = await fetch(
      `${base}/api/oauth/mcp/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: 'https://evil.example/cb', response_type: 'code', scope: 'mcp', code_challenge: challenge, code_challenge_method: 'S256' })}`,
      { redirect: 'manual' },
    );
    expect(evil.status).toBe(400);
    expect(evil.headers.get('location')).toBeNull();
    expect(((await evil.json()) as Record<string, string>).error).toBe('invalid_redirect_uri');
    // An anonymous (DCR) client's redirect URI was vetted by nobody: errors before consent are not bounced to it.
    const noPkce = await fetch(`${base}/api/oauth/mcp/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: CLAUDE, response_type: 'code', scope: 'mcp' })}`, { redirect: 'manual' });
    expect(noPkce.status).toBe(400);
    expect(noPkce.headers.get('location')).toBeNull();
    expect(await noPkce.json()).toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining('PKCE') });
  });

  it('a wrong API key on the consent page re-renders it with an error; Deny sends access_denied', async () => {
    const ws = await server().workspace();
    const base = server().service.baseUrl;
    const clientId = (await register(base, { client_name: 'D', redirect_uris: [CLAUDE] })).body.client_id as string;
    const { challenge } = pkcePair();
    const auth = `${base}/api/oauth/mcp/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: CLAUDE, response_type: 'code', scope: 'mcp', code_challenge: challenge, code_challenge_method: 'S256' })}`;
    const browser = new Browser();
    const page = await browser.follow(auth, base);
    const html = await page.res.text();
    expect(page.res.headers.get('cache-control')).toBe('no-store');
    expect(page.res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const uid = /\/interaction\/([^/"]+)\/confirm/.exec(html)![1]!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
    const bad = await browser.fetch(`${base}/api/oauth/mcp/interaction/${uid}/confirm`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, api_key: 'svc_live_00000000000000000000000000000000' }).toString(),
    });
    expect(bad.status).toBe(401);
    expect(await bad.text()).toContain('That API key is not valid');
    const forged = await browser.fetch(`${base}/api/oauth/mcp/interaction/${uid}/confirm`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: 'forged', api_key: ws.api_key }).toString(),
    });
    expect(forged.status).toBe(403);
    const denied = await new Browser().authorize(auth, base, ws.api_key, 'abort');
    expect(denied.searchParams.get('error')).toBe('access_denied');
    expect(denied.toString().startsWith(CLAUDE)).toBe(true);
  });

  it('revoking the API key that approved a grant revokes its tokens; the revocation endpoint works too', async () => {
    const ws = await server().workspace();
    const second = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: ws.api_key, body: { name: 'approver' } });
    const { token, clientId } = await publicFlow(server(), second.body.api_key as string);
    const access = token.body.access_token!;
    expect((await callMcp(server(), access)).status).toBe(200);
    await server().request('DELETE', `/api/v1/workspaces/${ws.workspace_id}/api-keys/${second.body.id as string}`, { key: ws.api_key });
    const mcp = await callMcp(server(), access);
    expect(mcp.status).toBe(401);
    expect(mcp.headers.get('www-authenticate')).toContain('invalid_token');

    const again = await publicFlow(server(), ws.api_key);
    // RFC 7009 §2.1: another client presenting the token gets the same 200, and the token stays valid.
    const other = await register(server().service.baseUrl, { client_name: 'other', redirect_uris: ['http://127.0.0.1:9/cb'] });
    const foreign = await fetch(`${server().service.baseUrl}/api/oauth/mcp/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: again.token.body.access_token!, client_id: other.body.client_id as string }).toString(),
    });
    expect(foreign.status).toBe(200);
    expect((await callMcp(server(), again.token.body.access_token!)).status).toBe(200);
    const revoke = await fetch(`${server().service.baseUrl}/api/oauth/mcp/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: again.token.body.access_token!, client_id: again.clientId }).toString(),
    });
    expect(revoke.status).toBe(200);
    const rest = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: again.token.body.access_token });
    expect(rest.body.error).toBe('invalid_token');
    expect(clientId).not.toBe(again.clientId);
  });

  it('real-client quirks: cursor:// and loopback redirects (any port), no scope, a second authorization keeps the first token, CORS', async () => {
    const ws = await server().workspace();
    const base = server().service.baseUrl;
    for (const bad of ['http://evil.example/cb', 'javascript:alert(1)', 'https://ok.example/cb#fragment']) {
      const refused = await register(base, { client_name: 'bad', redirect_uris: [bad] });
      expect(refused, bad).toMatchObject({ status: 400, body: { error: 'invalid_redirect_uri' } });
    }
    const cursor = await publicFlow(server(), ws.api_key, { redirect: 'cursor://anysphere.cursor-retrieval/oauth/callback' });
    expect(cursor.token.status).toBe(200);

    const registered = await register(base, { client_name: 'VS Code', redirect_uris: ['http://127.0.0.1:33418/'], grant_types: ['authorization_code', 'refresh_token'], token_endpoint_auth_method: 'client_secret_post' });
    expect(registered.status).toBe(201);
    expect(registered.body).toMatchObject({ token_endpoint_auth_method: 'none', grant_types: ['authorization_code'] });
    expect(registered.body.client_secret).toBeUndefined();
    const vscode = await publicFlow(server(), ws.api_key, { clientId: registered.body.client_id as string, redirect: 'http://127.0.0.1:51234/' });
    expect(vscode.token.status).toBe(200);

    const browser = new Browser();
    const noScope = await publicFlow(server(), ws.api_key, { scope: null, browser });
    expect(noScope.token.body.scope).toBe('mcp');
    const secondAuth = await publicFlow(server(), ws.api_key, { clientId: noScope.clientId, browser });
    expect(secondAuth.token.status).toBe(200);
    expect((await callMcp(server(), noScope.token.body.access_token!)).status).toBe(200);
    expect((await callMcp(server(), secondAuth.token.body.access_token!)).status).toBe(200);

    for (const path of ['/.well-known/oauth-authorization-server/api/oauth/mcp', '/.well-known/oauth-protected-resource/mcp', '/api/oauth/mcp/register', '/api/oauth/mcp/token']) {
      const pre = await fetch(`${base}${path}`, {
        method: 'OPTIONS',
        headers: { origin: 'http://localhost:6274', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
      });
      expect(pre.status, path).toBeLessThan(300);
      expect(pre.headers.get('access-control-allow-origin'), path).toBeTruthy();
    }
  });
});

describeEachDb('OAuth loopback redirect spellings', (server) => {
  /** Where an authorization request is sent: 303 to the consent page (accepted) or 400 (refused). */
  async function authorizeStatus(base: string, clientId: string, redirectUri: string): Promise<{ status: number; error?: string }> {
    const params = new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, response_type: 'code', scope: 'mcp', code_challenge: pkcePair().challenge, code_challenge_method: 'S256' });
    const res = await fetch(`${base}/api/oauth/mcp/authorize?${params}`, { redirect: 'manual' });
    const text = await res.text();
    return { status: res.status, ...(text.startsWith('{') ? { error: (JSON.parse(text) as { error: string }).error } : {}) };
  }

  it('a loopback callback registered without a path matches it with "/" and vice versa, on any port (RFC 8252 §7.3, RFC 3986 §6.2.3)', async () => {
    const ws = await server().workspace();
    const base = server().service.baseUrl;
    for (const [registered, sent] of [
      ['http://127.0.0.1:33418', ['http://127.0.0.1:33418', 'http://127.0.0.1:33418/', 'http://127.0.0.1:40000/', 'http://127.0.0.1:40000']],
      ['http://localhost:33418/', ['http://localhost:33418', 'http://localhost:40000', 'http://localhost:40000/']],
      ['http://[::1]', ['http://[::1]:40000/', 'http://[::1]:40000']],
    ] as const) {
      const clientId = (await register(base, { client_name: 'no path', redirect_uris: [registered] })).body.client_id as string;
      for (const uri of sent) expect(await authorizeStatus(base, clientId, uri), `${registered} ← ${uri}`).toEqual({ status: 303 });
      // Only the empty path has two spellings: another path, host or scheme is still refused.
      for (const uri of ['http://127.0.0.1:40000/cb', 'http://127.0.0.1:40000/?x=1', 'http://127.0.0.2:40000/', 'https://127.0.0.1:40000/', 'http://127.0.0.1:40000//']) {
        expect(await authorizeStatus(base, clientId, uri), `${registered} ← ${uri}`).toEqual({ status: 400, error: 'invalid_redirect_uri' });
      }
    }
    // The whole flow with the other spelling: the code goes to the URI sent, and the token request repeats it.
    const clientId = (await register(base, { client_name: 'no path', redirect_uris: ['http://127.0.0.1:33418'] })).body.client_id as string;
    const flow = await publicFlow(server(), ws.api_key, { clientId, redirect: 'http://127.0.0.1:51234/' });
    expect(flow.token.status).toBe(200);
    expect((await callMcp(server(), flow.token.body.access_token!)).status).toBe(200);
    // An https callback keeps exact matching.
    const web = (await register(base, { client_name: 'web', redirect_uris: ['https://app.example'] })).body.client_id as string;
    expect(await authorizeStatus(base, web, 'https://app.example')).toEqual({ status: 303 });
    expect(await authorizeStatus(base, web, 'https://app.example/')).toEqual({ status: 400, error: 'invalid_redirect_uri' });
  });
});

describeEachDb(
  'OAuth token expiry',
  (server) => {
    it('an expired token answers 401 invalid_token on REST and /mcp', async () => {
      const ws = await server().workspace();
      const { token } = await publicFlow(server(), ws.api_key);
      // oidc-provider reads the wall clock (Date) for expiry; the server runs in this process, so moving Date
      // past the 1 s lifetime expires the token without waiting for it. Timers and I/O stay real.
      vi.useFakeTimers({ toFake: ['Date'] });
      try {
        vi.setSystemTime(Date.now() + 2100);
        const rest = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: token.body.access_token });
        expect(rest.status).toBe(401);
        expect(rest.body.error).toBe('invalid_token');
        expect((await callMcp(server(), token.body.access_token!)).status).toBe(401);
      } finally {
        vi.useRealTimers();
      }
    });
  },
  { OAUTH_ACCESS_TOKEN_TTL: '1s' },
);
