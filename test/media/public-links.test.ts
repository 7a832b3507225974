import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { startFakeThreads, threadsEnv, type FakeThreads } from '../fakes/threads.js';
import { describeEachDb, type TestServer } from '../support/server.js';
import { addServiceEnv } from '../support/overrides.js';

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

let fake: FakeThreads;
const env: Record<string, string> = {};
beforeAll(async () => {
  fake = await startFakeThreads();
  addServiceEnv(env, threadsEnv(fake));
});
afterAll(() => fake.close());

async function upload(server: TestServer, key: string, wsId: string): Promise<string> {
  const res = await fetch(`${server.url}/api/v1/workspaces/${wsId}/media`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'image/png' }, body: PNG });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

describeEachDb(
  'signed public addresses of uploads',
  (server) => {
    it('serves the upload at its signed address until it expires; a changed or foreign signature is refused alike', async () => {
      const ws = await server().workspace();
      const id = await upload(server(), ws.api_key, ws.workspace_id);
      const other = await upload(server(), ws.api_key, ws.workspace_id);
      const link = server().container.services.media.publicLink(id);
      expect(link.startsWith(`${server().service.baseUrl}/media/${id}?exp=`)).toBe(true);

      const ok = await fetch(link);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await ok.arrayBuffer())).toEqual(PNG);

      const url = new URL(link);
      const refused = async (u: string) => {
        const res = await fetch(u);
        expect(res.status).toBe(404);
        expect(await res.json()).toMatchObject({ error: 'not_found', request_id: expect.any(String) });
      };
      await refused(link.replace(/sig=.{4}/, 'sig=AAAA'));
      await refused(`${url.origin}/media/${other}${url.search}`);
      await refused(`${url.origin}/media/${id}`);
      await refused(`${url.origin}/media/media_unknown${url.search}`);
      (server().container.clock as ManualClock).advance(24 * 3_600_000 + 1_000);
      await refused(link);
    });

    it('a photo uploaded to the service is published on Threads, which downloads it from its signed address', async () => {
      const ws = await server().workspace();
      const brand = await server().request<{ id: string }>('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name: 'Live' } });
      const started = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands/${brand.body.id}/connections/oauth`, { key: ws.api_key, body: { platform_slug: 'threads' } });
      const redirect = new URL(started.body.authorization_url as string).searchParams.get('redirect_uri')!;
      const connected = await server().request('GET', `/api/v1/oauth/networks/threads/callback?code=${encodeURIComponent(fake.issueCode(redirect))}&state=${encodeURIComponent(started.body.state as string)}`);
      expect(connected.status).toBe(200);

      const id = await upload(server(), ws.api_key, ws.workspace_id);
      const created = await server().request<{ content_id: string }>('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
        key: ws.api_key,
        body: { brand_id: brand.body.id, target_platforms: ['threads'], content_type: 'photo', text: 'Our own photo', media: [{ media_id: id }] },
      });
      expect(created.status).toBe(201);
      await server().settle();
      const content = await server().request<{ status: string }>('GET', `/api/v1/workspaces/${ws.workspace_id}/contents/${created.body.content_id}`, { key: ws.api_key });
      expect(content.body.status).toBe('published');
      const sent = fake.containers.get(fake.posts.at(-1)!.containerId)!.mediaUrl!;
      expect(sent.startsWith(`${server().service.baseUrl}/media/${id}?`)).toBe(true);
      // What Threads would download is the file itself.
      expect(Buffer.from(await (await fetch(sent)).arrayBuffer())).toEqual(PNG);
    });
  },
  env,
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);
