import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { startYoutubeFake, type YoutubeFake } from '../fakes/youtube.js';
import { startMediaHost } from '../support/factories.js';
import { describeEachDb, type TestServer } from '../support/server.js';
import { addServiceEnv, overrides } from '../support/overrides.js';

/**
 * Per-network rules on live connections, through REST: a connection made with the network's OAuth (its fake), a
 * content published by the real adapter, and what the job then says, read back as an integrator reads it.
 */
let youtube: YoutubeFake;
let mediaHost: Awaited<ReturnType<typeof startMediaHost>>;
const env: Record<string, string> = { ALLOW_LOCAL_URLS: 'true' };

beforeAll(async () => {
  [youtube, mediaHost] = await Promise.all([startYoutubeFake(), startMediaHost()]);
  const s = youtube.settings;
  addServiceEnv(
    env,
    { YOUTUBE_CLIENT_ID: s.clientId!, YOUTUBE_CLIENT_SECRET: s.clientSecret! },
    overrides({ YOUTUBE_API_URL: s.apiBaseUrl, YOUTUBE_AUTHORIZE_URL: s.authorizeUrl, YOUTUBE_TOKEN_URL: s.tokenUrl }),
  );
});
afterAll(async () => {
  await Promise.all([youtube.close(), mediaHost.close()]);
});

/** Follows an authorization URL as a browser would after the user approves: to our callback, for JSON. */
async function approve(server: TestServer, authorizationUrl: string) {
  const consent = await fetch(authorizationUrl, { redirect: 'manual' });
  expect(consent.status, await consent.clone().text()).toBe(302);
  const back = new URL(consent.headers.get('location')!);
  const done = await server.request('GET', back.pathname + back.search);
  expect(done.status, JSON.stringify(done.body)).toBe(200);
  return done.body;
}

type JobView = { status: string; external_post_url: string | null; notice: string | null; error_code: string | null };

describeEachDb(
  'per-network rules on live connections',
  (server) => {
    async function liveBrand(platform: string) {
      const ws = await server().workspace();
      const b = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name: 'Live' } });
      const started = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands/${b.body.id as string}/connections/oauth`, { key: ws.api_key, body: { platform_slug: platform } });
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      const connected = await approve(server(), started.body.authorization_url as string);
      expect(connected).toMatchObject({ platform_slug: platform, mode: 'live', status: 'active' });
      return { ws, brandId: b.body.id as string };
    }

    async function publish(ws: { api_key: string; workspace_id: string }, body: Record<string, unknown>) {
      const created = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, { key: ws.api_key, body });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      await server().settle();
      const content = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/contents/${created.body.content_id as string}`, { key: ws.api_key });
      return content.body as { status: string; jobs: JobView[] };
    }

    it('YouTube: a video the API project may only upload as private is published with a notice saying so, not as a public post', async () => {
      const { ws, brandId } = await liveBrand('youtube');
      const video = { brand_id: brandId, target_platforms: ['youtube'], content_type: 'video', title: 'Spring menu', text: 'Three new dishes', media: [{ url: `${mediaHost.url}/video.mp4` }] };

      youtube.unauditedProject = true;
      try {
        const locked = await publish(ws, video);
        expect(youtube.posts.at(-1)).toMatchObject({ title: 'Spring menu', privacyStatus: 'private' });
        expect(locked.status).toBe('published');
        expect(locked.jobs[0]).toMatchObject({ status: 'published', error_code: null, external_post_url: expect.stringContaining(youtube.posts.at(-1)!.id) });
        expect(locked.jobs[0]?.notice).toMatch(/^YouTube keeps this video private: only the channel can see it\. .*not audited/);
      } finally {
        youtube.unauditedProject = false;
      }

      const open = await publish(ws, { ...video, title: 'Summer menu' });
      expect(youtube.posts.at(-1)).toMatchObject({ title: 'Summer menu', privacyStatus: 'public' });
      expect(open.jobs[0]).toMatchObject({ status: 'published', notice: null });
    });
  },
  env,
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);
