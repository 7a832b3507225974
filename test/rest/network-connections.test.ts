import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { startedOAuthSchema } from '../../src/core/connections/connections.schema.js';
import { graphError, on, startFakeThreads, threadsEnv, type FakeThreads } from '../fakes/threads.js';
import { startReceiver } from '../support/receiver.js';
import { describeEachDb, type TestServer } from '../support/server.js';
import { addServiceEnv } from '../support/overrides.js';

let fake: FakeThreads;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const env: Record<string, string> = { ALLOW_LOCAL_URLS: 'true' };

beforeAll(async () => {
  fake = await startFakeThreads();
  receiver = await startReceiver();
  addServiceEnv(env, threadsEnv(fake));
});
afterAll(async () => {
  await fake.close();
  await receiver.close();
});

/** Starts a connection, "approves" on the fake network, and follows the network's redirect to our callback. */
async function connect(server: TestServer, key: string, wsId: string, start: { brandId?: string; connId?: string }) {
  const path = start.connId ? `/api/v1/workspaces/${wsId}/connections/${start.connId}/oauth` : `/api/v1/workspaces/${wsId}/brands/${start.brandId!}/connections/oauth`;
  const started = await server.request('POST', path, { key, ...(start.connId ? {} : { body: { platform_slug: 'threads' } }) });
  expect(started.status).toBe(200);
  const authUrl = new URL(started.body.authorization_url as string);
  expect(authUrl.origin + authUrl.pathname).toBe(fake.authorizeUrl);
  expect(authUrl.searchParams.get('state')).toBe(started.body.state);
  const redirectUri = authUrl.searchParams.get('redirect_uri')!;
  expect(redirectUri).toBe(`${server.service.baseUrl}/api/v1/oauth/networks/threads/callback`);
  const code = fake.issueCode(redirectUri);
  const callback = `/api/v1/oauth/networks/threads/callback?code=${encodeURIComponent(code)}&state=${encodeURIComponent(started.body.state as string)}`;
  return { started, callback, response: await server.request('GET', callback) };
}

/** One MCP tool call through the SDK client on `/mcp`, as a real client makes it; the result parsed from its text. */
async function callTool(server: TestServer, key: string, name: string, args: Record<string, unknown>): Promise<{ isError: boolean; body: Record<string, unknown> }> {
  const client = new Client({ name: 'network-connections-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
  try {
    await client.listTools(); // so the client checks the result against the tool's output schema
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    const text = result.content[0];
    return { isError: result.isError === true, body: JSON.parse(text?.type === 'text' ? text.text : 'null') as Record<string, unknown> };
  } finally {
    await client.close();
  }
}

describeEachDb(
  'live network connections (OAuth through the fake Threads API)',
  (server) => {
    it('connects a live account, publishes through the real adapter to the fake network, and refuses a replayed state', async () => {
      const ws = await server().workspace();
      const brand = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name: 'Live' } });
      const platforms = await server().request('GET', '/api/v1/platforms');
      expect((platforms.body.data as { slug: string; live_available: boolean }[]).find((p) => p.slug === 'threads')?.live_available).toBe(true);
      expect((platforms.body.data as { slug: string; live_available: boolean }[]).find((p) => p.slug === 'linkedin')?.live_available).toBe(false);

      const { response, callback } = await connect(server(), ws.api_key, ws.workspace_id, { brandId: brand.body.id as string });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ id: expect.stringMatching(/^conn_/), mode: 'live', status: 'active', platform_slug: 'threads', name: fake.username });
      const stored = await server().container.db.kysely.selectFrom('connections').select('tokens_sealed').where('id', '=', response.body.id as string).executeTakeFirstOrThrow();
      expect(stored.tokens_sealed).toMatch(/^v1\./);
      expect(stored.tokens_sealed).not.toContain('long-');

      const replay = await server().request('GET', callback);
      expect(replay.status).toBe(400);
      expect(replay.body).toMatchObject({ error: 'validation_failed', message: expect.stringContaining('already used') });

      const before = fake.posts.length;
      const created = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
        key: ws.api_key,
        body: { brand_id: brand.body.id, target_platforms: ['threads'], content_type: 'text', text: 'Live on the fake network.' },
      });
      expect(created.status).toBe(201);
      await server().settle();
      const content = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/contents/${created.body.content_id as string}`, { key: ws.api_key });
      expect(content.body.status).toBe('published');
      const job = (content.body.jobs as { external_post_url: string }[])[0]!;
      expect(fake.posts.length).toBe(before + 1);
      expect(job.external_post_url).toBe(fake.posts.at(-1)?.permalink);

      const linkedin = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands/${brand.body.id as string}/connections/oauth`, { key: ws.api_key, body: { platform_slug: 'linkedin' } });
      expect(linkedin.status).toBe(422);
      expect(linkedin.body.error).toBe('platform_not_supported');
    });

    it('MCP list_platforms answers live_available as REST does: true for the configured network, false for the others', async () => {
      const ws = await server().workspace();
      const rest = await server().request('GET', '/api/v1/platforms');
      const mcp = await callTool(server(), ws.api_key, 'list_platforms', {});
      expect(mcp.isError).toBe(false);
      expect(mcp.body).toEqual(rest.body);
      const live = (body: Record<string, unknown>) => Object.fromEntries((body.data as { slug: string; live_available: boolean }[]).map((p) => [p.slug, p.live_available]));
      expect(live(mcp.body)).toEqual({ instagram: false, facebook: false, threads: true, youtube: false, linkedin: false, x: false, bluesky: true, mastodon: true, tiktok: false, pinterest: false });
    });

    it('MCP start_connection_oauth answers the same StartedNetworkOAuth as REST, and platform_not_supported for an unconfigured network', async () => {
      const ws = await server().workspace();
      const brand = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name: 'Both doors' } });
      const started = await callTool(server(), ws.api_key, 'start_connection_oauth', { brand_id: brand.body.id, platform_slug: 'threads' });
      expect(started.isError).toBe(false);
      expect(startedOAuthSchema.strict().parse(started.body)).toEqual(started.body);
      expect(new URL(started.body.authorization_url as string).searchParams.get('state')).toBe(started.body.state);
      const refused = await callTool(server(), ws.api_key, 'start_connection_oauth', { brand_id: brand.body.id, platform_slug: 'linkedin' });
      expect(refused).toMatchObject({ isError: true, body: { error: 'platform_not_supported', platform_slug: 'linkedin' } });
    });

    it('an expired state is refused with a clear error', async () => {
      const ws = await server().workspace();
      const brand = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name: 'Late' } });
      const started = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands/${brand.body.id as string}/connections/oauth`, { key: ws.api_key, body: { platform_slug: 'threads' } });
      const clock = server().container.clock as ManualClock;
      clock.advance(16 * 60_000);
      const redirect = new URL(started.body.authorization_url as string).searchParams.get('redirect_uri')!;
      const late = await server().request('GET', `/api/v1/oauth/networks/threads/callback?code=${fake.issueCode(redirect)}&state=${started.body.state as string}`);
      expect(late.status).toBe(400);
      expect(late.body.message).toContain('expired');
    });

    it('a revoked token expires the connection (event delivered), and reconnecting keeps the same connection id', async () => {
      const ws = await server().workspace();
      await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/webhooks`, {
        key: ws.api_key,
        body: { url: `${receiver.url}/expired-${ws.workspace_id}`, description: '', enabled_events: ['connection.expired'] },
      });
      const brand = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name: 'Expiring' } });
      const { response } = await connect(server(), ws.api_key, ws.workspace_id, { brandId: brand.body.id as string });
      const connId = response.body.id as string;
      const tokens = await server().container.services.networkConnect.tokensOf(connId);
      fake.revokeToken(tokens!.accessToken);

      await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
        key: ws.api_key,
        body: { brand_id: brand.body.id, target_platforms: ['threads'], content_type: 'text', text: 'After a password change.' },
      });
      await server().settle();
      const expired = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/connections/${connId}`, { key: ws.api_key });
      expect(expired.body).toMatchObject({ status: 'expired', status_reason: 'token_expired' });
      await server().container.dispatcher.drain();
      const events = receiver.received.filter((r) => r.path === `/expired-${ws.workspace_id}`).map((r) => JSON.parse(r.rawBody) as { data: { connection_id: string; reason: string } });
      expect(events.map((e) => e.data)).toEqual([expect.objectContaining({ connection_id: connId, reason: 'token_expired' })]);

      const again = await connect(server(), ws.api_key, ws.workspace_id, { connId });
      expect(again.response.status).toBe(200);
      expect(again.response.body).toMatchObject({ id: connId, status: 'active', status_reason: null });
    });

    it('tokens are refreshed before they expire; a failed refresh expires the connection and sends connection.expired', async () => {
      const ws = await server().workspace();
      await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/webhooks`, {
        key: ws.api_key,
        body: { url: `${receiver.url}/refresh-${ws.workspace_id}`, description: '', enabled_events: ['connection.expired'] },
      });
      const brand = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name: 'Refresh' } });
      const { response } = await connect(server(), ws.api_key, ws.workspace_id, { brandId: brand.body.id as string });
      const connId = response.body.id as string;
      const first = await server().container.services.networkConnect.tokensOf(connId);
      const clock = server().container.clock as ManualClock;

      // Within a day of expiry the sweep renews the token.
      clock.set(first!.expiresAt! - 3_600_000);
      await server().container.services.networkConnect.sweepExpiring(7 * 86_400_000);
      const renewed = await server().container.services.networkConnect.tokensOf(connId);
      expect(renewed!.accessToken).not.toBe(first!.accessToken);
      expect(renewed!.expiresAt!).toBeGreaterThan(first!.expiresAt!);
      expect(fake.requests.some((r) => r.path === '/refresh_access_token')).toBe(true);

      // When the network refuses the refresh, the connection expires once, with an event.
      fake.revokeToken(renewed!.accessToken);
      clock.set(renewed!.expiresAt! - 3_600_000);
      await server().container.services.networkConnect.sweepExpiring(7 * 86_400_000);
      await server().container.services.networkConnect.sweepExpiring(7 * 86_400_000);
      const conn = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/connections/${connId}`, { key: ws.api_key });
      expect(conn.body).toMatchObject({ status: 'expired', status_reason: 'refresh_failed' });
      await server().container.dispatcher.drain();
      const events = receiver.received.filter((r) => r.path === `/refresh-${ws.workspace_id}`).map((r) => JSON.parse(r.rawBody) as { type: string; data: { reason: string } });
      expect(events.map((e) => [e.type, e.data.reason])).toEqual([['connection.expired', 'refresh_failed']]);
    });

    it('a thread that stops half way keeps its credit (its first posts are live); one that fails at post 1 is refunded', async () => {
      const ws = await server().workspace();
      const brand = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name: 'Chains' } });
      const brandId = brand.body.id as string;
      expect((await connect(server(), ws.api_key, ws.workspace_id, { brandId })).response.status).toBe(200);
      await server().container.services.wallet.grant({ workspaceId: ws.workspace_id, amount: 10, source: 'grant', expiresAt: null });
      const chain = (label: string) => Array.from({ length: 4 }, (_, i) => `${label} ${i + 1}`);
      const publish = async (thread: string[]) => {
        const res = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
          key: ws.api_key,
          body: { brand_id: brandId, target_platforms: ['threads'], content_type: 'thread', thread, modo: 'creditos' },
        });
        expect(res.status).toBe(201);
        await server().settle();
        const content = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/contents/${res.body.content_id as string}`, { key: ws.api_key });
        return (content.body.jobs as { status: string; error_message: string }[])[0]!;
      };
      const refusal = graphError(100, 'Invalid parameter', { subcode: 4279009 });

      const before = fake.posts.length;
      fake.failNext((r) => on.publish(r) && fake.posts.length === before + 2, 400, refusal, 1);
      const half = await publish(chain('Half'));
      expect(half.status).toBe('failed');
      expect(half.error_message).toMatch(/^The chain stopped at post 3 of 4; posts 1\.\.2 are live/);
      fake.failNext((r) => on.publish(r), 400, refusal, 1);
      const none = await publish(chain('None'));
      expect(none.status).toBe('failed');

      const statement = await server().request<{ saldo: number; ledger: { data: { kind: string; amount: number }[] } }>('GET', `/v1/workspaces/${ws.workspace_id}/wallet`, { key: ws.api_key });
      // Two publications paid; only the chain with nothing live was given back.
      const entries = statement.body.ledger.data;
      expect(entries.map((e) => e.kind).sort()).toEqual(['grant', 'refund', 'spend', 'spend']);
      const spent = entries.filter((e) => e.kind === 'spend').map((e) => -e.amount);
      expect(spent[0]).toBe(spent[1]);
      expect(entries.find((e) => e.kind === 'refund')?.amount).toBe(spent[0]);
      expect(statement.body.saldo).toBe(10 - spent[0]!);
    });
  },
  env,
  () => ({ clock: new ManualClock(Date.now()), workers: false }),
);
