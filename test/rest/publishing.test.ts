import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { sandboxPostsPerJob } from '../../db/repositories/sandbox.repo.js';
import { PLATFORMS, type PlatformSlug } from '../../src/vocabulary/platforms.js';
import { ALL_PLATFORMS, brandWithConnections, startMediaHost } from '../support/factories.js';
import { describeEachDb, type TestServer } from '../support/server.js';

let media: Awaited<ReturnType<typeof startMediaHost>>;
beforeAll(async () => {
  media = await startMediaHost();
});
afterAll(() => media.close());

type JobView = { job_id: string; platform_slug: string; status: string; error_code: string | null; error_message: string | null; external_post_url: string | null; attempts: number; previous_status: string | null };

async function publish(server: TestServer, key: string, wsId: string, body: Record<string, unknown>) {
  const res = await server.request('POST', `/api/v1/workspaces/${wsId}/contents`, { key, body });
  if (res.status !== 201) throw new Error(`create content: ${res.status} ${res.text}`);
  return res.body.content_id as string;
}

async function read(server: TestServer, key: string, wsId: string, contentId: string) {
  const res = await server.request('GET', `/api/v1/workspaces/${wsId}/contents/${contentId}`, { key });
  expect(res.status).toBe(200);
  return res.body as { status: string; jobs: JobView[]; thread: string[] | null };
}

async function events(server: TestServer, subjectId: string) {
  const rows = await server.container.db.kysely.selectFrom('events').selectAll().where('subject_id', '=', subjectId).orderBy('created_at').execute();
  return rows.map((r) => JSON.parse(r.payload) as Record<string, unknown> & { type: string; data: Record<string, unknown> });
}

describeEachDb(
  'publishing through the sandbox',
  (server) => {
    it('publishes a photo to the five later platforms through their sandboxes, each with a post URL in its network\'s shape', async () => {
      const later = ['x', 'bluesky', 'mastodon', 'tiktok', 'pinterest'] as const;
      const { ws, brandId } = await brandWithConnections(server(), later);
      const contentId = await publish(server(), ws.api_key, ws.workspace_id, {
        brand_id: brandId,
        target_platforms: [...later],
        content_type: 'photo',
        text: 'A photo everywhere.',
        media: [{ url: `${media.url}/photo.jpg` }],
      });
      await server().settle();
      const content = await read(server(), ws.api_key, ws.workspace_id, contentId);
      expect(content.status).toBe('published');
      const urls = Object.fromEntries(content.jobs.map((j) => [j.platform_slug, j.external_post_url]));
      expect(urls.x).toMatch(/^https:\/\/x\.com\/i\/web\/status\//);
      expect(urls.bluesky).toMatch(/^https:\/\/bsky\.app\/profile\/[^/]+\/post\//);
      expect(urls.mastodon).toMatch(/^https:\/\/mastodon\.social\/@/);
      expect(urls.tiktok).toMatch(/^https:\/\/www\.tiktok\.com\/@/);
      expect(urls.pinterest).toMatch(/^https:\/\/www\.pinterest\.com\/pin\//);
      const posts = await sandboxPostsPerJob(server().container.db.kysely);
      for (const job of content.jobs) expect(posts.find((p) => p.jobId === job.job_id)?.posts).toBe(1);
    });

    it('publishes one video to all ten platforms: ten published jobs, each with a post URL on its network, content published, one event', async () => {
      // A video is the one content type every network takes (TikTok and Pinterest take no text-only post); the
      // title is YouTube's requirement and within TikTok's 90 and Pinterest's 100.
      expect(ALL_PLATFORMS.filter((p) => !PLATFORMS[p].contentTypes.includes('video'))).toEqual([]);
      const { ws, brandId } = await brandWithConnections(server());
      const contentId = await publish(server(), ws.api_key, ws.workspace_id, {
        brand_id: brandId,
        target_platforms: [...ALL_PLATFORMS],
        content_type: 'video',
        text: 'Launch day.',
        title: 'Our launch',
        media: [{ url: `${media.url}/video.mp4` }],
      });
      await server().settle();
      const content = await read(server(), ws.api_key, ws.workspace_id, contentId);
      expect(content.status).toBe('published');
      expect(content.jobs.map((j) => j.platform_slug).sort()).toEqual([...ALL_PLATFORMS].sort());
      for (const job of content.jobs) {
        expect(job, job.platform_slug).toMatchObject({ status: 'published', error_code: null });
        expect(job.external_post_url?.startsWith(PLATFORMS[job.platform_slug as PlatformSlug].postUrlBase), `${job.platform_slug}: ${job.external_post_url}`).toBe(true);
      }
      const posts = await sandboxPostsPerJob(server().container.db.kysely);
      for (const job of content.jobs) expect(posts.find((p) => p.jobId === job.job_id)?.posts).toBe(1);
      const evts = await events(server(), contentId);
      expect(evts.map((e) => e.type)).toEqual(['content.published']);
      expect(evts[0]).toMatchObject({ id: expect.stringMatching(/^evt_/), data: { content_id: contentId, workspace_id: ws.workspace_id } });
      expect((evts[0]!.data.jobs as unknown[]).length).toBe(10);
    });

    it('a text post cannot target all ten: TikTok and Pinterest refuse it by name; the six networks that take text publish it', async () => {
      const { ws, brandId } = await brandWithConnections(server());
      const textual = ALL_PLATFORMS.filter((p) => PLATFORMS[p].contentTypes.includes('text'));
      expect(ALL_PLATFORMS.filter((p) => !textual.includes(p))).toEqual(['instagram', 'youtube', 'tiktok', 'pinterest']);
      for (const p of ['tiktok', 'pinterest'] as const) {
        const refused = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
          key: ws.api_key,
          body: { brand_id: brandId, target_platforms: [...textual, p], content_type: 'text', text: 'Words only.' },
        });
        expect([refused.status, refused.body.error, refused.body.platform_slug]).toEqual([422, 'platform_not_supported', p]);
      }
      const contentId = await publish(server(), ws.api_key, ws.workspace_id, { brand_id: brandId, target_platforms: textual, content_type: 'text', text: 'Words only.' });
      await server().settle();
      const content = await read(server(), ws.api_key, ws.workspace_id, contentId);
      expect(content.status).toBe('published');
      expect(content.jobs.map((j) => j.platform_slug).sort()).toEqual([...textual].sort());
    });

    const failures = [
      'token_expired',
      'permission_revoked',
      'media_unsupported_format',
      'media_too_large',
      'quota_exceeded',
      'upstream_5xx',
      'upstream_unknown',
      'confirmacao_esgotada',
      'confirmacao_indisponivel',
      'post_inexistente',
    ] as const;

    it.each(failures)('sandbox outcome %s: the job fails with that code, the content is partial beside a published job', async (code) => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads', 'linkedin']);
      const contentId = await publish(server(), ws.api_key, ws.workspace_id, {
        brand_id: brandId,
        target_platforms: ['threads', 'linkedin'],
        content_type: 'text',
        text: 'Hello',
        sandbox_outcomes: { threads: code },
      });
      await server().settle();
      const content = await read(server(), ws.api_key, ws.workspace_id, contentId);
      const threads = content.jobs.find((j) => j.platform_slug === 'threads')!;
      expect(threads).toMatchObject({ status: 'failed', error_code: code, external_post_url: null });
      expect(threads.error_message).toEqual(expect.any(String));
      expect(content.jobs.find((j) => j.platform_slug === 'linkedin')?.status).toBe('published');
      expect(content.status).toBe('partial');
      expect((await events(server(), contentId)).map((e) => e.type)).toEqual(['content.partial']);
      if (code === 'upstream_5xx') expect(threads.attempts).toBe(4);
    });

    it('a content whose every job fails is failed', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads', 'linkedin']);
      const contentId = await publish(server(), ws.api_key, ws.workspace_id, {
        brand_id: brandId,
        target_platforms: ['threads', 'linkedin'],
        content_type: 'text',
        text: 'Hello',
        sandbox_outcomes: { threads: 'quota_exceeded', linkedin: 'upstream_unknown' },
      });
      await server().settle();
      expect((await read(server(), ws.api_key, ws.workspace_id, contentId)).status).toBe('failed');
      expect((await events(server(), contentId)).map((e) => e.type)).toEqual(['content.failed']);
    });

    it('a transient 5xx is retried automatically and then publishes', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['linkedin']);
      const contentId = await publish(server(), ws.api_key, ws.workspace_id, {
        brand_id: brandId,
        target_platforms: ['linkedin'],
        content_type: 'text',
        text: 'Hello',
        sandbox_outcomes: { linkedin: 'upstream_5xx_then_published' },
      });
      await server().settle();
      const content = await read(server(), ws.api_key, ws.workspace_id, contentId);
      expect(content.status).toBe('published');
      expect(content.jobs[0]).toMatchObject({ status: 'published', attempts: 2 });
    });

    it('token_expired expires the connection once, records connection.expired, and later jobs on it fail fast', async () => {
      const { ws, brandId, connections } = await brandWithConnections(server(), ['instagram']);
      const first = await publish(server(), ws.api_key, ws.workspace_id, {
        brand_id: brandId,
        target_platforms: ['instagram'],
        content_type: 'photo',
        media: [{ url: `${media.url}/photo.jpg` }],
        sandbox_outcomes: { instagram: 'token_expired' },
      });
      await server().settle();
      const conn = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/connections/${connections.instagram}`, { key: ws.api_key });
      expect(conn.body).toMatchObject({ status: 'expired', status_reason: 'token_expired' });
      const expired = await events(server(), connections.instagram!);
      expect(expired.map((e) => e.type)).toEqual(['connection.expired']);
      expect(expired[0]!.data).toEqual({
        workspace_id: ws.workspace_id,
        connection_id: connections.instagram,
        brand_id: brandId,
        platform_slug: 'instagram',
        reason: 'token_expired',
      });

      const postsBefore = (await sandboxPostsPerJob(server().container.db.kysely)).length;
      const second = await publish(server(), ws.api_key, ws.workspace_id, {
        brand_id: brandId,
        target_platforms: ['instagram'],
        content_type: 'photo',
        media: [{ url: `${media.url}/photo.jpg` }],
      });
      await server().settle();
      const later = await read(server(), ws.api_key, ws.workspace_id, second);
      expect(later.jobs[0]).toMatchObject({ status: 'failed', error_code: 'token_expired', attempts: 0 });
      expect((await sandboxPostsPerJob(server().container.db.kysely)).length).toBe(postsBefore);
      expect((await events(server(), connections.instagram!)).length).toBe(1);
      expect((await read(server(), ws.api_key, ws.workspace_id, first)).status).toBe('failed');
    });

    it('a late confirmation turns failed into published, records previous_status and a corrected event', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads']);
      const contentId = await publish(server(), ws.api_key, ws.workspace_id, {
        brand_id: brandId,
        target_platforms: ['threads'],
        content_type: 'text',
        text: 'Hello',
        sandbox_outcomes: { threads: 'late_confirmation' },
      });
      // Walk up to the first failure only: the confirmation deadline passes without a confirmation.
      const clock = server().container.clock as ManualClock;
      for (let i = 0; i < 100; i++) {
        await server().container.publisher.drain();
        const c = await read(server(), ws.api_key, ws.workspace_id, contentId);
        if (c.status === 'failed') break;
        clock.advance(server().container.config.publisher.confirmIntervalMs);
      }
      const failed = await read(server(), ws.api_key, ws.workspace_id, contentId);
      expect(failed.status).toBe('failed');
      expect(failed.jobs[0]).toMatchObject({ status: 'failed', error_code: 'confirmacao_esgotada' });

      await server().settle();
      const corrected = await read(server(), ws.api_key, ws.workspace_id, contentId);
      expect(corrected.status).toBe('published');
      expect(corrected.jobs[0]).toMatchObject({ status: 'published', previous_status: 'failed', error_code: null });
      expect(corrected.jobs[0]?.external_post_url).toMatch(/^https:\/\/www\.threads\.net\//);
      const evts = await events(server(), contentId);
      expect(evts.map((e) => [e.type, e.corrected ?? null, e.previous_status ?? null])).toEqual([
        ['content.failed', null, null],
        ['content.published', true, 'failed'],
      ]);
    });

    it('a late confirmation beside a published job turns partial into published', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads', 'linkedin']);
      const contentId = await publish(server(), ws.api_key, ws.workspace_id, {
        brand_id: brandId,
        target_platforms: ['threads', 'linkedin'],
        content_type: 'text',
        text: 'Hello',
        sandbox_outcomes: { threads: 'late_confirmation' },
      });
      await server().settle();
      const evts = await events(server(), contentId);
      expect(evts.map((e) => [e.type, e.previous_status ?? null])).toEqual([
        ['content.partial', null],
        ['content.published', 'partial'],
      ]);
    });

    it('a media address without a size is capped at 100 MB when publishing', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['youtube', 'linkedin']);
      const contentId = await publish(server(), ws.api_key, ws.workspace_id, {
        brand_id: brandId,
        target_platforms: ['youtube', 'linkedin'],
        content_type: 'video',
        title: 'Big',
        media: [{ url: `${media.url}/nosize/${101 * 1024 * 1024}` }],
      });
      await server().settle();
      const content = await read(server(), ws.api_key, ws.workspace_id, contentId);
      expect(content.status).toBe('failed');
      for (const job of content.jobs) {
        expect(job.error_code).toBe('media_too_large');
        expect(job.error_message).toMatch(/does not report the file size/);
      }
    });
  },
  { ALLOW_LOCAL_URLS: 'true' },
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);
