import { createServer, type Server } from 'node:net';
import { expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { Browser, pkcePair } from '../support/oauth-browser.js';
import { describeEachDb, type TestServer } from '../support/server.js';

const CB = 'https://claude.ai/api/mcp/auth_callback';
const ATTACKER = 'https://attacker.invalid/cb';

async function register(base: string, body: Record<string, unknown>) {
  const res = await fetch(`${base}/api/oauth/mcp/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

function tokenRequest(base: string, params: Record<string, string>) {
  return fetch(`${base}/api/oauth/mcp/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(params).toString() });
}

function authorizeUrl(base: string, params: Record<string, string>): string {
  return `${base}/api/oauth/mcp/authorize?${new URLSearchParams({ response_type: 'code', state: 's', ...params }).toString()}`;
}

function callMcp(base: string, token: string) {
  return fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
}

/** A public client registered by DCR, authorized with PKCE and approved with `apiKey`; returns its code. */
async function approvedCode(server: TestServer, apiKey: string, extra: Record<string, string> = {}, browser = new Browser()) {
  const base = server.service.baseUrl;
  const clientId = (await register(base, { client_name: 'hardening', redirect_uris: [CB] })).body.client_id as string;
  const { verifier, challenge } = pkcePair();
  const callback = await browser.authorize(authorizeUrl(base, { client_id: clientId, redirect_uri: CB, scope: 'mcp', code_challenge: challenge, code_challenge_method: 'S256', ...extra }), base, apiKey);
  return { clientId, verifier, code: callback.searchParams.get('code')!, callback };
}

async function confidentialClient(server: TestServer, ws: { workspace_id: string; api_key: string }, redirect = CB) {
  const created = await server.request('POST', `/api/v1/workspaces/${ws.workspace_id}/oauth-clients`, { key: ws.api_key, body: { client_name: 'GPT', redirect_uris: [redirect] } });
  return { clientId: created.body.client_id as string, secret: created.body.client_secret as string };
}

describeEachDb('OAuth hardening', (server) => {
  it('parallel exchanges of one code (2 at a time, then 20) give at most one token, and the replays revoke it', async () => {
    const ws = await server().workspace();
    const base = server().service.baseUrl;
    // Exactly two racing requests was the reliable break on PostgreSQL (both tokens lived); more lets late losers
    // see the consumed code the old way.
    for (const parallel of [2, 2, 2, 2, 2, 20]) {
      const { clientId, verifier, code } = await approvedCode(server(), ws.api_key);
      const form = { grant_type: 'authorization_code', code, redirect_uri: CB, client_id: clientId, code_verifier: verifier };
      const answers = await Promise.all(Array.from({ length: parallel }, () => tokenRequest(base, form)));
      const bodies = (await Promise.all(answers.map((r) => r.json()))) as Record<string, string>[];
      const issued = bodies.filter((b) => typeof b.access_token === 'string');
      expect(issued.length).toBeLessThanOrEqual(1);
      for (const [i, b] of bodies.entries()) if (b.access_token === undefined) expect({ status: answers[i]!.status, error: b.error }).toEqual({ status: 400, error: 'invalid_grant' });
      // RFC 6749 §4.1.2: a replayed code revokes what it issued.
      for (const b of issued) expect((await callMcp(base, b.access_token!)).status).toBe(401);
    }
  });

  it('the storage consumes a code once even when two consumes race (the database decides)', async () => {
    const { adapterFactory } = await import('../../oauth/adapter.js');
    const Adapter = adapterFactory(server().container.db.kysely);
    const codes = new Adapter('AuthorizationCode');
    const tokens = new Adapter('AccessToken');
    const grants = new Adapter('Grant');
    await grants.upsert('grant-race-1', { accountId: 'a', clientId: 'c' }, 60);
    await codes.upsert('code-race-1', { grantId: 'grant-race-1', clientId: 'c' }, 60);
    await tokens.upsert('token-of-grant-race-1', { grantId: 'grant-race-1', clientId: 'c' }, 60);
    const outcomes = await Promise.allSettled(Array.from({ length: 10 }, () => codes.consume('code-race-1')));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    for (const o of outcomes.filter((x): x is PromiseRejectedResult => x.status === 'rejected')) expect((o.reason as { error?: string }).error).toBe('invalid_grant');
    // The grant goes too (its own row is keyed by its id), so a token its winner saves afterwards is dead.
    expect(await tokens.find('token-of-grant-race-1')).toBeUndefined();
    expect(await grants.find('grant-race-1')).toBeUndefined();
  });

  it('prompt=none (or any error before consent) never bounces the browser to an anonymous client\'s redirect URI', async () => {
    const base = server().service.baseUrl;
    const clientId = (await register(base, { client_name: 'x', redirect_uris: [ATTACKER] })).body.client_id as string;
    const { challenge } = pkcePair();
    const extras: Record<string, string>[] = [{ prompt: 'none' }, { code_challenge_method: 'plain' }, { resource: 'https://elsewhere.invalid/' }];
    for (const extra of extras) {
      const res = await fetch(authorizeUrl(base, { client_id: clientId, redirect_uri: ATTACKER, scope: 'mcp', code_challenge: challenge, code_challenge_method: 'S256', ...extra }), { redirect: 'manual' });
      expect(res.headers.get('location'), JSON.stringify(extra)).toBeNull();
      expect(res.status).toBe(400);
      const body = (await res.json()) as Record<string, unknown>;
      expect(body).toEqual({ error: expect.any(String), error_description: expect.any(String) });
    }
  });

  it('a confidential client (registered by a workspace) still gets RFC 6749 error redirects', async () => {
    const ws = await server().workspace();
    const base = server().service.baseUrl;
    const { clientId } = await confidentialClient(server(), ws);
    const res = await fetch(authorizeUrl(base, { client_id: clientId, redirect_uri: CB, scope: 'mcp', prompt: 'none' }), { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(new URL(res.headers.get('location')!).searchParams.get('error')).toBe('login_required');
  });

  it('no logout redirect: post_logout_redirect_uris are dropped and /session/end is not offered', async () => {
    const base = server().service.baseUrl;
    const reg = await register(base, { client_name: 'bye', redirect_uris: [CB], post_logout_redirect_uris: ['https://attacker.invalid/bye'] });
    expect(reg.status).toBe(201);
    expect(reg.body.post_logout_redirect_uris ?? []).toEqual([]);
    const q = new URLSearchParams({ client_id: reg.body.client_id as string, post_logout_redirect_uri: 'https://attacker.invalid/bye', state: 's' });
    for (const method of ['GET', 'POST']) {
      const res = await fetch(`${base}/api/oauth/mcp/session/end?${q.toString()}`, { method, redirect: 'manual' });
      expect(res.status).toBe(404);
      expect(res.headers.get('location')).toBeNull();
      expect(await res.json()).toMatchObject({ error: 'invalid_request' });
    }
  });

  it('in one browser, a second workspace\'s key ends the first login and completes with the second workspace', async () => {
    const a = await server().workspace('A');
    const b = await server().workspace('B');
    const base = server().service.baseUrl;
    const browser = new Browser();
    const first = await approvedCode(server(), a.api_key, {}, browser);
    expect(first.code).toBeTruthy();
    // Same client, same browser (its session holds workspace A's login and grant), new consent with B's key.
    const { verifier, challenge } = pkcePair();
    const page = await browser.follow(authorizeUrl(base, { client_id: first.clientId, redirect_uri: CB, scope: 'mcp', code_challenge: challenge, code_challenge_method: 'S256', prompt: 'consent' }), base);
    const html = await page.res.text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
    const uid = /\/interaction\/([^/"]+)\/confirm/.exec(html)![1]!;
    let posted = await browser.follow(`${base}/api/oauth/mcp/interaction/${uid}/confirm`, base, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, api_key: b.api_key }).toString(),
    });
    // The provider ends the old login with a self-submitting form to its confirm step (a browser runs it).
    for (let i = 0; i < 3 && posted.res.status === 200; i++) {
      const form = await posted.res.text();
      const action = /action="([^"]+)"/.exec(form)?.[1];
      if (!action) break;
      const fields = Object.fromEntries([...form.matchAll(/name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
      posted = await browser.follow(new URL(action.replace(/&amp;/g, '&'), base).toString(), base, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
    }
    expect(posted.url.startsWith(CB)).toBe(true);
    const code = new URL(posted.url).searchParams.get('code')!;
    const token = (await (await tokenRequest(base, { grant_type: 'authorization_code', code, redirect_uri: CB, client_id: first.clientId, code_verifier: verifier })).json()) as Record<string, string>;
    const own = await server().request('GET', `/api/v1/workspaces/${b.workspace_id}/api-keys`, { key: token.access_token });
    expect(own.status).toBe(200);
    const other = await server().request('GET', `/api/v1/workspaces/${a.workspace_id}/api-keys`, { key: token.access_token });
    expect(other.status).toBe(403);
  });

  it('registration keeps no fetched URI, makes no outbound connection, and has no pairwise subjects', async () => {
    const base = server().service.baseUrl;
    const connections: string[] = [];
    const listener: Server = createServer((s) => {
      connections.push(String(s.remoteAddress));
      s.destroy();
    });
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    const port = (listener.address() as { port: number }).port;
    try {
      const reg = await register(base, {
        client_name: 's',
        redirect_uris: [CB],
        sector_identifier_uri: `https://127.0.0.1:${port}/x`,
        jwks_uri: `https://127.0.0.1:${port}/jwks`,
        request_uris: [`https://127.0.0.1:${port}/r`],
        logo_uri: `https://127.0.0.1:${port}/logo.png`,
        subject_type: 'pairwise',
        token_endpoint_auth_method: 'private_key_jwt',
      });
      expect(reg.status).toBe(201);
      for (const field of ['sector_identifier_uri', 'jwks_uri', 'request_uris', 'logo_uri', 'jwks']) expect(reg.body[field], field).toBeUndefined();
      expect(reg.body).toMatchObject({ subject_type: 'public', token_endpoint_auth_method: 'none' });
      await new Promise((r) => setTimeout(r, 200));
      expect(connections).toEqual([]);
    } finally {
      listener.close();
    }
  });

  it('forwarded headers and Host never change an address in discovery or in the authorization redirects', async () => {
    const ws = await server().workspace();
    const base = server().service.baseUrl;
    const spoof = { 'x-forwarded-host': 'attacker.invalid', 'x-forwarded-proto': 'https' };
    for (const path of ['/api/oauth/mcp/.well-known/openid-configuration', '/.well-known/oauth-authorization-server/api/oauth/mcp']) {
      const doc = (await (await fetch(`${base}${path}`, { headers: spoof })).json()) as Record<string, string>;
      expect(doc.authorization_endpoint).toBe(`${base}/api/oauth/mcp/authorize`);
      expect(doc.token_endpoint).toBe(`${base}/api/oauth/mcp/token`);
    }
    // The provider's own absolute addresses (the resume step after consent) come from BASE_URL too.
    const clientId = (await register(base, { client_name: 'h', redirect_uris: [CB] })).body.client_id as string;
    const { challenge } = pkcePair();
    const browser = new Browser();
    const first = await browser.fetch(authorizeUrl(base, { client_id: clientId, redirect_uri: CB, scope: 'mcp', code_challenge: challenge, code_challenge_method: 'S256' }), { headers: spoof });
    const page = await browser.fetch(new URL(first.headers.get('location')!, base).toString(), { headers: spoof });
    const html = await page.text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
    const uid = /\/interaction\/([^/"]+)\/confirm/.exec(html)![1]!;
    const confirm = await browser.fetch(`${base}/api/oauth/mcp/interaction/${uid}/confirm`, {
      method: 'POST',
      headers: { ...spoof, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, api_key: ws.api_key }).toString(),
    });
    expect(confirm.headers.get('location')!.startsWith(`${base}/api/oauth/mcp/`)).toBe(true);
  });

  it('a trailing-slash resource takes one approval, and both spellings exchange the code for a token on /mcp', async () => {
    const ws = await server().workspace();
    const base = server().service.baseUrl;
    for (const [asked, exchanged] of [[`${base}/mcp/`, `${base}/mcp`], [`${base}/mcp/`, `${base}/mcp/`], [`${base.toUpperCase().replace('HTTP://', 'http://')}/mcp`, `${base}/mcp`]] as const) {
      // Browser.authorize throws if the consent page comes back a second time on our origin.
      const { clientId, verifier, code } = await approvedCode(server(), ws.api_key, { resource: asked });
      const res = await tokenRequest(base, { grant_type: 'authorization_code', code, redirect_uri: CB, client_id: clientId, code_verifier: verifier, resource: exchanged });
      const body = (await res.json()) as Record<string, string>;
      expect(res.status, `${asked} then ${exchanged}: ${JSON.stringify(body)}`).toBe(200);
      expect((await callMcp(base, body.access_token!)).status).toBe(200);
    }
    const { clientId, verifier, code } = await approvedCode(server(), ws.api_key);
    const elsewhere = await tokenRequest(base, { grant_type: 'authorization_code', code, redirect_uri: CB, client_id: clientId, code_verifier: verifier, resource: `${base}/mcpx` });
    expect(await elsewhere.json()).toMatchObject({ error: 'invalid_target' });
  });

  it('an unknown scope is invalid_scope before any consent page (no redirect for an anonymous client, a redirect for a confidential one)', async () => {
    const ws = await server().workspace();
    const base = server().service.baseUrl;
    const publicId = (await register(base, { client_name: 'p', redirect_uris: [CB] })).body.client_id as string;
    const { challenge } = pkcePair();
    // (`offline_access` is not in the list: OIDC Core §11 has the provider ignore it when no refresh grant is
    // allowed, and RFC 6749 §3.3 lets a server narrow scope; the token then says `scope: mcp`.)
    for (const scope of ['admin', 'mcp admin', 'openid mcp', 'openid']) {
      const res = await fetch(authorizeUrl(base, { client_id: publicId, redirect_uri: CB, scope, code_challenge: challenge, code_challenge_method: 'S256' }), { redirect: 'manual' });
      expect(res.status, scope).toBe(400);
      expect(await res.json()).toMatchObject({ error: 'invalid_scope' });
    }
    const { clientId } = await confidentialClient(server(), ws);
    const res = await fetch(authorizeUrl(base, { client_id: clientId, redirect_uri: CB, scope: 'admin' }), { redirect: 'manual' });
    expect(res.status).toBe(303);
    const location = new URL(res.headers.get('location')!);
    expect(location.toString().startsWith(CB)).toBe(true);
    expect(location.searchParams.get('error')).toBe('invalid_scope');
  });

  it('malformed JSON, an oversized body and unknown routes under the mount answer error + error_description', async () => {
    const base = server().service.baseUrl;
    const bad = await fetch(`${base}/api/oauth/mcp/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{bad' });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
    const big = await fetch(`${base}/api/oauth/mcp/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'x'.repeat(70_000), redirect_uris: [CB] }) });
    expect(big.status).toBe(413);
    expect(await big.json()).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
    const bigToken = await fetch(`${base}/api/oauth/mcp/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `grant_type=authorization_code&code=${'x'.repeat(70_000)}` });
    expect(bigToken.status).toBe(413);
    expect(await bigToken.json()).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
    const mode = await fetch(authorizeUrl(base, { client_id: 'x', response_mode: 'fragment' }), { redirect: 'manual' });
    expect(mode.status).toBe(400);
    expect(await mode.json()).toEqual({ error: 'invalid_request', error_description: expect.stringContaining('response_mode') });
  });
});

describeEachDb(
  'OAuth per-address limits',
  (server) => {
    it('the per-address 429 on /register and /token is in RFC 6749 form, with Retry-After', async () => {
      const base = server().service.baseUrl;
      for (const path of ['/api/oauth/mcp/register', '/api/oauth/mcp/token']) {
        let last: Response | undefined;
        for (let i = 0; i < 4; i++) last = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
        expect(last!.status, path).toBe(429);
        expect(last!.headers.get('retry-after')).toMatch(/^\d+$/);
        expect(await last!.json()).toEqual({ error: 'rate_limited', error_description: expect.any(String) });
      }
    });
  },
  { OPEN_RATE_LIMIT_PER_MINUTE: '3' },
);

describeEachDb(
  'OAuth behind a trusted proxy',
  (server) => {
    it('with TRUST_PROXY set, discovery still names BASE_URL whatever the forwarded headers say', async () => {
      const base = server().service.baseUrl;
      const doc = (await (await fetch(`${base}/api/oauth/mcp/.well-known/openid-configuration`, { headers: { 'x-forwarded-host': 'attacker.invalid', 'x-forwarded-proto': 'https' } })).json()) as Record<string, string>;
      expect(doc.issuer).toBe(`${base}/api/oauth/mcp`);
      expect(doc.token_endpoint).toBe(`${base}/api/oauth/mcp/token`);
    });
  },
  { TRUST_PROXY: 'loopback' },
);

it('TRUST_PROXY names proxies (addresses, subnets, keywords or a hop count); unset trusts none; true is refused', () => {
  const env = { SECRET_KEY: '0f'.repeat(32) };
  expect(parseConfig(env).trustProxy).toBe(false);
  expect(parseConfig({ ...env, TRUST_PROXY: 'false' }).trustProxy).toBe(false);
  expect(parseConfig({ ...env, TRUST_PROXY: '2' }).trustProxy).toBe(2);
  expect(parseConfig({ ...env, TRUST_PROXY: 'loopback, 10.0.0.0/8,::1' }).trustProxy).toEqual(['loopback', '10.0.0.0/8', '::1']);
  for (const bad of ['true', 'anyone', '10.0.0.0/33', '300.1.1.1']) expect(() => parseConfig({ ...env, TRUST_PROXY: bad }), bad).toThrow(/TRUST_PROXY/);
});
