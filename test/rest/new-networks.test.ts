import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { blueskyEnv, startFakeBluesky } from '../fakes/bluesky.js';
import { startFakeMastodon, type FakeMastodon } from '../fakes/mastodon.js';
import { startFakePinterest } from '../fakes/pinterest.js';
import { startFakeTiktok, tiktokEnv } from '../fakes/tiktok.js';
import { startFakeX, xEnv } from '../fakes/x.js';
import { call, callFailing, closeClientsAfterEach, connect } from '../mcp/tool-calls.js';
import { DashboardClient, textOf } from '../support/dashboard.js';
import { startMediaHost } from '../support/factories.js';
import { describeEachDb, type TestServer } from '../support/server.js';
import { addServiceEnv } from '../support/overrides.js';

/**
 * The five later networks through the running service: each kind of connection (OAuth with this installation's
 * client, OAuth on the user's own server, an app password), then a publication through the real adapter to the
 * network's fake, read back through REST.
 */
let mastodon: FakeMastodon;
let bluesky: Awaited<ReturnType<typeof startFakeBluesky>>;
let x: Awaited<ReturnType<typeof startFakeX>>;
let pinterest: Awaited<ReturnType<typeof startFakePinterest>>;
let tiktok: Awaited<ReturnType<typeof startFakeTiktok>>;
let mediaHost: Awaited<ReturnType<typeof startMediaHost>>;
const env: Record<string, string> = { ALLOW_LOCAL_URLS: 'true' };

beforeAll(async () => {
  [mastodon, bluesky, x, pinterest, tiktok, mediaHost] = await Promise.all([startFakeMastodon(), startFakeBluesky(), startFakeX(), startFakePinterest(), startFakeTiktok(), startMediaHost()]);
  pinterest.boards.push(
    { id: '5001', name: 'Recipes', privacy: 'PUBLIC', is_ads_only: false, owner: pinterest.user.username },
    { id: '5002', name: 'Travel', privacy: 'PUBLIC', is_ads_only: false, owner: pinterest.user.username },
  );
  addServiceEnv(env, blueskyEnv(bluesky), xEnv(x), pinterest.serviceEnv, tiktokEnv(tiktok));
});
afterAll(async () => {
  await Promise.all([mastodon.close(), bluesky.close(), x.close(), pinterest.close(), tiktok.close(), mediaHost.close()]);
});
closeClientsAfterEach();

/** Follows an authorization URL as a browser would after the user approves: to our callback, for JSON. */
async function approve(server: TestServer, authorizationUrl: string) {
  const consent = await fetch(authorizationUrl, { redirect: 'manual' });
  expect(consent.status, await consent.clone().text()).toBe(302);
  const back = new URL(consent.headers.get('location')!);
  expect(back.origin).toBe(new URL(server.url).origin);
  return server.request('GET', back.pathname + back.search);
}

async function publish(server: TestServer, key: string, wsId: string, body: Record<string, unknown>) {
  const created = await server.request('POST', `/api/v1/workspaces/${wsId}/contents`, { key, body });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  await server.settle();
  const content = await server.request('GET', `/api/v1/workspaces/${wsId}/contents/${created.body.content_id as string}`, { key });
  return content.body as { status: string; jobs: { status: string; external_post_url: string | null; error_message: string | null }[] };
}

describeEachDb(
  'the later networks through the service',
  (server) => {
    async function brand(name: string) {
      const ws = await server().workspace();
      const b = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name } });
      return { ws, brandId: b.body.id as string, base: `/api/v1/workspaces/${ws.workspace_id}/brands/${b.body.id as string}` };
    }

    it('Mastodon: the user names a server, this service registers there once, and a post reaches that server once', async () => {
      const { ws, brandId, base } = await brand('Fediverse');
      const missing = await server().request('POST', `${base}/connections/oauth`, { key: ws.api_key, body: { platform_slug: 'mastodon' } });
      expect([missing.status, missing.body.error]).toEqual([400, 'validation_failed']);
      expect(missing.body.message).toMatch(/^instance: /);
      const misplaced = await server().request('POST', `${base}/connections/oauth`, { key: ws.api_key, body: { platform_slug: 'x', instance: 'mastodon.social' } });
      expect([misplaced.status, misplaced.body.error]).toEqual([400, 'validation_failed']);
      const withPath = await server().request('POST', `${base}/connections/oauth`, { key: ws.api_key, body: { platform_slug: 'mastodon', instance: `${mastodon.origin}/@ada` } });
      expect([withPath.status, withPath.body.error]).toEqual([400, 'validation_failed']);

      // Five first connections to the same server at once: one registration is kept, every flow uses it.
      const starts = await Promise.all(
        Array.from({ length: 5 }, () => server().request('POST', `${base}/connections/oauth`, { key: ws.api_key, body: { platform_slug: 'mastodon', instance: mastodon.origin } })),
      );
      for (const s of starts) expect(s.status, JSON.stringify(s.body)).toBe(200);
      const clients = new Set(starts.map((s) => new URL(s.body.authorization_url as string).searchParams.get('client_id')));
      expect(clients.size).toBe(1);
      const kept = await server().container.db.kysely.selectFrom('network_instance_apps').selectAll().where('origin', '=', mastodon.origin).execute();
      expect(kept).toHaveLength(1);
      expect(kept[0]!.client_secret_sealed).toMatch(/^v1\./);
      expect(new URL(starts[0]!.body.authorization_url as string).origin).toBe(mastodon.origin);

      const connected = await approve(server(), starts[0]!.body.authorization_url as string);
      expect(connected.status, JSON.stringify(connected.body)).toBe(200);
      expect(connected.body).toMatchObject({ platform_slug: 'mastodon', mode: 'live', status: 'active', name: `@ada@${mastodon.host}` });

      // A later connection to the same server registers nothing new.
      const registrations = mastodon.apps.size;
      const again = await server().request('POST', `${base}/connections/oauth`, { key: ws.api_key, body: { platform_slug: 'mastodon', instance: mastodon.origin } });
      expect(again.status).toBe(200);
      expect(mastodon.apps.size).toBe(registrations);

      const before = mastodon.statuses.length;
      const content = await publish(server(), ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: ['mastodon'], content_type: 'text', text: 'Hello from the service' });
      expect(content.status, JSON.stringify(content.jobs)).toBe('published');
      expect(mastodon.statuses.length).toBe(before + 1);
      expect(content.jobs[0]!.external_post_url).toBe(mastodon.statuses.at(-1)!.url);
    });

    it('MCP: an assistant lists the ten networks, starts a Mastodon connection on a named server, and publishes to it', async () => {
      const { ws, brandId } = await brand('Assistant');
      const client = await connect(server(), ws.api_key);
      const platforms = await call<{ data: { slug: string; connect: string; live_available: boolean }[] }>(client, 'list_platforms', {});
      expect(platforms.data.map((p) => p.slug)).toEqual(['instagram', 'facebook', 'threads', 'youtube', 'linkedin', 'x', 'bluesky', 'mastodon', 'tiktok', 'pinterest']);
      expect(platforms.data.find((p) => p.slug === 'mastodon')).toMatchObject({ connect: 'instance_oauth', live_available: true });

      const refused = await callFailing(client, 'start_connection_oauth', { brand_id: brandId, platform_slug: 'mastodon' });
      expect(refused).toMatchObject({ error: 'validation_failed', message: expect.stringMatching(/^instance: /) });
      const started = await call<{ authorization_url: string }>(client, 'start_connection_oauth', { brand_id: brandId, platform_slug: 'mastodon', instance: mastodon.origin });
      const connected = await approve(server(), started.authorization_url);
      expect(connected.status, JSON.stringify(connected.body)).toBe(200);

      const before = mastodon.statuses.length;
      const published = await call<{ content_id: string }>(client, 'publish_content', {
        brand_id: brandId,
        target_platforms: ['mastodon'],
        content_type: 'text',
        text: 'Posted by an assistant',
        idempotency_key: `mcp-mastodon-${ws.workspace_id}`,
      });
      await server().settle();
      const content = await call<{ status: string }>(client, 'get_content', { content_id: published.content_id });
      expect(content.status).toBe('published');
      expect(mastodon.statuses.length).toBe(before + 1);
      expect(mastodon.statuses.at(-1)!.text).toBe('Posted by an assistant');
    });

    it('the dashboard: a person connects Bluesky with an app password (never echoed) and Mastodon through a link to their server', async () => {
      const { ws, brandId } = await brand('By hand');
      const client = new DashboardClient(server().url);
      await client.signIn(ws.api_key);
      await client.get('/dashboard/brands');

      const wrong = await client.post(`/dashboard/brands/${brandId}/connections/app-password`, { platform_slug: 'bluesky', identifier: bluesky.account.handle, app_password: 'wrong-password-123' });
      expect(wrong.status).toBe(400);
      expect(textOf(wrong.html)).toContain('Bluesky refused the sign-in');
      expect(wrong.html).not.toContain('wrong-password-123');
      expect(wrong.html).toContain(`value="${bluesky.account.handle}"`);
      const ok = await client.post(`/dashboard/brands/${brandId}/connections/app-password`, { platform_slug: 'bluesky', identifier: bluesky.account.handle, app_password: bluesky.account.appPassword });
      expect(ok.url).toMatch(/\/dashboard\/brands\?at=conn-conn_[^#]+#conn-conn_/);
      expect(textOf(ok.html)).toContain(`Connected “${bluesky.account.handle}” on Bluesky.`);

      const page = await client.post(`/dashboard/brands/${brandId}/connections/live`, { platform_slug: 'mastodon', instance: mastodon.origin });
      expect(page.status).toBe(200);
      const link = new RegExp(`<a href="(${mastodon.origin.replace(/[.:/]/g, '\\$&')}/oauth/authorize[^"]+)">continue on ${mastodon.origin.replace(/[.:/]/g, '\\$&')} to approve access</a>`).exec(page.html)?.[1];
      expect(link, textOf(page.html)).toBeDefined();
      const noServer = await client.post(`/dashboard/brands/${brandId}/connections/live`, { platform_slug: 'mastodon', instance: '' });
      expect(noServer.status).toBe(400);
      expect(textOf(noServer.html)).toContain("needs the address of the user's server");
    });

    it('Bluesky on a self-hosted server: the dashboard form names the server; one that cannot be reached is said so, not a refused sign-in', async () => {
      const { ws, brandId } = await brand('Own server');
      const client = new DashboardClient(server().url);
      await client.signIn(ws.api_key);
      const form = await client.get('/dashboard/brands');
      expect(form.html).toMatch(/<label for="pw-service-[^"]+">Server \(optional\)<\/label>/);

      // Nothing listens on the port of a server just closed.
      const closed = createServer();
      await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
      const dead = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
      await new Promise((done) => closed.close(done));
      const fields = { platform_slug: 'bluesky', identifier: bluesky.account.handle, app_password: bluesky.account.appPassword };
      const unreachable = await client.post(`/dashboard/brands/${brandId}/connections/app-password`, { ...fields, service: dead });
      expect(unreachable.status).toBe(400);
      expect(textOf(unreachable.html)).toContain(`could not reach ${dead}`);
      expect(textOf(unreachable.html)).not.toContain('refused the sign-in');
      expect(unreachable.html).toContain(`value="${dead}"`);
      const rest = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands/${brandId}/connections/app-password`, { key: ws.api_key, body: { ...fields, service: dead } });
      expect(rest.body).toMatchObject({ error: 'validation_failed', fields: [{ path: 'service', message: expect.stringMatching(new RegExp(`^could not reach ${dead}: `)) }] });

      const ok = await client.post(`/dashboard/brands/${brandId}/connections/app-password`, { ...fields, service: bluesky.origins.entryway });
      expect(textOf(ok.html)).toContain(`Connected “${bluesky.account.handle}” on Bluesky.`);
    });

    it('Bluesky: an app password connects the account (never stored), a wrong one is refused, and a post is written once', async () => {
      const { ws, brandId, base } = await brand('Sky');
      const viaOAuth = await server().request('POST', `${base}/connections/oauth`, { key: ws.api_key, body: { platform_slug: 'bluesky' } });
      expect([viaOAuth.status, viaOAuth.body.error]).toEqual([422, 'platform_not_supported']);
      expect(viaOAuth.body.message).toContain('app password');

      const wrong = await server().request('POST', `${base}/connections/app-password`, { key: ws.api_key, body: { platform_slug: 'bluesky', identifier: bluesky.account.handle, app_password: 'not-the-password' } });
      expect([wrong.status, wrong.body.error]).toEqual([400, 'validation_failed']);
      expect(wrong.body.message).toMatch(/^app_password: Bluesky refused the sign-in/);

      const ok = await server().request('POST', `${base}/connections/app-password`, {
        key: ws.api_key,
        body: { platform_slug: 'bluesky', identifier: bluesky.account.handle, app_password: bluesky.account.appPassword },
      });
      expect(ok.status, JSON.stringify(ok.body)).toBe(201);
      expect(ok.body).toMatchObject({ platform_slug: 'bluesky', mode: 'live', status: 'active', name: bluesky.account.handle });
      const row = await server().container.db.kysely.selectFrom('connections').select('tokens_sealed').where('id', '=', ok.body.id as string).executeTakeFirstOrThrow();
      expect(row.tokens_sealed).not.toContain(bluesky.account.appPassword);
      const tokens = await server().container.services.networkConnect.tokensOf(ok.body.id as string);
      expect(JSON.stringify(tokens)).not.toContain(bluesky.account.appPassword);

      const before = bluesky.posts.length;
      const content = await publish(server(), ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: ['bluesky'], content_type: 'text', text: 'Hello sky, see https://example.com' });
      expect(content.status, JSON.stringify(content.jobs)).toBe('published');
      expect(bluesky.posts.length).toBe(before + 1);
      expect(content.jobs[0]!.external_post_url).toMatch(new RegExp(`^https://bsky\\.app/profile/${bluesky.account.did}/post/`));

      // Renewed with a new app password after it expired: the same connection comes back.
      await server().container.db.kysely.updateTable('connections').set({ status: 'expired', status_reason: 'token_expired' }).where('id', '=', ok.body.id as string).execute();
      const renewed = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/connections/${ok.body.id as string}/app-password`, {
        key: ws.api_key,
        body: { app_password: bluesky.account.appPassword },
      });
      expect(renewed.status, JSON.stringify(renewed.body)).toBe(200);
      expect(renewed.body).toMatchObject({ id: ok.body.id, status: 'active' });
    });

    it('X: OAuth with PKCE connects the account; two renewals racing keep one set of rotated tokens and the connection', async () => {
      const { ws, brandId, base } = await brand('Birds');
      const started = await server().request('POST', `${base}/connections/oauth`, { key: ws.api_key, body: { platform_slug: 'x' } });
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      const url = new URL(started.body.authorization_url as string);
      expect(url.searchParams.get('code_challenge_method')).toBe('S256');
      const connected = await approve(server(), started.body.authorization_url as string);
      expect(connected.status, JSON.stringify(connected.body)).toBe(200);
      const connId = connected.body.id as string;

      const connect = server().container.services.networkConnect;
      const first = await connect.tokensOf(connId);
      const [a, b] = await Promise.all([connect.refresh(connId), connect.refresh(connId)]);
      // X rotates refresh tokens: the loser's refresh token was spent by the winner, yet nothing expires.
      expect(a?.accessToken).toBeDefined();
      expect(b?.accessToken).toBe(a?.accessToken);
      expect(a?.refreshToken).not.toBe(first?.refreshToken);
      expect((await connect.tokensOf(connId))?.accessToken).toBe(a?.accessToken);
      const conn = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/connections/${connId}`, { key: ws.api_key });
      expect(conn.body.status).toBe('active');

      const before = x.tweets.length;
      const content = await publish(server(), ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: ['x'], content_type: 'text', text: `Hello birds from ${ws.workspace_id}` });
      expect(content.status, JSON.stringify(content.jobs)).toBe('published');
      expect(x.tweets.length).toBe(before + 1);
    });

    it('Pinterest: the connection starts on the first board; the user lists the boards, chooses another, and the pin lands there', async () => {
      const { ws, brandId, base } = await brand('Pins');
      const started = await server().request('POST', `${base}/connections/oauth`, { key: ws.api_key, body: { platform_slug: 'pinterest' } });
      const connected = await approve(server(), started.body.authorization_url as string);
      expect(connected.status, JSON.stringify(connected.body)).toBe(200);
      expect(connected.body.name).toBe(`${pinterest.user.username} · Recipes`);
      const connPath = `/api/v1/workspaces/${ws.workspace_id}/connections/${connected.body.id as string}`;

      const targets = await server().request('GET', `${connPath}/targets`, { key: ws.api_key });
      expect(targets.body).toEqual({ data: [{ id: '5001', name: 'Recipes', current: true }, { id: '5002', name: 'Travel', current: false }] });
      const foreign = await server().request('PUT', `${connPath}/target`, { key: ws.api_key, body: { target_id: '9999' } });
      expect([foreign.status, foreign.body.error]).toEqual([400, 'validation_failed']);
      const moved = await server().request('PUT', `${connPath}/target`, { key: ws.api_key, body: { target_id: '5002' } });
      expect(moved.status, JSON.stringify(moved.body)).toBe(200);
      expect(moved.body).toMatchObject({ id: connected.body.id, name: `${pinterest.user.username} · Travel`, status: 'active' });

      const content = await publish(server(), ws.api_key, ws.workspace_id, {
        brand_id: brandId,
        target_platforms: ['pinterest'],
        content_type: 'photo',
        media: [{ url: `${mediaHost.url}/photo.jpg` }],
        title: `A pin from ${ws.workspace_id}`,
        text: 'On the chosen board',
      });
      expect(content.status, JSON.stringify(content.jobs)).toBe('published');
      expect(pinterest.pins.at(-1)).toMatchObject({ board_id: '5002', title: `A pin from ${ws.workspace_id}` });

      // Networks that publish to the account itself have no places to choose.
      const sandbox = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands/${brandId}/connections`, { key: ws.api_key, body: { platform_slug: 'threads', mode: 'sandbox', name: '@t' } });
      const none = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/connections/${sandbox.body.id as string}/targets`, { key: ws.api_key });
      expect([none.status, none.body.error]).toEqual([422, 'platform_not_supported']);
    });

    it('TikTok: OAuth connects the creator; a video is posted once, private to the creator while the app is unaudited', async () => {
      const { ws, brandId, base } = await brand('Clips');
      const started = await server().request('POST', `${base}/connections/oauth`, { key: ws.api_key, body: { platform_slug: 'tiktok' } });
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      expect(new URL(started.body.authorization_url as string).searchParams.get('client_key')).toBe(tiktok.clientKey);
      const connected = await approve(server(), started.body.authorization_url as string);
      expect(connected.status, JSON.stringify(connected.body)).toBe(200);
      expect(connected.body).toMatchObject({ platform_slug: 'tiktok', mode: 'live', status: 'active', name: tiktok.account.username });

      const before = tiktok.posts.length;
      const clip = { brand_id: brandId, target_platforms: ['tiktok'], content_type: 'video', media: [{ url: `${mediaHost.url}/video.mp4` }], text: `A clip from ${ws.workspace_id} #launch` };
      // TikTok's Direct Post guidelines: the creator chooses privacy and interactions; nothing is chosen for them.
      const unchosen = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, { key: ws.api_key, body: clip });
      expect([unchosen.status, unchosen.body]).toMatchObject([400, { error: 'validation_failed', fields: [{ path: 'network_options.tiktok' }] }]);
      const halfChosen = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
        key: ws.api_key,
        body: { ...clip, network_options: { tiktok: { privacy_level: 'SELF_ONLY', allow_comment: true } } },
      });
      expect([halfChosen.status, halfChosen.body]).toMatchObject([400, { error: 'validation_failed', fields: [{ path: 'network_options.tiktok.allow_duet' }] }]);
      expect(tiktok.posts.length).toBe(before);

      const chosen = { privacy_level: 'SELF_ONLY', allow_comment: false, allow_duet: true, allow_stitch: false };
      const content = await publish(server(), ws.api_key, ws.workspace_id, { ...clip, network_options: { tiktok: chosen } });
      expect(content.status, JSON.stringify(content.jobs)).toBe('published');
      expect(tiktok.posts.length).toBe(before + 1);
      const post = tiktok.posts.at(-1)!;
      // The unaudited app's post is the creator's alone (README, TikTok), as the creator chose here.
      expect(post).toMatchObject({ kind: 'video', mode: 'direct', source: 'FILE_UPLOAD', total: 2048, visibility: 'SELF_ONLY' });
      // Comments off as chosen (the app allows them); duets and stitches stay off, as a private account has them.
      expect(post.postInfo).toMatchObject({ title: `A clip from ${ws.workspace_id} #launch`, privacy_level: 'SELF_ONLY', disable_comment: true, disable_duet: true, disable_stitch: true });
      // A private post has no public address: the job points at the creator's profile.
      expect(content.jobs[0]).toMatchObject({ status: 'published', external_post_url: `https://www.tiktok.com/@${tiktok.account.username}`, error_message: null });
    });
  },
  env,
  () => ({ clock: new ManualClock(Date.now()), workers: false }),
);
