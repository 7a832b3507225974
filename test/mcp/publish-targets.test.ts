import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { startFakePinterest } from '../fakes/pinterest.js';
import { startMediaHost } from '../support/factories.js';
import { describeEachDb, type TestServer } from '../support/server.js';
import { call, callFailing, closeClientsAfterEach, connect } from './tool-calls.js';
import { addServiceEnv } from '../support/overrides.js';

/**
 * An assistant chooses a Pinterest connection's board over MCP, as the dashboard and REST let a person: the boards
 * are read from the network (its fake), the choice is checked there, and the next pin lands on the board chosen.
 */
let pinterest: Awaited<ReturnType<typeof startFakePinterest>>;
let mediaHost: Awaited<ReturnType<typeof startMediaHost>>;
const env: Record<string, string> = { ALLOW_LOCAL_URLS: 'true' };

beforeAll(async () => {
  [pinterest, mediaHost] = await Promise.all([startFakePinterest(), startMediaHost()]);
  pinterest.boards.push(
    { id: '7001', name: 'Recipes', privacy: 'PUBLIC', is_ads_only: false, owner: pinterest.user.username },
    { id: '7002', name: 'Travel', privacy: 'PUBLIC', is_ads_only: false, owner: pinterest.user.username },
    { id: '7003', name: 'Drafts', privacy: 'SECRET', is_ads_only: false, owner: pinterest.user.username },
  );
  addServiceEnv(env, pinterest.serviceEnv);
});
afterAll(async () => {
  await Promise.all([pinterest.close(), mediaHost.close()]);
});
closeClientsAfterEach();

/** The person's part: approving on the network's page, which redirects to our callback. */
async function approve(server: TestServer, authorizationUrl: string): Promise<void> {
  const consent = await fetch(authorizationUrl, { redirect: 'manual' });
  expect(consent.status).toBe(302);
  const back = new URL(consent.headers.get('location')!);
  const done = await server.request('GET', back.pathname + back.search);
  expect(done.status, JSON.stringify(done.body)).toBe(200);
}

describeEachDb(
  'MCP: where a connection publishes (list_publish_targets, choose_publish_target)',
  (server) => {
    it('lists the boards the account can pin to, moves the connection to another, and the next pin lands there', async () => {
      const ws = await server().workspace();
      const client = await connect(server(), ws.api_key);
      const brand = await call<{ id: string }>(client, 'create_brand', { name: 'Pins' });
      const started = await call<{ authorization_url: string }>(client, 'start_connection_oauth', { brand_id: brand.id, platform_slug: 'pinterest' });
      await approve(server(), started.authorization_url);
      const [conn] = (await call<{ data: { id: string; name: string }[] }>(client, 'list_connections', { platform_slug: 'pinterest' })).data;
      expect(conn?.name).toBe(`${pinterest.user.username} · Recipes`);

      // The secret board is not offered: pins published from here are public.
      const listed = await call(client, 'list_publish_targets', { connection_id: conn!.id });
      expect(listed).toEqual({ data: [{ id: '7001', name: 'Recipes', current: true }, { id: '7002', name: 'Travel', current: false }] });

      const secret = await callFailing(client, 'choose_publish_target', { connection_id: conn!.id, target_id: '7003' });
      expect(secret).toMatchObject({ error: 'validation_failed', message: expect.stringMatching(/^target_id: /) });
      const moved = await call<{ id: string; name: string }>(client, 'choose_publish_target', { connection_id: conn!.id, target_id: '7002' });
      expect(moved).toMatchObject({ id: conn!.id, name: `${pinterest.user.username} · Travel` });
      expect((await call(client, 'list_publish_targets', { connection_id: conn!.id })).data).toContainEqual({ id: '7002', name: 'Travel', current: true });

      const published = await call<{ content_id: string }>(client, 'publish_content', {
        brand_id: brand.id,
        target_platforms: ['pinterest'],
        content_type: 'photo',
        media: [{ url: `${mediaHost.url}/photo.jpg` }],
        title: `Chosen by an assistant ${ws.workspace_id}`,
        text: 'On the board it chose',
        idempotency_key: `mcp-board-${ws.workspace_id}`,
      });
      await server().settle();
      expect(await call(client, 'get_content', { content_id: published.content_id })).toMatchObject({ status: 'published' });
      expect(pinterest.pins.at(-1)).toMatchObject({ board_id: '7002', title: `Chosen by an assistant ${ws.workspace_id}` });
    });

    it('refuses a connection without places, another workspace\'s connection, and an unknown one, in the REST error body', async () => {
      const ws = await server().workspace();
      const other = await server().workspace();
      const client = await connect(server(), ws.api_key);
      const otherClient = await connect(server(), other.api_key);
      const brand = await call<{ id: string }>(client, 'create_brand', { name: 'Threads only' });
      const sandbox = await call<{ id: string }>(client, 'add_sandbox_connection', { brand_id: brand.id, platform_slug: 'threads', mode: 'sandbox', name: '@t' });

      expect(await callFailing(client, 'list_publish_targets', { connection_id: sandbox.id })).toMatchObject({ error: 'platform_not_supported' });
      expect(await callFailing(client, 'choose_publish_target', { connection_id: sandbox.id, target_id: '7001' })).toMatchObject({ error: 'platform_not_supported' });
      expect(await callFailing(otherClient, 'list_publish_targets', { connection_id: sandbox.id })).toMatchObject({ error: 'not_found' });
      expect(await callFailing(otherClient, 'choose_publish_target', { connection_id: sandbox.id, target_id: '7001' })).toMatchObject({ error: 'not_found' });
      expect(await callFailing(client, 'list_publish_targets', { connection_id: 'conn_missing' })).toMatchObject({ error: 'not_found' });
    });
  },
  env,
  () => ({ clock: new ManualClock(Date.now()), workers: false }),
);
