import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { createLogger } from '../../src/observability/logger.js';
import { startFakeThreads, threadsEnv, type FakeThreads } from '../fakes/threads.js';
import { brandWithConnections } from '../support/factories.js';
import { Browser, pkcePair } from '../support/oauth-browser.js';
import { DashboardClient } from '../support/dashboard.js';
import { describeEachDb, startTestServer } from '../support/server.js';
import { testDatabaseKinds } from '../support/databases.js';
import { addServiceEnv } from '../support/overrides.js';

let fake: FakeThreads;
const logLines: string[] = [];
const sink = new Writable({
  write(chunk: Buffer, _e, done) {
    logLines.push(chunk.toString());
    done();
  },
});
const env: Record<string, string> = { ALLOW_LOCAL_URLS: 'true' };
beforeAll(async () => {
  fake = await startFakeThreads();
  addServiceEnv(env, threadsEnv(fake));
});
afterAll(() => fake.close());

describeEachDb(
  'secrets at rest and in logs',
  (server) => {
    it('after creating every kind of secret, the raw database and the logs of the whole scenario contain none of them', async () => {
      const base = server().service.baseUrl;
      const { ws, brandId } = await brandWithConnections(server(), ['linkedin']);
      const secrets: string[] = [ws.api_key];
      const key = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: ws.api_key, body: { name: 'second' } });
      secrets.push(key.body.api_key as string);
      const client = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/oauth-clients`, {
        key: ws.api_key,
        body: { client_name: 'GPT', redirect_uris: ['https://chat.openai.com/aip/g-1/oauth/callback'] },
      });
      secrets.push(client.body.client_secret as string);
      const hook = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/webhooks`, {
        key: ws.api_key,
        body: { url: 'http://127.0.0.1:9/hook', description: '', enabled_events: ['content.published'] },
      });
      secrets.push(hook.body.secret as string);

      // An OAuth flow: authorization code and access token.
      const reg = await fetch(`${base}/api/oauth/mcp/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: ['https://claude.ai/api/mcp/auth_callback'] }) });
      const clientId = ((await reg.json()) as { client_id: string }).client_id;
      const { verifier, challenge } = pkcePair();
      const auth = `${base}/api/oauth/mcp/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: 'https://claude.ai/api/mcp/auth_callback', response_type: 'code', scope: 'mcp', code_challenge: challenge, code_challenge_method: 'S256' })}`;
      const callback = await new Browser().authorize(auth, base, ws.api_key);
      const code = callback.searchParams.get('code')!;
      const token = await fetch(`${base}/api/oauth/mcp/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: 'https://claude.ai/api/mcp/auth_callback', client_id: clientId, code_verifier: verifier }).toString(),
      });
      const access = ((await token.json()) as { access_token: string }).access_token;
      secrets.push(access);
      await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: access });

      // A live network connection: its tokens.
      const started = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands/${brandId}/connections/oauth`, { key: ws.api_key, body: { platform_slug: 'threads' } });
      const redirect = new URL(started.body.authorization_url as string).searchParams.get('redirect_uri')!;
      const connected = await server().request('GET', `/api/v1/oauth/networks/threads/callback?code=${fake.issueCode(redirect)}&state=${started.body.state as string}`);
      const tokens = await server().container.services.networkConnect.tokensOf(connected.body.id as string);
      secrets.push(tokens!.accessToken);

      // A dashboard sign-in: the key is posted in a form and the session cookie is a bearer secret too.
      const dashboard = new DashboardClient(base);
      await dashboard.signIn(ws.api_key);
      secrets.push(dashboard.cookie('svc_session')!);
      await dashboard.get('/dashboard/api-keys');

      // Every table, every row, as text.
      const tables = server().database.dialect === 'sqlite'
        ? (await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(server().container.db.kysely)).rows.map((r) => r.name)
        : (await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(server().container.db.kysely)).rows.map((r) => r.name);
      let dump = '';
      for (const table of tables) dump += JSON.stringify((await sql.raw(`select * from "${table}"`).execute(server().container.db.kysely)).rows);
      expect(dump.length).toBeGreaterThan(1000);
      for (const secret of secrets) {
        expect(dump, 'a secret is stored in plain text').not.toContain(secret);
      }
      expect(dump).not.toContain(code);

      const logs = logLines.join('');
      expect(logs.length).toBeGreaterThan(100);
      for (const secret of [...secrets, code]) expect(logs, 'a secret reached the logs').not.toContain(secret);
      expect(logs.toLowerCase()).not.toMatch(/"authorization":\s*"bearer/);
    });
  },
  env,
  () => ({ clock: new ManualClock(Date.now()), workers: false, logger: createLogger('debug', sink) }),
);

describeEachDb(
  'SSRF on webhook and media addresses',
  (server) => {
    const addresses = [
      'https://127.0.0.1/x',
      'https://[::1]/x',
      'https://10.1.2.3/x',
      'https://172.16.5.4/x',
      'https://192.168.1.1/x',
      'https://169.254.169.254/latest/meta-data',
      'https://0.0.0.0/x',
      'https://[::ffff:127.0.0.1]/x',
      'https://2130706433/x',
      'https://0177.0.0.1/x',
      'https://0x7f.0.0.1/x',
      'https://localhost/x',
      'http://example.com/x',
    ];
    it.each(addresses)('refuses %s as a webhook endpoint and as a media address', async (url) => {
      const { ws, brandId } = await brandWithConnections(server(), ['linkedin']);
      const hook = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/webhooks`, { key: ws.api_key, body: { url, description: '', enabled_events: ['content.published'] } });
      expect(hook.status).toBe(400);
      expect(hook.body.message).toMatch(/^url: /);
      const media = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
        key: ws.api_key,
        body: { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'photo', media: [{ url }] },
      });
      expect(media.status).toBe(400);
      expect(media.body.message).toMatch(/^media\[0\]\.url: /);
    });
  },
);

it('open endpoints are rate limited per client address, and answers carry security headers', async () => {
  const server = await startTestServer(testDatabaseKinds()[0]!, { OPEN_RATE_LIMIT_PER_MINUTE: '5' });
  try {
    const body = { secret: 'whsec_x', signature_header: 'sha256=00', payload: '1.{}', tolerance_seconds: 300 };
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await server.request('POST', '/api/v1/webhooks/verify', { body })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const res = await fetch(`${server.url}/healthz`);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(res.headers.get('strict-transport-security')).toBeTruthy();
    expect(server.service.server.headersTimeout).toBeLessThanOrEqual(15_000);
  } finally {
    await server.stop();
  }
});
