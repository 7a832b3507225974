import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { blueskyEnv, startFakeBluesky } from '../fakes/bluesky.js';
import { startFakeX, xEnv, type FakeX } from '../fakes/x.js';
import { describeEachDb, type TestServer } from '../support/server.js';
import { addServiceEnv } from '../support/overrides.js';

/**
 * An upload's media type, from the upload through the stored request to what the network is told: uploads are
 * stored without a name or extension, so the type kept with the upload is the only source an adapter has.
 * Through REST, the workers and the real adapters on live connections, against the networks' fakes.
 */
let bluesky: Awaited<ReturnType<typeof startFakeBluesky>>;
let x: FakeX;
const env: Record<string, string> = { ALLOW_LOCAL_URLS: 'true' };

beforeAll(async () => {
  [bluesky, x] = await Promise.all([startFakeBluesky(), startFakeX()]);
  addServiceEnv(env, blueskyEnv(bluesky), xEnv(x));
});
afterAll(async () => {
  // Every body the adapter sent to X held to X's OpenAPI (the fake would have refused it otherwise).
  expect(x.schemaViolations).toEqual([]);
  await Promise.all([bluesky.close(), x.close()]);
});

/** Small files that start as their type does (the networks look at the bytes too). */
const FILES = {
  'image/png': Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(200, 1)]),
  'image/gif': Buffer.concat([Buffer.from('GIF89a', 'latin1'), Buffer.alloc(200, 2)]),
  'video/quicktime': Buffer.concat([Buffer.from([0, 0, 0, 0x14]), Buffer.from('ftypqt  ', 'latin1'), Buffer.alloc(500, 3)]),
} as const;
type FileType = keyof typeof FILES;

/** A workspace and brand with a live Bluesky (app password) and a live X (OAuth) connection. */
async function liveBrand(server: TestServer) {
  const ws = await server.workspace();
  const b = await server.request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name: 'Media' } });
  const brandId = b.body.id as string;
  const base = `/api/v1/workspaces/${ws.workspace_id}/brands/${brandId}`;
  const sky = await server.request('POST', `${base}/connections/app-password`, {
    key: ws.api_key,
    body: { platform_slug: 'bluesky', identifier: bluesky.account.handle, app_password: bluesky.account.appPassword },
  });
  expect(sky.status, JSON.stringify(sky.body)).toBe(201);
  const started = await server.request('POST', `${base}/connections/oauth`, { key: ws.api_key, body: { platform_slug: 'x' } });
  const consent = await fetch(started.body.authorization_url as string, { redirect: 'manual' });
  const back = new URL(consent.headers.get('location')!);
  expect((await server.request('GET', back.pathname + back.search)).status).toBe(200);
  return { ws, brandId, blueskyConnection: sky.body.id as string };
}

async function upload(server: TestServer, ws: { workspace_id: string; api_key: string }, type: FileType): Promise<string> {
  const res = await fetch(`${server.url}/api/v1/workspaces/${ws.workspace_id}/media`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ws.api_key}`, 'content-type': type },
    body: FILES[type],
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

let n = 0;
/** Creates a content (not yet published: the workers run on `settle`). */
async function create(server: TestServer, ws: { workspace_id: string; api_key: string }, body: Record<string, unknown>): Promise<string> {
  const created = await server.request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, { key: ws.api_key, body: { text: `Media post ${++n} ${ws.workspace_id}`, ...body } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.content_id as string;
}

async function jobsOf(server: TestServer, ws: { workspace_id: string; api_key: string }, contentId: string) {
  const content = await server.request('GET', `/api/v1/workspaces/${ws.workspace_id}/contents/${contentId}`, { key: ws.api_key });
  return (content.body.jobs as { platform_slug: string; status: string; error_message: string | null }[]).map((j) => [j.platform_slug, j.status, j.error_message]);
}

describeEachDb(
  'uploaded media through the live adapters',
  (server) => {
    it('X is told the upload\'s real type: video/quicktime for a MOV, image/png for a PNG, image/gif (in segments) for a GIF', async () => {
      const { ws, brandId } = await liveBrand(server());
      const mov = await create(server(), ws, { brand_id: brandId, target_platforms: ['x'], content_type: 'video', media: [{ media_id: await upload(server(), ws, 'video/quicktime') }] });
      const before = x.media.size;
      await server().settle();
      expect(await jobsOf(server(), ws, mov)).toEqual([['x', 'published', null]]);
      expect([...x.media.values()].slice(before).map((m) => [m.kind, m.mediaType, m.totalBytes])).toEqual([['video', 'video/quicktime', FILES['video/quicktime'].length]]);

      const png = await create(server(), ws, { brand_id: brandId, target_platforms: ['x'], content_type: 'photo', media: [{ media_id: await upload(server(), ws, 'image/png') }] });
      const next = x.media.size;
      await server().settle();
      expect(await jobsOf(server(), ws, png)).toEqual([['x', 'published', null]]);
      expect([...x.media.values()].slice(next).map((m) => [m.kind, m.mediaType])).toEqual([['image', 'image/png']]);

      // A GIF goes in segments as tweet_gif: X's one-shot upload takes no GIF.
      const gif = await create(server(), ws, { brand_id: brandId, target_platforms: ['x'], content_type: 'photo', media: [{ media_id: await upload(server(), ws, 'image/gif') }] });
      const last = x.media.size;
      await server().settle();
      expect(await jobsOf(server(), ws, gif)).toEqual([['x', 'published', null]]);
      expect([...x.media.values()].slice(last).map((m) => [m.kind, m.mediaType, m.finalized])).toEqual([['gif', 'image/gif', true]]);
    });

    it('a Bluesky blob is sent with the upload\'s type and lands as an image of that type', async () => {
      const { ws, brandId } = await liveBrand(server());
      const id = await create(server(), ws, { brand_id: brandId, target_platforms: ['bluesky'], content_type: 'photo', media: [{ media_id: await upload(server(), ws, 'image/gif') }] });
      const [requests, posts] = [bluesky.requests.length, bluesky.posts.length];
      await server().settle();
      expect(await jobsOf(server(), ws, id)).toEqual([['bluesky', 'published', null]]);
      const blobs = bluesky.requests.slice(requests).filter((r) => r.nsid === 'com.atproto.repo.uploadBlob');
      expect(blobs.map((r) => r.contentType)).toEqual(['image/gif']);
      const embed = bluesky.posts.slice(posts)[0]?.value.embed as { images: { image: { mimeType: string } }[] };
      expect(embed.images.map((i) => i.image.mimeType)).toEqual(['image/gif']);
    });

    it('a token refused by Bluesky\'s video service fails that post and leaves the connection active', async () => {
      const { ws, brandId, blueskyConnection } = await liveBrand(server());
      const id = await create(server(), ws, { brand_id: brandId, target_platforms: ['bluesky'], content_type: 'video', media: [{ media_id: await upload(server(), ws, 'video/quicktime') }] });
      bluesky.failNext('app.bsky.video.getUploadLimits', 400, { error: 'InvalidToken', message: 'Bad token method' }, undefined, 'video');
      await server().settle();
      const content = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/contents/${id}`, { key: ws.api_key });
      expect((content.body.jobs as { status: string; error_code: string }[]).map((j) => [j.status, j.error_code])).toEqual([['failed', 'upstream_unknown']]);
      const conn = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/connections/${blueskyConnection}`, { key: ws.api_key });
      expect(conn.body).toMatchObject({ status: 'active', status_reason: null });
    });

    it('a request stored before media types were kept still publishes, with the type guessed as before', async () => {
      const { ws, brandId } = await liveBrand(server());
      const id = await create(server(), ws, { brand_id: brandId, target_platforms: ['x'], content_type: 'photo', media: [{ media_id: await upload(server(), ws, 'image/png') }] });
      const db = server().container.db.kysely;
      const row = await db.selectFrom('contents').select('request').where('id', '=', id).executeTakeFirstOrThrow();
      const stored = JSON.parse(row.request) as { media: Record<string, unknown>[] };
      expect(stored.media[0]?.contentType).toBe('image/png');
      for (const m of stored.media) delete m.contentType;
      await db.updateTable('contents').set({ request: JSON.stringify(stored) }).where('id', '=', id).execute();
      const before = x.media.size;
      await server().settle();
      expect(await jobsOf(server(), ws, id)).toEqual([['x', 'published', null]]);
      expect([...x.media.values()].slice(before).map((m) => [m.kind, m.mediaType])).toEqual([['image', 'image/jpeg']]);
    });
  },
  env,
  () => ({ clock: new ManualClock(Date.now()), workers: false }),
);
