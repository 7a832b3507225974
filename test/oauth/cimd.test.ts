import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redirectOutsideFence, shapeDocument } from '../../oauth/client-metadata-documents.js';
import { Browser, pkcePair } from '../support/oauth-browser.js';
import { describeEachDb } from '../support/server.js';
import { claudeCodeDocument, DocumentHost, randomLoopbackPort, trustSelfSignedCertificates } from './support/document-host.js';
import { overrides } from '../support/overrides.js';

/**
 * Client ID Metadata Documents at the authorization server: what is fetched, from where, how often, and which
 * documents are refused. The document host counts connections and requests, so "refused before fetching" is
 * observed, not assumed.
 */

const HOSTILE = `"><img src=x onerror=alert(1)>&'`;

interface Attempt {
  status: number;
  location: string | null;
  body: Record<string, unknown> | undefined;
}

/** One authorization request as a browser sends it; a 303 to our interaction page means the client was accepted. */
async function authorize(base: string, clientId: string, redirectUri = `http://127.0.0.1:${randomLoopbackPort()}/callback`): Promise<Attempt> {
  const { challenge } = pkcePair();
  const params = new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, response_type: 'code', scope: 'mcp', code_challenge: challenge, code_challenge_method: 'S256' });
  const res = await fetch(`${base}/api/oauth/mcp/authorize?${params}`, { redirect: 'manual' });
  const text = await res.text();
  return { status: res.status, location: res.headers.get('location'), body: text.startsWith('{') ? (JSON.parse(text) as Record<string, unknown>) : undefined };
}

const accepted = (a: Attempt) => a.status === 303 && (a.location ?? '').includes('/api/oauth/mcp/interaction/');

function expectRefused(a: Attempt): void {
  expect(a.status, JSON.stringify(a.body)).toBe(400);
  expect(['invalid_client', 'invalid_client_metadata']).toContain(a.body?.error);
  expect(a.location).toBeNull();
}

describe('the redirect fence and the kept fields', () => {
  it('accepts loopback on any port and https on the client_id origin; refuses every other callback', () => {
    const vscode = 'https://vscode.dev/oauth/client-metadata.json';
    expect(redirectOutsideFence(vscode, ['https://vscode.dev/redirect', 'http://127.0.0.1:33418/', 'http://localhost/cb', 'http://[::1]:9/'])).toBeUndefined();
    const claude = 'https://claude.ai/oauth/claude-code-client-metadata';
    expect(redirectOutsideFence(claude, ['http://localhost/callback', 'http://127.0.0.1/callback'])).toBeUndefined();
    for (const outside of [
      'https://evil.example/callback',
      'https://vscode.dev.evil.example/redirect',
      'https://vscode.dev:8443/redirect',
      'http://vscode.dev/redirect',
      'http://localhost.evil.example/cb',
      'http://10.0.0.1/cb',
      'cursor://anysphere/callback',
      'javascript:alert(1)',
      'not a url',
    ]) {
      expect(redirectOutsideFence(vscode, ['http://127.0.0.1/', outside]), outside).toBe(outside);
    }
  });

  it('keeps only the fields the provider needs, and makes a document without a type native (an explicit web stays)', () => {
    const shaped = shapeDocument({
      ...claudeCodeDocument('https://claude.ai/m'),
      logo_uri: 'https://claude.ai/logo.png',
      jwks_uri: 'https://claude.ai/jwks',
      sector_identifier_uri: 'https://claude.ai/s',
      request_uris: ['https://claude.ai/r'],
      post_logout_redirect_uris: ['https://claude.ai/bye'],
      scope: 'mcp offline_access',
      client_secret: 'x',
    });
    expect(Object.keys(shaped).sort()).toEqual(['application_type', 'client_id', 'client_name', 'client_secret', 'grant_types', 'redirect_uris', 'response_types', 'token_endpoint_auth_method']);
    expect(shaped.application_type).toBe('native');
    expect(shapeDocument({ client_id: 'https://a.example/m', application_type: 'web' }).application_type).toBe('web');
  });
});

let host: DocumentHost;
let restoreTls: (() => void) | undefined;
beforeAll(async () => {
  host = await DocumentHost.start();
});
afterAll(async () => {
  restoreTls?.();
  await host.close();
});

describeEachDb(
  'metadata documents: fetching, caching and refusing',
  (server, kind) => {
    const path = (name: string) => `/${kind.name}/${name}.json`;

    it('a document behind a certificate no CA vouches for is refused: the service verifies certificates', async () => {
      restoreTls?.();
      restoreTls = undefined;
      const clientId = host.serve(path('untrusted'), claudeCodeDocument);
      const refused = await authorize(server().service.baseUrl, clientId);
      expectRefused(refused);
      expect(refused.body?.error_description).toBe('client_id metadata document: its TLS certificate was not accepted');
      expect(host.fetches(path('untrusted'))).toBe(0);
      // The later tests talk to the self-signed host (see trustSelfSignedCertificates).
      restoreTls = trustSelfSignedCertificates();
    });

    it('parallel authorizations of a new client fetch its document once; a changed document is not refetched while cached', async () => {
      const base = server().service.baseUrl;
      const clientId = host.serve(path('parallel'), claudeCodeDocument, { headers: { 'cache-control': 'max-age=300' } });
      const attempts = await Promise.all(Array.from({ length: 6 }, () => authorize(base, clientId)));
      expect(attempts.filter(accepted)).toHaveLength(6);
      expect(host.fetches(path('parallel'))).toBe(1);
      host.serve(path('parallel'), (id) => ({ ...claudeCodeDocument(id), redirect_uris: ['https://evil.example/cb'] }));
      expect(accepted(await authorize(base, clientId))).toBe(true);
      expect(host.fetches(path('parallel'))).toBe(1);
    });

    it('a document whose client_id is not its URL is refused (400), and not fetched again for a while', async () => {
      const base = server().service.baseUrl;
      const clientId = host.serve(path('mismatch'), () => claudeCodeDocument(host.url(path('other'))));
      const first = await authorize(base, clientId);
      expectRefused(first);
      expect(first.body?.error).toBe('invalid_client_metadata');
      expect(host.fetches(path('mismatch'))).toBe(1);
      host.serve(path('mismatch'), claudeCodeDocument);
      expectRefused(await authorize(base, clientId));
      expect(host.fetches(path('mismatch'))).toBe(1);
    });

    it('a cross-origin https callback is refused by the fence, and still refused from the cache (allowClient runs on every hit)', async () => {
      const base = server().service.baseUrl;
      const clientId = host.serve(path('cross-origin'), (id) => ({ ...claudeCodeDocument(id), redirect_uris: ['http://127.0.0.1/callback', 'https://evil.example/callback'] }), { headers: { 'cache-control': 'max-age=300' } });
      expectRefused(await authorize(base, clientId));
      expectRefused(await authorize(base, clientId, 'https://evil.example/callback'));
      expectRefused(await authorize(base, clientId));
      // Fetched once, then refused from the provider's cache.
      expect(host.fetches(path('cross-origin'))).toBe(1);
    });

    it('a document larger than the limit is refused, declared or streamed', async () => {
      const base = server().service.baseUrl;
      const big = (id: string) => ({ ...claudeCodeDocument(id), client_name: 'x'.repeat(6_000) });
      expectRefused(await authorize(base, host.serve(path('large'), big)));
      const streamed = host.serve(path('large-chunked'), big, { headers: { 'transfer-encoding': 'chunked' } });
      expectRefused(await authorize(base, streamed));
      expect(host.fetches(path('large')) + host.fetches(path('large-chunked'))).toBe(2);
    });

    it('a slow host is given up on at the time limit', async () => {
      const base = server().service.baseUrl;
      const clientId = host.serve(path('slow'), claudeCodeDocument, { delayMs: 3_000 });
      const started = Date.now();
      expectRefused(await authorize(base, clientId));
      expect(Date.now() - started).toBeLessThan(2_000);
    });

    it('a redirect is not followed', async () => {
      const base = server().service.baseUrl;
      const target = host.serve(path('redirect-target'), claudeCodeDocument);
      host.routes.set(path('redirecting'), { status: 302, headers: { location: target }, body: '' });
      expectRefused(await authorize(base, host.url(path('redirecting'))));
      expect(host.fetches(path('redirecting'))).toBe(1);
      expect(host.fetches(path('redirect-target'))).toBe(0);
    });

    it('a refusal says why in error_description; a document refused after fetching is fetched once over three tries', async () => {
      const base = server().service.baseUrl;
      const descriptions = async (clientId: string) => {
        const out: string[] = [];
        for (let i = 0; i < 3; i++) {
          const attempt = await authorize(base, clientId);
          expectRefused(attempt);
          out.push(String(attempt.body?.error_description));
        }
        return out;
      };
      const again = (reason: string) => new RegExp(`^client_id metadata document: ${reason}; not fetched again for \\d+ s$`);

      const missing = await descriptions(host.url(path('missing')));
      expect(missing[0]).toBe('client_id metadata document: not found (HTTP 404)');
      for (const later of missing.slice(1)) expect(later).toMatch(again('not found \\(HTTP 404\\)'));
      expect(host.fetches(path('missing'))).toBe(1);

      // Refused by the authorization server's own checks once fetched: remembered like a failed fetch.
      const secret = await descriptions(host.serve(path('shared-secret'), (id) => ({ ...claudeCodeDocument(id), token_endpoint_auth_method: 'client_secret_post' })));
      expect(secret[0]).toMatch(/shared-secret/);
      for (const later of secret.slice(1)) expect(later).toMatch(again('.*shared-secret.*'));
      expect(host.fetches(path('shared-secret'))).toBe(1);

      const big = await descriptions(host.serve(path('too-large'), (id) => ({ ...claudeCodeDocument(id), client_name: 'x'.repeat(6_000) })));
      expect(big[0]).toBe('client_id metadata document: larger than 5120 bytes');
      expect(host.fetches(path('too-large'))).toBe(1);

      host.routes.set(path('moved'), { status: 301, headers: { location: host.url(path('elsewhere')) }, body: '' });
      expect((await descriptions(host.url(path('moved'))))[0]).toBe('client_id metadata document: redirects are not followed');
      expect(host.fetches(path('moved'))).toBe(1);
    });

    it('the consent page names the document host, warns about a loopback callback, escapes the name and shows no logo', async () => {
      const base = server().service.baseUrl;
      const logo = host.url(path('logo.png'));
      const clientId = host.serve(path('consent'), (id) => ({ ...claudeCodeDocument(id), client_name: HOSTILE, logo_uri: logo }));
      const { challenge } = pkcePair();
      const params = new URLSearchParams({ client_id: clientId, redirect_uri: `http://127.0.0.1:${randomLoopbackPort()}/callback`, response_type: 'code', scope: 'mcp', code_challenge: challenge, code_challenge_method: 'S256' });
      const { res } = await new Browser().follow(`${base}/api/oauth/mcp/authorize?${params}`, base);
      expect(res.status).toBe(200);
      const page = await res.text();
      expect(page).toContain('<h1><strong>&quot;&gt;&lt;img src=x onerror=alert(1)&gt;&amp;&#39;</strong>');
      expect(page).toContain(`<dt>App from</dt><dd>${new URL(host.origin).host}</dd>`);
      expect(page).toContain('The app runs on your computer');
      expect(page).not.toContain('<img');
      expect(page).not.toContain(logo);
      expect(host.fetches(path('logo.png'))).toBe(0);
      // The approval goes only to the loopback callback (and our own pages).
      expect(res.headers.get('content-security-policy')).toContain("form-action 'self' http://127.0.0.1:");
    });

    it('a loopback callback written without a path matches the same URL with "/" and vice versa; any port unless the document says web', async () => {
      const base = server().service.baseUrl;
      const refusedRedirect = async (clientId: string, uri: string) => expect(await authorize(base, clientId, uri), uri).toMatchObject({ status: 400, location: null, body: { error: 'invalid_redirect_uri' } });
      const native = host.serve(path('no-path'), (id) => ({ ...claudeCodeDocument(id), redirect_uris: ['http://127.0.0.1'] }));
      for (const uri of ['http://127.0.0.1', 'http://127.0.0.1/', 'http://127.0.0.1:40000/', 'http://127.0.0.1:40000']) expect(accepted(await authorize(base, native, uri)), uri).toBe(true);
      await refusedRedirect(native, 'http://127.0.0.1:40000/cb');
      const web = host.serve(path('web-slash'), (id) => ({ ...claudeCodeDocument(id), application_type: 'web', redirect_uris: ['http://localhost:33418/'] }));
      for (const uri of ['http://localhost:33418/', 'http://localhost:33418']) expect(accepted(await authorize(base, web, uri)), uri).toBe(true);
      for (const uri of ['http://localhost:40000/', 'http://localhost:40000']) await refusedRedirect(web, uri);
    });

    it('a client registered dynamically keeps its display: no host line, no warning', async () => {
      const base = server().service.baseUrl;
      const reg = (await (await fetch(`${base}/api/oauth/mcp/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'Registered', redirect_uris: ['http://127.0.0.1/callback'] }) })).json()) as { client_id: string };
      const { challenge } = pkcePair();
      const params = new URLSearchParams({ client_id: reg.client_id, redirect_uri: `http://127.0.0.1:${randomLoopbackPort()}/callback`, response_type: 'code', scope: 'mcp', code_challenge: challenge, code_challenge_method: 'S256' });
      const { res } = await new Browser().follow(`${base}/api/oauth/mcp/authorize?${params}`, base);
      const page = await res.text();
      expect(page).toContain('<h1><strong>Registered</strong>');
      expect(page).not.toContain('App from');
      expect(page).not.toContain('runs on your computer');
    });

    it('dynamic registration is unchanged: a web client with an https callback registers and is matched exactly', async () => {
      const base = server().service.baseUrl;
      const callback = 'https://claude.ai/api/mcp/auth_callback';
      const res = await fetch(`${base}/api/oauth/mcp/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'Web', redirect_uris: [callback] }) });
      expect(res.status).toBe(201);
      const reg = (await res.json()) as { client_id: string; application_type: string };
      expect(reg.application_type).toBe('web');
      expect(accepted(await authorize(base, reg.client_id, callback))).toBe(true);
      for (const variant of [`${callback}/x`, 'https://claude.ai:444/api/mcp/auth_callback', 'https://claude.com/api/mcp/auth_callback']) {
        const refused = await authorize(base, reg.client_id, variant);
        expect(refused.status, variant).toBe(400);
        expect(refused.body?.error, variant).toBe('invalid_redirect_uri');
      }
    });
  },
  { ALLOW_LOCAL_URLS: 'true', ...overrides({ OAUTH_CIMD_TIMEOUT: '500ms', OAUTH_CIMD_FETCHES_PER_MINUTE: 1000 }) },
);

describeEachDb('metadata documents: the per-address throttle', (server, kind) => {
  it('parallel authorizations naming five new documents fetch two (the budget), refuse the rest unfetched; cached ones still work', async () => {
    restoreTls ??= trustSelfSignedCertificates();
    const base = server().service.baseUrl;
    const paths = Array.from({ length: 5 }, (_, i) => `/${kind.name}/throttled-${i}.json`);
    const attempts = await Promise.all(paths.map((p) => authorize(base, host.serve(p, claudeCodeDocument, { headers: { 'cache-control': 'max-age=300' } }))));
    expect(attempts.filter(accepted)).toHaveLength(2);
    for (const refused of attempts.filter((a) => !accepted(a))) {
      expectRefused(refused);
      expect(refused.body?.error_description).toMatch(/^client_id metadata document: too many document fetches from this address, retry in \d+ s$/);
    }
    expect(paths.reduce((n, p) => n + host.fetches(p), 0)).toBe(2);
    const fetched = paths.filter((p) => host.fetches(p) === 1);
    for (const p of fetched) expect(accepted(await authorize(base, host.url(p)))).toBe(true);
    expect(paths.reduce((n, p) => n + host.fetches(p), 0)).toBe(2);
  });
}, { ALLOW_LOCAL_URLS: 'true', ...overrides({ OAUTH_CIMD_FETCHES_PER_MINUTE: 2 }) });

describeEachDb('metadata documents: private and special addresses, with the production rules', (server) => {
  let listener: Server;
  let port = 0;
  const connections: string[] = [];
  beforeAll(async () => {
    listener = createServer((socket: Socket) => {
      connections.push(String(socket.remoteAddress));
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => listener.close(() => resolve())));

  it('loopback, private, link-local (cloud metadata) and internal names are refused before any connection', async () => {
    const base = server().service.baseUrl;
    const meta = (await (await fetch(`${base}/.well-known/oauth-authorization-server/api/oauth/mcp`)).json()) as Record<string, unknown>;
    expect(meta.client_id_metadata_document_supported).toBe(true);
    for (const clientId of [
      `https://127.0.0.1:${port}/client.json`,
      `https://localhost:${port}/client.json`,
      `https://app.localhost:${port}/client.json`,
      `https://[::ffff:127.0.0.1]:${port}/client.json`,
      'https://10.1.2.3/client.json',
      'https://192.168.1.1/client.json',
      'https://169.254.169.254/latest/client.json',
      'https://[fd00::1]/client.json',
      'https://metadata.google.internal/client.json',
    ]) {
      const attempt = await authorize(base, clientId);
      expect(attempt.status, clientId).toBe(400);
      expect(attempt.body?.error, clientId).toBe('invalid_client');
    }
    await new Promise((r) => setTimeout(r, 100));
    expect(connections).toEqual([]);
  });
});

describeEachDb('metadata documents switched off (OAUTH_CLIENT_METADATA_DOCUMENTS=false)', (server, kind) => {
  it('the metadata does not offer them, an https client_id is an unknown client, nothing is fetched, registration works', async () => {
    restoreTls ??= trustSelfSignedCertificates();
    const base = server().service.baseUrl;
    for (const path of ['/.well-known/oauth-authorization-server/api/oauth/mcp', '/.well-known/openid-configuration/api/oauth/mcp']) {
      const meta = (await (await fetch(`${base}${path}`)).json()) as Record<string, unknown>;
      expect(meta.client_id_metadata_document_supported, path).toBeUndefined();
      expect(meta.token_endpoint_auth_methods_supported, path).toContain('none');
    }
    const clientId = host.serve(`/${kind.name}/off.json`, claudeCodeDocument);
    expectRefused(await authorize(base, clientId));
    expect(host.fetches(`/${kind.name}/off.json`)).toBe(0);
    const reg = await fetch(`${base}/api/oauth/mcp/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'DCR', redirect_uris: ['http://127.0.0.1/cb'] }) });
    expect(reg.status).toBe(201);
  });
}, { ALLOW_LOCAL_URLS: 'true', OAUTH_CLIENT_METADATA_DOCUMENTS: 'false' });
