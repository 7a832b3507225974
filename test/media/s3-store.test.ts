import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { startFakeFacebook, type FakeFacebook } from '../fakes/facebook.js';
import { startFakeThreads, threadsEnv, type FakeThreads } from '../fakes/threads.js';
import { startServiceProcess } from '../support/process.js';
import { startLocalS3, type LocalS3 } from '../support/s3.js';
import { describeEachDb, TEST_SECRET_KEY, type TestServer } from '../support/server.js';
import { addServiceEnv, overrides, serviceEnv } from '../support/overrides.js';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082', 'hex');
/** media_storage of 10 MB: a 12 MB upload passes the first multipart part (8 MiB) before it is too large. */
const PLANS = { s3_test: { brands: 5, connections: 10, media_storage: 10_000_000, webhooks: 1, inspiration_library: 1, criacao_de_conteudos: 100, publicacoes: 100 } };

let s3: LocalS3;
let threads: FakeThreads;
let facebook: FakeFacebook;
const env: Record<string, string> = { PLANS_JSON: JSON.stringify(PLANS) };
beforeAll(async () => {
  [s3, threads, facebook] = await Promise.all([startLocalS3(), startFakeThreads(), startFakeFacebook()]);
  addServiceEnv(
    env,
    s3.env,
    threadsEnv(threads),
    { FACEBOOK_CLIENT_ID: facebook.settings.clientId!, FACEBOOK_CLIENT_SECRET: facebook.settings.clientSecret! },
    overrides({ FACEBOOK_API_URL: facebook.settings.apiBaseUrl, FACEBOOK_AUTHORIZE_URL: facebook.settings.authorizeUrl, FACEBOOK_TOKEN_URL: facebook.settings.tokenUrl }),
  );
});
afterAll(async () => {
  await Promise.all([s3?.close(), threads?.close(), facebook?.close()]);
});

async function upload(server: TestServer, key: string, wsId: string, body: Buffer = PNG, type = 'image/png'): Promise<Response> {
  // Its own connection: one the service stops reading (too large) is not reused for the next request.
  const dispatcher = new Agent({ pipelining: 0 });
  try {
    const res = await undiciFetch(`${server.url}/api/v1/workspaces/${wsId}/media`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': type }, body, dispatcher });
    return new Response(await res.arrayBuffer(), { status: res.status, headers: Object.fromEntries(res.headers) });
  } finally {
    await dispatcher.close();
  }
}

/** Live Threads and Facebook connections of a new brand, through each fake's OAuth. */
async function liveBrand(server: TestServer, ws: { workspace_id: string; api_key: string }): Promise<string> {
  const brand = await server.request<{ id: string }>('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name: 'Live' } });
  for (const platform of ['threads', 'facebook'] as const) {
    const started = await server.request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands/${brand.body.id}/connections/oauth`, { key: ws.api_key, body: { platform_slug: platform } });
    const authorize = new URL(started.body.authorization_url as string);
    const redirect = authorize.searchParams.get('redirect_uri')!;
    const code =
      platform === 'threads'
        ? threads.issueCode(redirect)
        : new URL((await fetch(authorize, { redirect: 'manual' })).headers.get('location')!).searchParams.get('code')!;
    const connected = await server.request('GET', `/api/v1/oauth/networks/${platform}/callback?code=${encodeURIComponent(code)}&state=${encodeURIComponent(started.body.state as string)}`);
    expect(connected.status, connected.text).toBe(200);
  }
  return brand.body.id;
}

/** The files a host keeps under its MEDIA_DIR (temporary downloads included). */
function filesUnder(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => !f.endsWith('.downloads') && f !== '.downloads') : [];
}

describeEachDb(
  'media in an S3-compatible bucket (MEDIA_STORE=s3)',
  (server) => {
    it('upload → list → publish a photo on Threads (from its signed bucket address) and Facebook (bytes the worker reads from the bucket) → delete removes the object', async () => {
      const clock = server().container.clock as ManualClock;
      clock.set(Date.now());
      const ws = await server().workspace();
      const brandId = await liveBrand(server(), ws);
      const up = await upload(server(), ws.api_key, ws.workspace_id);
      expect(up.status).toBe(201);
      const id = ((await up.json()) as { id: string }).id;
      expect(s3.keys()).toContain(`media/${id}`);
      // Nothing of the upload is on this host's disk.
      expect(filesUnder(server().container.config.mediaDir)).toEqual([]);

      const list = await server().request<{ data: { id: string; url: string }[] }>('GET', `/api/v1/workspaces/${ws.workspace_id}/media`, { key: ws.api_key });
      const listed = list.body.data.find((m) => m.id === id)!;
      expect(listed.url.startsWith(`${s3.endpoint}/${s3.bucket}/media/${id}?`)).toBe(true);
      const thumb = await fetch(listed.url);
      expect(thumb.status).toBe(200);
      expect(thumb.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await thumb.arrayBuffer())).toEqual(PNG);

      const created = await server().request<{ content_id: string }>('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
        key: ws.api_key,
        body: { brand_id: brandId, target_platforms: ['threads', 'facebook'], content_type: 'photo', text: 'From the bucket', media: [{ media_id: id }] },
      });
      expect(created.status, created.text).toBe(201);
      await server().settle();
      const content = await server().request<{ status: string }>('GET', `/api/v1/workspaces/${ws.workspace_id}/contents/${created.body.content_id}`, { key: ws.api_key });
      expect(content.body.status).toBe('published');

      const sent = threads.containers.get(threads.posts.at(-1)!.containerId)!.mediaUrl!;
      expect(sent.startsWith(`${s3.endpoint}/${s3.bucket}/media/${id}?`)).toBe(true);
      expect(Buffer.from(await (await fetch(sent)).arrayBuffer())).toEqual(PNG);
      const photo = facebook.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/photos')).at(-1)!;
      expect(photo.params.source).toMatch(new RegExp(`^<file ${PNG.length} bytes `));

      const removed = await server().request('DELETE', `/api/v1/workspaces/${ws.workspace_id}/media/${id}`, { key: ws.api_key });
      expect(removed.status).toBe(204);
      expect(s3.keys()).not.toContain(`media/${id}`);
      expect((await fetch(sent)).status).toBe(404);
    });

    it('an upload past what is left of media_storage keeps nothing in the bucket, also once it passed a multipart part', async () => {
      const ws = await server().workspace();
      await server().container.services.workspaces.setPlan(ws.workspace_id, 's3_test');
      const before = s3.keys();
      const big = await upload(server(), ws.api_key, ws.workspace_id, randomBytes(12_000_000), 'video/mp4');
      expect(big.status).toBe(403);
      expect(await big.json()).toMatchObject({ error: 'limit_reached', meter: 'media_storage', limit: 10_000_000, used: 0 });
      const small = await upload(server(), ws.api_key, ws.workspace_id, Buffer.concat([PNG, randomBytes(2_000)]), 'image/png');
      expect(small.status).toBe(201);
      const smallId = ((await small.json()) as { id: string }).id;
      expect(s3.keys()).toEqual([...before, `media/${smallId}`].sort());
      const rows = await server().container.db.kysely.selectFrom('media').select('id').where('workspace_id', '=', ws.workspace_id).execute();
      expect(rows.map((r) => r.id)).toEqual([smallId]);
    });

    it('parallel uploads racing for the last of media_storage: the bucket keeps exactly the objects of the recorded uploads', async () => {
      const ws = await server().workspace();
      await server().container.services.workspaces.setPlan(ws.workspace_id, 's3_test');
      const before = new Set(s3.keys());
      // Eight 3 MB files for 10 MB: each fits alone (the store's cap is what is left when it starts), so the
      // meter refuses the late ones at record time, after they were stored, and their objects must go again.
      const answers = await Promise.all(Array.from({ length: 8 }, () => upload(server(), ws.api_key, ws.workspace_id, Buffer.concat([PNG, randomBytes(3_000_000)]), 'image/png')));
      const statuses = answers.map((a) => a.status);
      expect(statuses.filter((s) => s === 201).length).toBeLessThanOrEqual(3);
      expect(statuses.filter((s) => s === 201).length).toBeGreaterThan(0);
      expect(statuses.every((s) => s === 201 || s === 403)).toBe(true);
      const rows = await server().container.db.kysely.selectFrom('media').select('id').where('workspace_id', '=', ws.workspace_id).execute();
      const added = s3.keys().filter((k) => !before.has(k));
      expect(added).toEqual(rows.map((r) => `media/${r.id}`).sort());
    });

    it('a signed bucket address works until it expires; a changed one, and the service’s own /media route, are refused', async () => {
      const clock = server().container.clock as ManualClock;
      clock.set(Date.now());
      const ws = await server().workspace();
      const id = ((await (await upload(server(), ws.api_key, ws.workspace_id)).json()) as { id: string }).id;
      const link = server().container.services.media.publicLink(id);
      const url = new URL(link);
      expect(url.searchParams.get('X-Amz-Expires')).toBe('3600');
      const get = async (u: string) => {
        const res = await fetch(u);
        return { status: res.status, text: await res.text() };
      };
      expect(await get(link)).toEqual({ status: 200, text: PNG.toString() });
      expect((await get(link.replace(/X-Amz-Signature=[0-9a-f]{4}/, 'X-Amz-Signature=0000'))).status).toBe(403);
      expect((await get(link.replace(`media/${id}`, 'media/media_other'))).status).toBe(403);

      // Signed an hour and a second ago: past its 3,600 s.
      clock.set(Date.now() - 3_601_000);
      const expired = server().container.services.media.publicLink(id);
      clock.set(Date.now());
      const refused = await get(expired);
      expect(refused.status).toBe(403);
      expect(refused.text).toContain('Request has expired');

      const own = await server().request('GET', `/media/${id}?exp=9999999999&sig=x`, { unchecked: true });
      expect(own.status).toBe(404);
    });

    it('a second host (its own MEDIA_DIR, same database, same bucket) publishes a file uploaded through the first', async () => {
      const clock = server().container.clock as ManualClock;
      clock.set(Date.now());
      const ws = await server().workspace();
      const brandId = await liveBrand(server(), ws);
      const big = Buffer.concat([PNG, randomBytes(9 * 1024 * 1024)]);
      const up = await upload(server(), ws.api_key, ws.workspace_id, big, 'image/png');
      expect(up.status).toBe(201);
      const id = ((await up.json()) as { id: string }).id;
      const created = await server().request<{ content_id: string }>('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
        key: ws.api_key,
        body: { brand_id: brandId, target_platforms: ['facebook'], content_type: 'photo', text: 'Another host', media: [{ media_id: id }] },
      });
      expect(created.status).toBe(201);

      // This process runs no workers: only the second host can publish.
      const otherDir = mkdtempSync(join(tmpdir(), 'publisher-media-host2-'));
      const second = await startServiceProcess({
        ...env,
        DATABASE_URL: server().database.url,
        SECRET_KEY: TEST_SECRET_KEY,
        MEDIA_DIR: otherDir,
        SERVICE_ROLE: 'worker',
        ...serviceEnv(env, overrides({ SANDBOX_DELAY: '0ms', WORKER_POLL: '50ms', CONFIRM_INTERVAL: '100ms' })),
      });
      try {
        const deadline = Date.now() + 60_000;
        let status = '';
        while (Date.now() < deadline) {
          const content = await server().request<{ status: string }>('GET', `/api/v1/workspaces/${ws.workspace_id}/contents/${created.body.content_id}`, { key: ws.api_key });
          status = content.body.status;
          if (status !== 'publishing') break;
          await new Promise((r) => setTimeout(r, 100));
        }
        expect(status, second.stderr()).toBe('published');
        const photo = facebook.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/photos')).at(-1)!;
        expect(photo.params.source).toMatch(new RegExp(`^<file ${big.length} bytes `));
      } finally {
        expect(await second.stop()).toBe(0);
        rmSync(otherDir, { recursive: true, force: true });
      }
    });
  },
  env,
  () => ({ clock: new ManualClock(Date.now()), workers: false }),
);
