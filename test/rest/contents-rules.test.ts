import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { brandWithConnections, startMediaHost } from '../support/factories.js';
import { type ApiResponse, describeEachDb, type TestServer } from '../support/server.js';

let media: Awaited<ReturnType<typeof startMediaHost>>;
beforeAll(async () => {
  media = await startMediaHost();
});
afterAll(() => media.close());

const TINY_PLAN = { brands: 1, connections: 3, media_storage: 1000, webhooks: 1, inspiration_library: 1, criacao_de_conteudos: 2, publicacoes: 3 };

function expectError(res: ApiResponse, status: number, code: string, extra: Record<string, unknown> = {}): void {
  expect(res.status).toBe(status);
  expect(res.body).toEqual({ error: code, message: expect.any(String), request_id: res.headers.get('x-request-id'), ...extra });
}

async function countContents(server: TestServer, wsId: string): Promise<number> {
  const rows = await server.container.db.kysely.selectFrom('contents').select('id').where('workspace_id', '=', wsId).execute();
  return rows.length;
}

describeEachDb(
  'content rules',
  (server) => {
    const post = (key: string, wsId: string, body: unknown, headers: Record<string, string> = {}, query = '') =>
      server().request('POST', `/api/v1/workspaces/${wsId}/contents${query}`, { key, body, headers });

    it('422 platform_not_supported when content_type does not fit a platform; nothing stored', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['instagram', 'linkedin']);
      const res = await post(ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: ['linkedin', 'instagram'], content_type: 'text', text: 'hi' });
      expectError(res, 422, 'platform_not_supported', { platform_slug: 'instagram' });
      expect(res.body.message).toMatch(/instagram/i);
      expect(await countContents(server(), ws.workspace_id)).toBe(0);
    });

    it('each network counts text its own way: Bluesky graphemes, X weighted characters and links as 23', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['bluesky', 'x', 'threads']);
      const family = '👨\u200d👩\u200d👧';
      // 300 family emoji: 300 graphemes (Bluesky's limit) but 1,500 code points (far over Threads' 500).
      const onBluesky = await post(ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: ['bluesky'], content_type: 'text', text: family.repeat(300) });
      expect(onBluesky.status, JSON.stringify(onBluesky.body)).toBe(201);
      const overBluesky = await post(ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: ['bluesky'], content_type: 'text', text: family.repeat(301) });
      expect([overBluesky.status, overBluesky.body]).toMatchObject([422, { error: 'caption_too_long', platform_slug: 'bluesky', limit: 300 }]);
      expect(overBluesky.body.message).toContain('has 301 characters');
      const onThreads = await post(ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: ['threads'], content_type: 'text', text: family.repeat(101) });
      expect([onThreads.status, onThreads.body]).toMatchObject([422, { error: 'caption_too_long', platform_slug: 'threads', limit: 500 }]);

      // X: 140 CJK characters weigh 280 (accepted), 141 weigh 282; a 200-character link weighs 23.
      const cjk = await post(ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: ['x'], content_type: 'text', text: '漢'.repeat(140) });
      expect(cjk.status, JSON.stringify(cjk.body)).toBe(201);
      const overX = await post(ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: ['x'], content_type: 'text', text: '漢'.repeat(141) });
      expect([overX.status, overX.body]).toMatchObject([422, { error: 'caption_too_long', platform_slug: 'x', limit: 280 }]);
      expect(overX.body.message).toContain('has 282 characters');
      const link = `https://example.com/${'a'.repeat(200)}`;
      const linked = await post(ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: ['x'], content_type: 'text', text: `${'a'.repeat(256)} ${link}` });
      expect(linked.status, JSON.stringify(linked.body)).toBe(201);
    });

    it('Mastodon counts 500 with links as 23 and another server\'s account by its local part; a longer text is refused', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['mastodon']);
      const body = (text: string) => ({ brand_id: brandId, target_platforms: ['mastodon'], content_type: 'text', text });
      // 23 for the link, 8 for " @alice ", 469 letters: 500, though 600 code points.
      const prefix = `https://example.com/${'p'.repeat(100)} @alice@example.social `;
      const fits = await post(ws.api_key, ws.workspace_id, body(`${prefix}${'m'.repeat(469)}`));
      expect(fits.status, JSON.stringify(fits.body)).toBe(201);
      const over = await post(ws.api_key, ws.workspace_id, body(`${prefix}${'m'.repeat(470)}`));
      expectError(over, 422, 'caption_too_long', {
        platform_slug: 'mastodon',
        limit: 500,
        fields: [{ path: 'text', message: 'has 501 characters; the limit for Mastodon (mastodon) is 500. Reduce it, or send thread_split: "auto" to publish it as a thread.' }],
      });
      expect(await countContents(server(), ws.workspace_id)).toBe(1);
    });

    it('TikTok: caption 2,200 and title 90 on a video or photos; a post without media is refused before anything is stored', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['tiktok']);
      const video = { brand_id: brandId, target_platforms: ['tiktok'], content_type: 'video', media: [{ url: `${media.url}/video.mp4` }] };
      const photos = { ...video, content_type: 'photo', media: [{ url: `${media.url}/photo.jpg` }, { url: `${media.url}/photo.jpg` }] };
      const fits = await post(ws.api_key, ws.workspace_id, { ...video, text: 'c'.repeat(2200), title: 't'.repeat(90) });
      expect(fits.status, JSON.stringify(fits.body)).toBe(201);
      expect((await post(ws.api_key, ws.workspace_id, { ...photos, text: 'c'.repeat(2200), title: 't'.repeat(90) })).status).toBe(201);

      const caption = await post(ws.api_key, ws.workspace_id, { ...video, text: 'c'.repeat(2201) });
      expectError(caption, 422, 'caption_too_long', { platform_slug: 'tiktok', limit: 2200, fields: [{ path: 'text', message: 'has 2201 characters; the limit for TikTok (tiktok) is 2200. Reduce it.' }] });
      const title = await post(ws.api_key, ws.workspace_id, { ...photos, title: 't'.repeat(91) });
      expectError(title, 422, 'caption_too_long', { platform_slug: 'tiktok', limit: 90, fields: [{ path: 'title', message: 'has 91 characters; the limit for TikTok (tiktok) is 90.' }] });
      // TikTok counts UTF-16 code units, as its API clips them: 1,100 emoji fit the caption, 1,101 do not (2,202).
      expect((await post(ws.api_key, ws.workspace_id, { ...video, text: '😀'.repeat(1100) })).status).toBe(201);
      const emoji = await post(ws.api_key, ws.workspace_id, { ...video, text: '😀'.repeat(1101) });
      expectError(emoji, 422, 'caption_too_long', { platform_slug: 'tiktok', limit: 2200, fields: [{ path: 'text', message: 'has 2202 characters; the limit for TikTok (tiktok) is 2200. Reduce it.' }] });
      const emojiTitle = await post(ws.api_key, ws.workspace_id, { ...photos, title: '😀'.repeat(46) });
      expectError(emojiTitle, 422, 'caption_too_long', { platform_slug: 'tiktok', limit: 90, fields: [{ path: 'title', message: 'has 92 characters; the limit for TikTok (tiktok) is 90.' }] });
      for (const type of ['text', 'thread']) {
        const words = type === 'thread' ? { thread: ['one', 'two'] } : { text: 'words only' };
        const textOnly = await post(ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: ['tiktok'], content_type: type, ...words });
        expectError(textOnly, 422, 'platform_not_supported', { platform_slug: 'tiktok' });
        expect(textOnly.body.message).toBe(`TikTok (tiktok) does not publish content_type ${type}; it accepts video, reel, photo.`);
      }
      expect(await countContents(server(), ws.workspace_id)).toBe(3);
    });

    it('Pinterest: description 800 and title 100 on a pin; a text post is refused', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['pinterest']);
      const pin = { brand_id: brandId, target_platforms: ['pinterest'], content_type: 'photo', media: [{ url: `${media.url}/photo.jpg` }] };
      const fits = await post(ws.api_key, ws.workspace_id, { ...pin, text: 'd'.repeat(800), title: 't'.repeat(100) });
      expect(fits.status, JSON.stringify(fits.body)).toBe(201);

      const description = await post(ws.api_key, ws.workspace_id, { ...pin, text: 'd'.repeat(801) });
      expectError(description, 422, 'caption_too_long', { platform_slug: 'pinterest', limit: 800, fields: [{ path: 'text', message: 'has 801 characters; the limit for Pinterest (pinterest) is 800. Reduce it.' }] });
      const title = await post(ws.api_key, ws.workspace_id, { ...pin, content_type: 'video', media: [{ url: `${media.url}/video.mp4` }], title: 't'.repeat(101) });
      expectError(title, 422, 'caption_too_long', { platform_slug: 'pinterest', limit: 100, fields: [{ path: 'title', message: 'has 101 characters; the limit for Pinterest (pinterest) is 100.' }] });
      const overridden = await post(ws.api_key, ws.workspace_id, { ...pin, overrides: { pinterest: { title: 'o'.repeat(101) } } });
      expectError(overridden, 422, 'caption_too_long', { platform_slug: 'pinterest', limit: 100, fields: [{ path: 'overrides.pinterest.title', message: 'has 101 characters; the limit for Pinterest (pinterest) is 100.' }] });
      const text = await post(ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: ['pinterest'], content_type: 'text', text: 'words only' });
      expectError(text, 422, 'platform_not_supported', { platform_slug: 'pinterest' });
      expect(await countContents(server(), ws.workspace_id)).toBe(1);
    });

    it('400 validation_failed at media when a video or a reel carries more than one file; several photos are fine', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['youtube', 'facebook']);
      const two = [{ url: `${media.url}/video.mp4` }, { url: `${media.url}/video.mp4` }];
      for (const content_type of ['video', 'reel']) {
        const res = await post(ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: content_type === 'video' ? ['youtube'] : ['facebook'], content_type, title: 'Clip', media: two });
        expectError(res, 400, 'validation_failed', { fields: [{ path: 'media', message: `content_type ${content_type} takes one media item (a single video); got 2` }] });
      }
      expect(await countContents(server(), ws.workspace_id)).toBe(0);
      const photos = await post(ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: ['facebook'], content_type: 'photo', media: [{ url: `${media.url}/photo.jpg` }, { url: `${media.url}/photo.jpg` }] });
      expect(photos.status, photos.text).toBe(201);
    });

    it('422 caption_too_long names the platform, its limit and the field path in fields', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads']);
      const res = await post(ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: ['threads'], content_type: 'text', text: 'x'.repeat(501) });
      expectError(res, 422, 'caption_too_long', {
        platform_slug: 'threads',
        limit: 500,
        fields: [{ path: 'text', message: 'has 501 characters; the limit for Threads (threads) is 500. Reduce it, or send thread_split: "auto" to publish it as a thread.' }],
      });
      expect(res.body.message).toContain('500');
      const title = await brandWithConnections(server(), ['youtube']);
      const yt = await post(title.ws.api_key, title.ws.workspace_id, {
        brand_id: title.brandId,
        target_platforms: ['youtube'],
        content_type: 'video',
        title: 't'.repeat(101),
        media: [{ url: `${media.url}/video.mp4` }],
      });
      expectError(yt, 422, 'caption_too_long', { platform_slug: 'youtube', limit: 100, fields: [{ path: 'title', message: 'has 101 characters; the limit for YouTube (youtube) is 100.' }] });
      expect(await countContents(server(), ws.workspace_id)).toBe(0);
    });

    it('422 caption_too_long names thread[i] for a chained post, and overrides.<platform>.text when the text came from an override', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads', 'linkedin']);
      const thread = await post(ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: ['threads'], content_type: 'thread', thread: ['first', 'y'.repeat(501)] });
      expectError(thread, 422, 'caption_too_long', { platform_slug: 'threads', limit: 500, fields: [{ path: 'thread[1]', message: 'has 501 characters; the limit for Threads (threads) is 500.' }] });
      const overridden = await post(ws.api_key, ws.workspace_id, {
        brand_id: brandId,
        target_platforms: ['linkedin', 'threads'],
        content_type: 'text',
        text: 'x'.repeat(600),
        overrides: { threads: { text: 'z'.repeat(502) } },
      });
      expectError(overridden, 422, 'caption_too_long', {
        platform_slug: 'threads',
        limit: 500,
        fields: [{ path: 'overrides.threads.text', message: 'has 502 characters; the limit for Threads (threads) is 500. Reduce it, or send thread_split: "auto" to publish it as a thread.' }],
      });
      // The override alone is measured: the shared text, over the short network's limit, is not what it publishes.
      const fits = await post(ws.api_key, ws.workspace_id, {
        brand_id: brandId,
        target_platforms: ['linkedin', 'threads'],
        content_type: 'text',
        text: 'x'.repeat(600),
        overrides: { threads: { text: 'short' } },
      });
      expect(fits.status).toBe(201);
    });

    it('422 connections_required lists the connections of each ambiguous platform, and target_connections resolves it', async () => {
      const { ws, brandId, connections } = await brandWithConnections(server(), ['linkedin']);
      const second = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands/${brandId}/connections`, {
        key: ws.api_key,
        body: { platform_slug: 'linkedin', mode: 'sandbox', name: 'second page' },
      });
      const body = { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: 'hi' };
      const res = await post(ws.api_key, ws.workspace_id, body);
      expectError(res, 422, 'connections_required', { connections: expect.any(Array) });
      const listed = [...(res.body.connections as { id: string }[])].sort((a, b) => a.id.localeCompare(b.id));
      expect(listed).toEqual(
        [
          { id: connections.linkedin, name: '@acme-linkedin', platform_slug: 'linkedin' },
          { id: second.body.id, name: 'second page', platform_slug: 'linkedin' },
        ].sort((a, b) => String(a.id).localeCompare(String(b.id))),
      );
      const chosen = await post(ws.api_key, ws.workspace_id, { ...body, target_connections: [second.body.id] });
      expect(chosen.status).toBe(201);
      expect((chosen.body.jobs as { connection_id: string }[])[0]?.connection_id).toBe(second.body.id);
    });

    it('422 media_too_large for a known size over the platform limit', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['instagram', 'facebook']);
      const body = { brand_id: brandId, content_type: 'photo', media: [{ url: `${media.url}/big-photo.jpg` }] };
      const res = await post(ws.api_key, ws.workspace_id, { ...body, target_platforms: ['facebook', 'instagram'] });
      expectError(res, 422, 'media_too_large', { platform_slug: 'instagram', limit: 8 * 1024 * 1024, fields: [{ path: 'media[0].url', message: expect.stringMatching(/^is 9437184 bytes; /) }] });
      // 9 MB fits the photo-and-page network's 30 MB.
      expect((await post(ws.api_key, ws.workspace_id, { ...body, target_platforms: ['facebook'] })).status).toBe(201);
    });

    it('400 validation_failed names the field path', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['linkedin']);
      const res = await post(ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: ['myspace'], content_type: 'text', text: 'hi' });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('validation_failed');
      expect(res.body.message).toMatch(/^target_platforms\[0\] must be one of /);
      const empty = await post(ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: [], content_type: 'text' });
      expect(empty.body.message).toMatch(/target_platforms/);
      const live = await post(ws.api_key, ws.workspace_id, {
        brand_id: brandId,
        target_platforms: ['linkedin'],
        content_type: 'text',
        text: 'hi',
        sandbox_outcomes: { threads: 'published' },
      });
      expect(live.body.message).toMatch(/^sandbox_outcomes\.threads: /);
    });

    it('404 not_found for a brand of another workspace', async () => {
      const mine = await brandWithConnections(server(), ['linkedin']);
      const theirs = await brandWithConnections(server(), ['linkedin']);
      const res = await post(mine.ws.api_key, mine.ws.workspace_id, { brand_id: theirs.brandId, target_platforms: ['linkedin'], content_type: 'text', text: 'hi' });
      expectError(res, 404, 'not_found');
      const read = await server().request('GET', `/api/v1/workspaces/${mine.ws.workspace_id}/brands/${theirs.brandId}`, { key: mine.ws.api_key });
      expectError(read, 404, 'not_found');
    });

    it('403 limit_reached on a stock meter (brands) with resolve desativar_outra; deleting frees the slot', async () => {
      const ws = await server().workspace();
      await server().container.services.workspaces.setPlan(ws.workspace_id, 'tiny');
      const first = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name: 'one' } });
      expect(first.status).toBe(201);
      const second = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name: 'two' } });
      expectError(second, 403, 'limit_reached', { meter: 'brands', limit: 1, used: 1, resolve: 'desativar_outra' });
      await server().request('DELETE', `/api/v1/workspaces/${ws.workspace_id}/brands/${first.body.id as string}`, { key: ws.api_key });
      expect((await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name: 'two' } })).status).toBe(201);
    });

    it('403 limit_reached on a per-cycle meter (publicacoes) with resolve upgrade; the cycle rollover resets it', async () => {
      const ws = await server().workspace();
      await server().container.services.workspaces.setPlan(ws.workspace_id, 'tiny');
      const { brandId } = await brandWithConnections(server(), ['threads', 'linkedin'], ws);
      const two = { brand_id: brandId, target_platforms: ['threads', 'linkedin'], content_type: 'text', text: 'hi' };
      expect((await post(ws.api_key, ws.workspace_id, two)).status).toBe(201);
      const over = await post(ws.api_key, ws.workspace_id, two);
      expectError(over, 403, 'limit_reached', { meter: 'publicacoes', limit: 3, used: 2, resolve: 'upgrade' });
      expect(await countContents(server(), ws.workspace_id)).toBe(1);

      const usage = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/usage`, { key: ws.api_key });
      const meters = usage.body.meters as { meter: string; used: number; limit: number; cycle_end: string | null }[];
      expect(meters.find((m) => m.meter === 'publicacoes')).toMatchObject({ used: 2, limit: 3 });
      expect(meters.find((m) => m.meter === 'criacao_de_conteudos')).toMatchObject({ used: 1, limit: 2 });
      expect(meters.find((m) => m.meter === 'brands')).toMatchObject({ used: 1, cycle_end: null });

      const clock = server().container.clock as ManualClock;
      const saved = clock.now();
      clock.set(Date.parse(usage.body.cycle_end as string));
      try {
        expect((await post(ws.api_key, ws.workspace_id, two)).status).toBe(201);
      } finally {
        clock.set(saved);
      }
    });

    it('two racing requests cannot both take the last slot', async () => {
      const ws = await server().workspace();
      await server().container.services.workspaces.setPlan(ws.workspace_id, 'tiny');
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name: `b${i}` } })),
      );
      expect(results.filter((r) => r.status === 201)).toHaveLength(1);
      expect(results.filter((r) => r.status === 403)).toHaveLength(5);
    });

    it('Idempotency-Key: 50 concurrent identical requests create one content; a different body gets 409', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['linkedin']);
      const body = { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: 'once' };
      const results = await Promise.all(Array.from({ length: 50 }, () => post(ws.api_key, ws.workspace_id, body, { 'idempotency-key': 'launch-1' })));
      expect(results.map((r) => r.status)).toEqual(Array(50).fill(201));
      expect(new Set(results.map((r) => r.body.content_id)).size).toBe(1);
      expect(results.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(49);
      expect(await countContents(server(), ws.workspace_id)).toBe(1);

      const conflict = await post(ws.api_key, ws.workspace_id, { ...body, text: 'twice' }, { 'idempotency-key': 'launch-1' });
      expectError(conflict, 409, 'idempotency_conflict');
      const sameKeyOtherWorkspace = await brandWithConnections(server(), ['linkedin']);
      const other = await post(
        sameKeyOtherWorkspace.ws.api_key,
        sameKeyOtherWorkspace.ws.workspace_id,
        { ...body, brand_id: sameKeyOtherWorkspace.brandId },
        { 'idempotency-key': 'launch-1' },
      );
      expect(other.status).toBe(201);
    });

    it('Idempotency-Key: a rejected request is replayed with the same error', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads']);
      const body = { brand_id: brandId, target_platforms: ['threads'], content_type: 'text', text: 'x'.repeat(600) };
      const first = await post(ws.api_key, ws.workspace_id, body, { 'idempotency-key': 'long-1' });
      const again = await post(ws.api_key, ws.workspace_id, body, { 'idempotency-key': 'long-1' });
      expect(first.status).toBe(422);
      expect(again.status).toBe(422);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect({ ...again.body, request_id: null }).toEqual({ ...first.body, request_id: null });
    });

    it('dry_run previews jobs, the thread split and meter use without creating or charging anything', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads', 'linkedin']);
      const sentence = 'This sentence is part of a long announcement. ';
      const res = await post(
        ws.api_key,
        ws.workspace_id,
        { brand_id: brandId, target_platforms: ['threads', 'linkedin'], content_type: 'text', text: sentence.repeat(30).trim(), thread_split: 'auto', thread_numbering: true },
        {},
        '?dry_run=true',
      );
      expect(res.status).toBe(200);
      expect(res.body.dry_run).toBe(true);
      const jobs = res.body.jobs as { platform_slug: string; thread: string[] | null; text: string }[];
      const thread = jobs.find((j) => j.platform_slug === 'threads')!.thread!;
      expect(thread.length).toBeGreaterThan(2);
      for (const [i, p] of thread.entries()) {
        expect(Array.from(p).length).toBeLessThanOrEqual(500);
        expect(p.endsWith(` ${i + 1}/${thread.length}`)).toBe(true);
        expect(p.replace(/ \d+\/\d+$/, '').endsWith('.')).toBe(true);
      }
      expect(jobs.find((j) => j.platform_slug === 'linkedin')!.thread).toBeNull();
      expect(res.body.meters).toEqual([
        { meter: 'criacao_de_conteudos', used: 0, consumes: 1, limit: expect.any(Number) },
        { meter: 'publicacoes', used: 0, consumes: 2, limit: expect.any(Number) },
      ]);
      expect(await countContents(server(), ws.workspace_id)).toBe(0);
      const usage = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/usage`, { key: ws.api_key });
      expect((usage.body.meters as { meter: string; used: number }[]).find((m) => m.meter === 'publicacoes')?.used).toBe(0);
    });

    it('thread_split auto publishes a long text as a chain on the short-post network', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads']);
      const words = Array.from({ length: 300 }, (_, i) => `word${i}`).join(' ');
      const res = await post(ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: ['threads'], content_type: 'text', text: words, thread_split: 'auto' });
      expect(res.status).toBe(201);
      await server().settle();
      const content = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/contents/${res.body.content_id as string}`, { key: ws.api_key });
      const thread = content.body.thread as string[];
      expect(thread.join(' ')).toBe(words);
      expect(content.body.status).toBe('published');
    });

    it('retry re-queues retryable failures only (force adds confirmation failures), counted on publicacoes', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads', 'linkedin', 'facebook']);
      const created = await post(ws.api_key, ws.workspace_id, {
        brand_id: brandId,
        target_platforms: ['threads', 'linkedin', 'facebook'],
        content_type: 'text',
        text: 'hi',
        sandbox_outcomes: { threads: 'quota_exceeded', linkedin: 'post_inexistente' },
      });
      const id = created.body.content_id as string;
      await server().settle();
      const retried = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents/${id}/retry`, { key: ws.api_key, body: {} });
      expect(retried.status).toBe(200);
      expect((retried.body.requeued as { platform_slug: string }[]).map((j) => j.platform_slug)).toEqual(['threads']);
      expect(retried.body.status).toBe('publishing');
      const forced = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents/${id}/retry`, { key: ws.api_key, body: { force: true } });
      expect((forced.body.requeued as { platform_slug: string }[]).map((j) => j.platform_slug)).toEqual(['linkedin']);
      const usage = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/usage`, { key: ws.api_key });
      expect((usage.body.meters as { meter: string; used: number }[]).find((m) => m.meter === 'publicacoes')?.used).toBe(5);
    });

    it('lists contents newest first with a cursor and a status filter', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['linkedin']);
      const clock = server().container.clock as ManualClock;
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        clock.advance(1000);
        const r = await post(ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: `n${i}` });
        ids.push(r.body.content_id as string);
      }
      const first = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/contents?limit=2`, { key: ws.api_key });
      expect((first.body.data as { content_id: string }[]).map((c) => c.content_id)).toEqual([ids[4], ids[3]]);
      const second = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/contents?limit=2&cursor=${first.body.next_cursor as string}`, { key: ws.api_key });
      expect((second.body.data as { content_id: string }[]).map((c) => c.content_id)).toEqual([ids[2], ids[1]]);
      const filtered = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/contents?status=published`, { key: ws.api_key });
      expect(filtered.body.data).toEqual([]);
      const bad = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/contents?limit=0`, { key: ws.api_key });
      expect(bad.status).toBe(400);
    });

    it('lists platforms with their kinds, content types and limits', async () => {
      const res = await server().request('GET', '/api/v1/platforms');
      expect(res.status).toBe(200);
      const list = res.body.data as { slug: string; kind: string; content_types: string[]; limits: Record<string, number | null> }[];
      expect(list.map((p) => p.slug)).toEqual(['instagram', 'facebook', 'threads', 'youtube', 'linkedin', 'x', 'bluesky', 'mastodon', 'tiktok', 'pinterest']);
      expect(list.find((p) => p.slug === 'bluesky')).toMatchObject({ text_counting: 'graphemes', connect: 'app_password', limits: { text_max_chars: 300 } });
      expect(list.find((p) => p.slug === 'x')).toMatchObject({ text_counting: 'x_weighted', connect: 'oauth', limits: { text_max_chars: 280 } });
      expect(list.find((p) => p.slug === 'mastodon')).toMatchObject({ connect: 'instance_oauth' });
      expect(list.find((p) => p.slug === 'threads')).toMatchObject({ kind: 'short-post', limits: { text_max_chars: 500, thread_max_posts: 25 } });
      expect(list.find((p) => p.slug === 'instagram')?.content_types).not.toContain('text');
      expect(list.find((p) => p.slug === 'youtube')?.content_types).not.toContain('text');
    });
  },
  { ALLOW_LOCAL_URLS: 'true', PLANS_JSON: JSON.stringify({ tiny: TINY_PLAN }) },
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);
