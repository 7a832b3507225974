import { afterAll, beforeAll, expect, it } from 'vitest';
import { insertConnection } from '../../db/repositories/connections.repo.js';
import { ManualClock } from '../../src/core/clock.js';
import { brandWithConnections, startMediaHost } from '../support/factories.js';
import { describeEachDb, type TestServer } from '../support/server.js';

/** Per-network rules checked at creation, through REST: what each network refuses is refused before any charge. */

let media: Awaited<ReturnType<typeof startMediaHost>>;
beforeAll(async () => {
  media = await startMediaHost();
});
afterAll(() => media.close());

async function upload(s: TestServer, wsId: string, key: string, type: string): Promise<string> {
  const res = await s.request('POST', `/api/v1/workspaces/${wsId}/media`, { key, rawBody: 'p'.repeat(200), headers: { 'content-type': type } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

async function used(s: TestServer, wsId: string, key: string): Promise<Record<string, number>> {
  const usage = await s.request('GET', `/api/v1/workspaces/${wsId}/usage`, { key });
  return Object.fromEntries((usage.body.meters as { meter: string; used: number }[]).map((m) => [m.meter, m.used]));
}

describeEachDb(
  'per-network rules at creation',
  (server) => {
    const post = (key: string, wsId: string, body: unknown, query = '') => server().request('POST', `/api/v1/workspaces/${wsId}/contents${query}`, { key, body });

    it('a PNG photo is refused for Instagram (JPEG only) and TikTok (JPEG or WebP), naming the item; nothing is created or charged', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['instagram', 'tiktok', 'facebook']);
      const png = await upload(server(), ws.workspace_id, ws.api_key, 'image/png');
      const jpeg = await upload(server(), ws.workspace_id, ws.api_key, 'image/jpeg');
      const before = await used(server(), ws.workspace_id, ws.api_key);
      const photo = { brand_id: brandId, content_type: 'photo', text: 'Lunch', media: [{ media_id: jpeg }, { media_id: png }] };

      const instagram = await post(ws.api_key, ws.workspace_id, { ...photo, target_platforms: ['facebook', 'instagram'] });
      expect(instagram.status).toBe(422);
      expect(instagram.body).toEqual({
        error: 'media_unsupported_format',
        message: 'media[1] is image/png; Instagram (instagram) accepts photos as JPEG only. Convert it, or leave instagram out.',
        request_id: instagram.headers.get('x-request-id'),
        platform_slug: 'instagram',
        accepted: ['image/jpeg'],
        fields: [{ path: 'media[1].media_id', message: 'is image/png; Instagram (instagram) accepts photos as JPEG only' }],
      });
      const tiktok = await post(ws.api_key, ws.workspace_id, { ...photo, target_platforms: ['tiktok'] });
      expect([tiktok.status, tiktok.body]).toMatchObject([422, { error: 'media_unsupported_format', platform_slug: 'tiktok', accepted: ['image/jpeg', 'image/webp'], fields: [{ path: 'media[1].media_id' }] }]);
      // An address is judged by the type it answers with; a preview refuses the same request.
      const byUrl = await post(ws.api_key, ws.workspace_id, { ...photo, media: [{ url: `${media.url}/photo.png` }], target_platforms: ['instagram'] }, '?dry_run=true');
      expect([byUrl.status, byUrl.body]).toMatchObject([422, { error: 'media_unsupported_format', fields: [{ path: 'media[0].url' }] }]);

      expect(await used(server(), ws.workspace_id, ws.api_key)).toEqual(before);
      const contents = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/contents`, { key: ws.api_key });
      expect(contents.body.data).toEqual([]);

      // What the networks take passes: JPEG everywhere, WebP on TikTok, PNG where no rule applies.
      expect((await post(ws.api_key, ws.workspace_id, { ...photo, media: [{ media_id: jpeg }], target_platforms: ['instagram', 'tiktok'] })).status).toBe(201);
      expect((await post(ws.api_key, ws.workspace_id, { ...photo, media: [{ url: `${media.url}/photo.webp` }], target_platforms: ['tiktok'] })).status).toBe(201);
      expect((await post(ws.api_key, ws.workspace_id, { ...photo, target_platforms: ['facebook'] })).status).toBe(201);
    });

    it("limits as the networks document them: a TikTok photo post's description 4,000 (a video's caption stays 2,200)", async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['tiktok']);
      const video = { brand_id: brandId, target_platforms: ['tiktok'], content_type: 'video', media: [{ url: `${media.url}/video.mp4` }] };
      const photo = { ...video, content_type: 'photo', media: [{ url: `${media.url}/photo.jpg` }] };
      expect((await post(ws.api_key, ws.workspace_id, { ...photo, text: 'd'.repeat(4000) })).status).toBe(201);
      // Counted in UTF-16 code units, as TikTok counts: 2,000 emoji are 4,000.
      expect((await post(ws.api_key, ws.workspace_id, { ...photo, text: '😀'.repeat(2000) })).status).toBe(201);
      const over = await post(ws.api_key, ws.workspace_id, { ...photo, text: 'd'.repeat(4001) });
      expect([over.status, over.body]).toMatchObject([422, { error: 'caption_too_long', platform_slug: 'tiktok', limit: 4000, fields: [{ path: 'text' }] }]);
      const caption = await post(ws.api_key, ws.workspace_id, { ...video, text: 'c'.repeat(2201) });
      expect([caption.status, caption.body]).toMatchObject([422, { error: 'caption_too_long', platform_slug: 'tiktok', limit: 2200 }]);
    });

    it('GET /api/v1/platforms shows the documented limits: Pinterest 800, TikTok photos 4,000, Instagram 100 posts a day', async () => {
      const res = await server().request('GET', '/api/v1/platforms');
      const list = res.body.data as { slug: string; limits: Record<string, unknown> }[];
      const limits = (slug: string) => list.find((p) => p.slug === slug)?.limits;
      expect(limits('pinterest')).toMatchObject({ text_max_chars: 800, photo_text_max_chars: null, title_max_chars: 100 });
      expect(limits('tiktok')).toMatchObject({ text_max_chars: 2200, photo_text_max_chars: 4000, title_max_chars: 90 });
      expect(limits('instagram')).toMatchObject({ text_max_chars: 2200, daily_posts: 100 });
    });

    it('publish targets give the true reason: Pinterest has boards, but not on a sandbox connection, nor live here without PINTEREST_CLIENT_ID', async () => {
      const { ws, brandId, connections } = await brandWithConnections(server(), ['pinterest', 'threads']);
      const targets = (id: string) => server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/connections/${id}/targets`, { key: ws.api_key });

      const sandbox = await targets(connections.pinterest!);
      expect([sandbox.status, sandbox.body]).toMatchObject([400, { error: 'validation_failed', fields: [{ path: 'connection' }] }]);
      expect(sandbox.body.message).toBe('connection: a sandbox connection has no network places to choose from (Pinterest boards are listed on a live connection)');

      // A live connection left from when this installation had a Pinterest app.
      const now = server().container.clock.now();
      const row = { id: `conn_live_pin_${ws.workspace_id}`, workspaceId: ws.workspace_id, brandId, platformSlug: 'pinterest', mode: 'live', name: 'acme · Recipes', status: 'active', statusReason: null, createdAt: now, updatedAt: now };
      await insertConnection(server().container.db.kysely, row);
      const live = await targets(row.id);
      expect([live.status, live.body]).toMatchObject([422, { error: 'platform_not_supported', platform_slug: 'pinterest' }]);
      expect(live.body.message).toBe('Live connections to Pinterest are not configured on this installation (PINTEREST_CLIENT_ID).');
      const choose = await server().request('PUT', `/api/v1/workspaces/${ws.workspace_id}/connections/${row.id}/target`, { key: ws.api_key, body: { target_id: '5001' } });
      expect(choose.body).toEqual({ ...live.body, request_id: choose.headers.get('x-request-id') });

      // A network that publishes to the account itself says so, sandbox or not.
      const threads = await targets(connections.threads!);
      expect([threads.status, threads.body]).toMatchObject([422, { error: 'platform_not_supported', message: 'Threads publishes to the account itself: there is no place to choose.' }]);
    });

    it('GET /api/v1/platforms names the photo types Instagram and TikTok accept', async () => {
      const res = await server().request('GET', '/api/v1/platforms');
      const list = res.body.data as { slug: string; limits: Record<string, unknown> }[];
      const limits = (slug: string) => list.find((p) => p.slug === slug)?.limits;
      expect(limits('instagram')).toMatchObject({ photo_types: ['image/jpeg'] });
      expect(limits('tiktok')).toMatchObject({ photo_types: ['image/jpeg', 'image/webp'] });
      expect(limits('facebook')).toMatchObject({ photo_types: null });
    });
  },
  { ALLOW_LOCAL_URLS: 'true' },
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);
