import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NetworkAdapter, PublishRequest, Published } from '../../src/networks/adapter.js';
import { FACEBOOK_ERROR_TABLE, FALLBACK_ROW_NAME } from '../../src/networks/facebook/errors.js';
import { createFacebookAdapter } from '../../src/networks/facebook/adapter.js';
import { createFacebookOAuth } from '../../src/networks/facebook/oauth.js';
import type { ContentType } from '../../src/vocabulary/platforms.js';
import type { NetworkDeps } from '../../src/networks/network-deps.js';
import { graphError, startFakeFacebook, type FakeFacebook } from '../fakes/facebook.js';
import { bufferSource } from '../../src/networks/media-source.js';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openFileSource } from '../../src/media/file-source.js';
import { withinDeadline } from '../../src/outbound/deadline.js';

/** Short client timeout so a hung fake answer turns into a timeout quickly (the adapter's own is 30 s). */
const CLIENT_TIMEOUT_MS = 400;

let fake: FakeFacebook;
let clock: number;
let logs: { message: string; details: Record<string, unknown> }[];
let deps: NetworkDeps;
let adapter: NetworkAdapter;

beforeEach(async () => {
  clock = Date.parse('2026-03-01T12:00:00Z');
  logs = [];
  fake = await startFakeFacebook({ now: () => clock });
  deps = {
    fetch: (input, init) => withinDeadline(CLIENT_TIMEOUT_MS, (signal) => globalThis.fetch(input, { ...init, signal }), init?.signal ?? undefined),
    userHostFetch: globalThis.fetch,
    now: () => clock,
    sleep: async () => {},
    log: (message, details) => void logs.push({ message, details }),
    openMedia: async (url) => {
      if (url.includes('missing')) throw new Error('ENOENT');
      return bufferSource(Buffer.from(`bytes of ${url}`));
    },
  };
  adapter = createFacebookAdapter(fake.settings, deps);
});

afterEach(async () => {
  await fake.close();
});

const PHOTO = 'https://cdn.example.com/a.jpg';
const PHOTO2 = 'https://cdn.example.com/b.jpg';
const VIDEO = 'https://cdn.example.com/v.mp4';

/**
 * One job as the worker keeps it: the recorded container id and the saved progress. Each `request()` is a
 * fresh PublishRequest built from what was saved, as the worker builds one per run.
 */
class Job {
  progress: Record<string, unknown> | null = null;
  containerId: string | null = null;
  leaseLost = false;
  constructor(
    readonly contentType: ContentType,
    readonly text: string | null,
    readonly urls: string[] = [],
  ) {}

  request(): PublishRequest {
    return {
      jobId: 'job_fb1',
      attempt: 1,
      platform: 'facebook',
      connection: { id: 'conn_fb', mode: 'live', name: fake.pageName },
      credentials: { accessToken: fake.pageToken, accountId: fake.pageId },
      contentType: this.contentType,
      text: this.text,
      title: null,
      thread: null,
      media: this.urls.map((url) => ({ url, sizeBytes: 1000, contentType: null })),
      sandboxOutcome: null,
      progress: this.progress,
      saveProgress: async (p) => {
        if (this.leaseLost) return false;
        this.progress = structuredClone(p);
        return true;
      },
    };
  }

  /** One worker run: submit when no container is recorded, then publish with the same request. */
  async run(): Promise<Published> {
    const req = this.request();
    if (this.containerId === null) {
      const submitted = await adapter.submit(req);
      if (!submitted.ok) return submitted;
      this.containerId = submitted.containerId;
    }
    return adapter.publish(req, this.containerId);
  }

  /** Runs until the result is not pending (the worker calls publish again later). */
  async runUntilSettled(max = 10): Promise<Published> {
    for (let i = 0; i < max; i++) {
      const r = await this.run();
      if (r.ok !== 'pending') return r;
      clock += r.retryAfterMs;
    }
    throw new Error('still pending');
  }
}

const calls = (method: string, path: RegExp) => fake.requests.filter((r) => r.method === method && path.test(r.path));

describe('facebook adapter: publishing', () => {
  it('publishes a text post and confirms it with its permalink', async () => {
    const job = new Job('text', 'Hello from the service');
    const published = await job.run();
    expect(published).toMatchObject({ ok: true });
    if (published.ok !== true) throw new Error('not published');
    expect(job.containerId).toBe('fb-pending:job_fb1');
    expect(fake.posts).toHaveLength(1);
    expect(fake.posts[0]).toMatchObject({ kind: 'feed', message: 'Hello from the service', id: published.postId });

    const confirmed = await adapter.confirm(job.request(), published.postId, { late: false });
    expect(confirmed).toEqual({ state: 'found', url: expect.stringMatching(/^https:\/\/www\.facebook\.com\/1000000000001\/posts\/\d+$/) });

    // The token travels in the header with an appsecret_proof, never in the URL.
    const feed = calls('POST', /\/feed$/)[0];
    expect(feed?.headers.authorization).toBe(`Bearer ${fake.pageToken}`);
    expect(feed?.params.appsecret_proof).toMatch(/^[0-9a-f]{64}$/);
    expect(fake.requests.every((r) => r.params.access_token === undefined)).toBe(true);
    expect(job.progress).toMatchObject({ publishing: false, postId: published.postId });
  });

  it('publishes a single photo with /photos (published=true) and keeps the post id, not the photo id', async () => {
    const job = new Job('photo', 'A caption', [PHOTO]);
    const published = await job.run();
    if (published.ok !== true) throw new Error('not published');
    expect(calls('POST', /\/photos$/)[0]?.params).toMatchObject({ url: PHOTO, message: 'A caption', published: 'true' });
    expect(fake.posts).toEqual([expect.objectContaining({ kind: 'photo', id: published.postId })]);
    expect(await adapter.confirm(job.request(), published.postId, { late: false })).toMatchObject({ state: 'found' });
  });

  it('uploads several photos unpublished in submit and attaches them to one feed post in publish', async () => {
    const job = new Job('photo', 'Two photos', [PHOTO, PHOTO2]);
    const req = job.request();
    const submitted = await adapter.submit(req);
    if (!submitted.ok) throw new Error('not submitted');
    expect(fake.posts).toHaveLength(0); // nothing public yet
    expect(calls('POST', /\/photos$/).map((r) => r.params.published)).toEqual(['false', 'false']);
    const published = await adapter.publish(req, submitted.containerId);
    if (published.ok !== true) throw new Error('not published');
    expect(fake.posts).toHaveLength(1);
    expect(fake.posts[0]?.attachedMedia).toEqual(submitted.containerId.replace('fb-album:', '').split(','));
  });

  it('resumes a multi-photo upload that failed half-way without uploading the first photo again', async () => {
    // The second upload gets a transient 500 (the fake's failNext would hit the first /photos call).
    let uploads = 0;
    adapter = createFacebookAdapter(fake.settings, {
      ...deps,
      fetch: async (input, init) => {
        if (String(input).includes('/photos') && ++uploads === 2) {
          return new Response(JSON.stringify(graphError(2, 'An unexpected error has occurred. Please retry your request later.', { transient: true })), { status: 500 });
        }
        return deps.fetch(input, init);
      },
    });
    const job = new Job('photo', 'Three photos', [PHOTO, PHOTO2, PHOTO]);
    expect(await job.run()).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    expect(job.progress).toMatchObject({ photoIds: [expect.any(String)] });
    expect(await job.run()).toMatchObject({ ok: true });
    expect(calls('POST', /\/photos$/)).toHaveLength(3); // 1 before the failure, 2 after: the first is reused
    expect(fake.posts).toHaveLength(1);
    expect(fake.posts[0]?.attachedMedia).toHaveLength(3);
  });

  it('publishes a video with file_url and reports it pending while Facebook processes it', async () => {
    fake.knobs.videoProcessingPolls = 2;
    const job = new Job('video', 'A video', [VIDEO]);
    const published = await job.run();
    if (published.ok !== true) throw new Error('not published');
    expect(calls('POST', /\/videos$/)[0]?.params).toMatchObject({ file_url: VIDEO, description: 'A video' });
    const req = job.request();
    expect(await adapter.confirm(req, published.postId, { late: false })).toEqual({ state: 'pending' });
    expect(await adapter.confirm(req, published.postId, { late: false })).toEqual({ state: 'pending' });
    expect(await adapter.confirm(req, published.postId, { late: false })).toEqual({ state: 'found', url: `https://www.facebook.com/${fake.pageId}/videos/${published.postId}/` });
  });

  it('publishes a reel in phases: start + upload in submit, pending while uploading, finish once', async () => {
    fake.knobs.reelUploadPolls = 2;
    fake.knobs.videoProcessingPolls = 1;
    const job = new Job('reel', 'A reel', [VIDEO]);
    const first = await job.run();
    expect(first).toEqual({ ok: 'pending', retryAfterMs: expect.any(Number) });
    expect(job.containerId).toMatch(/^fb-reel:\d+$/);
    expect(fake.posts).toHaveLength(0);
    const upload = fake.requests.find((r) => r.path.startsWith('/video-upload/'));
    expect(upload?.headers.file_url).toBe(VIDEO);
    expect(upload?.headers.authorization).toBe(`OAuth ${fake.pageToken}`);

    const published = await job.runUntilSettled();
    if (published.ok !== true) throw new Error('not published');
    expect(published.postId).toBe(job.containerId?.replace('fb-reel:', ''));
    expect(calls('POST', /\/video_reels$/).map((r) => r.params.upload_phase)).toEqual(['start', 'finish']);
    expect(calls('POST', /\/video_reels$/)[1]?.params).toMatchObject({ video_state: 'PUBLISHED', description: 'A reel' });
    expect(fake.posts).toHaveLength(1);
    expect(await adapter.confirm(job.request(), published.postId, { late: false })).toEqual({ state: 'pending' });
    expect(await adapter.confirm(job.request(), published.postId, { late: false })).toEqual({ state: 'found', url: `https://www.facebook.com/reel/${published.postId}/` });
  });

  it('uploads our own stored media as bytes: a multipart source for photos, offset + file_size for reels', async () => {
    const photo = await new Job('photo', 'Stored photo', ['file:///data/media/a.png']).run();
    expect(photo).toMatchObject({ ok: true });
    expect(calls('POST', /\/photos$/)[0]?.params).toMatchObject({ source: `<file ${'bytes of file:///data/media/a.png'.length} bytes image/jpeg>`, published: 'true' });
    expect(calls('POST', /\/photos$/)[0]?.params.url).toBeUndefined();

    const reel = await new Job('reel', 'Stored reel', ['file:///data/media/r.mp4']).runUntilSettled();
    expect(reel).toMatchObject({ ok: true });
    const upload = fake.requests.find((r) => r.path.startsWith('/video-upload/'));
    expect(upload?.headers).toMatchObject({ offset: '0', file_size: String('bytes of file:///data/media/r.mp4'.length) });
    expect(upload?.headers.file_url).toBeUndefined();
    expect(fake.posts.map((p) => p.kind)).toEqual(['photo', 'reel']);
  });

  it('sends files from disk as file-backed Blobs: the multipart source and the reel body arrive whole', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fb-file-'));
    const photoBytes = randomBytes(300 * 1024);
    const reelBytes = randomBytes(2 * 1024 * 1024 + 3);
    writeFileSync(join(dir, 'a.png'), photoBytes);
    writeFileSync(join(dir, 'r.mp4'), reelBytes);
    adapter = createFacebookAdapter(fake.settings, { ...deps, openMedia: (url) => openFileSource(url.slice('file://'.length)) });
    expect(await new Job('photo', 'From disk', [`file://${join(dir, 'a.png')}`]).run()).toMatchObject({ ok: true });
    expect(calls('POST', /\/photos$/)[0]?.params.source).toBe(`<file ${photoBytes.length} bytes image/jpeg>`);
    expect(await new Job('reel', 'Reel from disk', [`file://${join(dir, 'r.mp4')}`]).runUntilSettled()).toMatchObject({ ok: true });
    const upload = fake.requests.find((r) => r.path.startsWith('/video-upload/'));
    expect(upload?.headers).toMatchObject({ offset: '0', file_size: String(reelBytes.length) });
    expect(upload?.bodyBytes).toBe(reelBytes.length);
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps a temporary source (a copy from the media store, removed on close) until the call that sends it has returned', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fb-temp-'));
    const photoBytes = randomBytes(200 * 1024);
    const reelBytes = randomBytes(1024 * 1024 + 5);
    const copies: string[] = [];
    // Each open makes a fresh temporary copy, as the S3 store does; closing it deletes the copy.
    adapter = createFacebookAdapter(fake.settings, {
      ...deps,
      openMedia: async (url) => {
        const copy = join(dir, `copy-${copies.length}`);
        writeFileSync(copy, readFileSync(url.slice('file://'.length)));
        copies.push(copy);
        return openFileSource(copy, true);
      },
    });
    writeFileSync(join(dir, 'a.png'), photoBytes);
    writeFileSync(join(dir, 'r.mp4'), reelBytes);
    expect(await new Job('photo', 'From a copy', [`file://${join(dir, 'a.png')}`]).run()).toMatchObject({ ok: true });
    expect(calls('POST', /\/photos$/)[0]?.params.source).toBe(`<file ${photoBytes.length} bytes image/jpeg>`);
    expect(await new Job('reel', 'Reel from a copy', [`file://${join(dir, 'r.mp4')}`]).runUntilSettled()).toMatchObject({ ok: true });
    expect(fake.requests.find((r) => r.path.startsWith('/video-upload/'))?.bodyBytes).toBe(reelBytes.length);
    // Every copy was released after its call.
    expect(copies.length).toBeGreaterThan(0);
    expect(copies.filter((c) => existsSync(c))).toEqual([]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('fails without posting when our stored media cannot be read', async () => {
    expect(await new Job('video', 'Gone', ['file:///data/media/missing.mp4']).run()).toMatchObject({ ok: false, code: 'upstream_unknown', retryable: false });
    expect(fake.posts).toHaveLength(0);
  });

  it('refuses what Facebook Pages cannot take, before calling Facebook', async () => {
    expect(await new Job('thread', 'a').run()).toMatchObject({ ok: false, code: 'upstream_unknown', retryable: false });
    expect(await new Job('photo', 'a', []).run()).toMatchObject({ ok: false, code: 'upstream_unknown' });
    expect(await new Job('text', '  ').run()).toMatchObject({ ok: false, code: 'upstream_unknown' });
    expect(fake.requests).toHaveLength(0);
  });

  it('fails with upstream_unknown when a live request has no credentials', async () => {
    const req = { ...new Job('text', 'x').request(), credentials: null };
    expect(await adapter.submit(req)).toMatchObject({ ok: false, code: 'upstream_unknown' });
    expect(await adapter.publish(req, 'fb-pending:job_fb1')).toMatchObject({ ok: false, code: 'upstream_unknown' });
    expect(await adapter.confirm(req, '1_2', { late: false })).toEqual({ state: 'unavailable' });
  });

  it('posts nothing when the lease was lost before the public call', async () => {
    const job = new Job('text', 'x');
    job.leaseLost = true;
    expect(await job.run()).toMatchObject({ ok: false, retryable: true });
    expect(fake.posts).toHaveLength(0);
  });
});

describe('facebook adapter: never twice', () => {
  const kinds: { name: string; job: () => Job; path: RegExp }[] = [
    { name: 'text', job: () => new Job('text', 'Launch day'), path: /\/feed$/ },
    { name: 'single photo', job: () => new Job('photo', 'Launch photo', [PHOTO]), path: /\/photos$/ },
    { name: 'several photos', job: () => new Job('photo', 'Launch album', [PHOTO, PHOTO2]), path: /\/feed$/ },
    { name: 'video', job: () => new Job('video', 'Launch video', [VIDEO]), path: /\/videos$/ },
    { name: 'reel', job: () => new Job('reel', 'Launch reel', [VIDEO]), path: /\/video_reels$/ },
  ];

  for (const kind of kinds) {
    it(`${kind.name}: the public call completes but the client times out; the next publish finds the post`, async () => {
      const job = kind.job();
      // For multi-photo, unpublished uploads also hit /photos; the reel's start also hits /video_reels: submit first.
      const req = job.request();
      const submitted = await adapter.submit(req);
      if (!submitted.ok) throw new Error('not submitted');
      job.containerId = submitted.containerId;
      fake.hangNext({ method: 'POST', path: kind.path }, 'after');
      const first = await adapter.publish(req, submitted.containerId);
      expect(first).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
      expect(fake.posts).toHaveLength(1); // it did happen, the client just does not know
      expect(job.progress).toMatchObject({ publishing: true });

      clock += 5_000; // the worker's first retry delay
      const second = await job.run();
      if (second.ok !== true) throw new Error(`not published: ${JSON.stringify(second)}`);
      expect(second.postId).toBe(fake.posts[0]?.id);
      expect(fake.posts).toHaveLength(1);
      const publicCalls = kind.name === 'reel' ? calls('POST', kind.path).filter((r) => r.params.upload_phase === 'finish') : calls('POST', kind.path).filter((r) => r.params.published !== 'false');
      expect(publicCalls).toHaveLength(1);
      expect(await adapter.confirm(job.request(), second.postId, { late: false })).toMatchObject({ state: 'found' });
    });
  }

  it('a timeout before Facebook acted: pending during the grace period, then exactly one post', async () => {
    const job = new Job('text', 'Lost in transit');
    fake.hangNext({ method: 'POST', path: /\/feed$/ }, 'before');
    expect(await job.run()).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    expect(fake.posts).toHaveLength(0);

    clock += 5_000;
    expect(await job.run()).toEqual({ ok: 'pending', retryAfterMs: expect.any(Number) });
    expect(fake.posts).toHaveLength(0);

    clock += 120_000; // past the grace period: the earlier call did not post
    const published = await job.run();
    expect(published).toMatchObject({ ok: true });
    expect(fake.posts).toHaveLength(1);
  });

  it('a post that shows up during the grace period is adopted, not posted again', async () => {
    const job = new Job('text', 'Slow to appear');
    fake.hangNext({ method: 'POST', path: /\/feed$/ }, 'before');
    await job.run();
    clock += 5_000;
    expect(await job.run()).toMatchObject({ ok: 'pending' });
    // Facebook finishes the earlier request late (simulated by a post with the same text in the window).
    const other = new Job('text', 'Slow to appear');
    other.containerId = 'fb-pending:other';
    await adapter.publish(other.request(), 'fb-pending:other');
    clock += 15_000;
    const published = await job.run();
    if (published.ok !== true) throw new Error('not published');
    expect(published.postId).toBe(fake.posts[0]?.id);
    expect(fake.posts).toHaveLength(1);
  });

  it('does not look posts up after a clear refusal: the next attempt posts at once', async () => {
    const job = new Job('text', 'Throttled');
    fake.failNext({ method: 'POST', path: /\/feed$/ }, 400, graphError(613, 'Calls to this api have exceeded the rate limit.'));
    expect(await job.run()).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    expect(job.progress).toMatchObject({ publishing: false });
    expect(await job.run()).toMatchObject({ ok: true });
    expect(calls('GET', /published_posts$/)).toHaveLength(0);
    expect(fake.posts).toHaveLength(1);
  });

  it('a duplicate refusal after our own earlier attempt adopts that post', async () => {
    const earlier = new Job('text', 'Same words');
    await earlier.run();
    const job = new Job('text', 'Same words');
    job.progress = { publishing: false, firstPublishingAt: clock - 1_000 };
    job.containerId = 'fb-pending:job_fb1';
    fake.failNext({ method: 'POST', path: /\/feed$/ }, 400, graphError(506, 'Duplicate status message'));
    const published = await job.run();
    expect(published).toEqual({ ok: true, postId: fake.posts[0]?.id });
    expect(fake.posts).toHaveLength(1);
  });

  it('a publish after success returns the recorded post without calling Facebook', async () => {
    const job = new Job('text', 'Once');
    const first = await job.run();
    const count = fake.requests.length;
    expect(await job.run()).toEqual(first);
    expect(fake.requests).toHaveLength(count);
  });
});

describe('facebook adapter: error table', () => {
  const cases: { row: string; status: number; body: unknown; code: string; retryable: boolean }[] = [
    { row: 'page_publishing_authorization', status: 400, body: graphError(200, 'Page publishing authorization required', { subcode: 1404078 }), code: 'token_expired', retryable: false },
    { row: 'posting_too_fast', status: 400, body: graphError(368, 'It looks like you were misusing this feature by going too fast.', { subcode: 1390008 }), code: 'upstream_5xx', retryable: true },
    { row: 'duplicate', status: 400, body: graphError(506, 'Duplicate status message'), code: 'upstream_unknown', retryable: false },
    { row: 'duplicate', status: 400, body: graphError(100, 'These photos were already posted.', { subcode: 1366051 }), code: 'upstream_unknown', retryable: false },
    { row: 'video_too_large', status: 400, body: graphError(100, 'The video you tried to upload is too large.', { subcode: 1363023, type: 'CodedException' }), code: 'media_too_large', retryable: false },
    { row: 'photo_rejected', status: 400, body: graphError(100, 'Photos should be smaller than 4 MB and saved as JPG, PNG', { subcode: 1366046 }), code: 'media_unsupported_format', retryable: false },
    { row: 'media_invalid', status: 400, body: graphError(352, "Sorry, the video file you selected is in a format that we don't support."), code: 'media_unsupported_format', retryable: false },
    { row: 'media_invalid', status: 400, body: graphError(324, '(#324) Missing or invalid image file'), code: 'media_unsupported_format', retryable: false },
    { row: 'upload_not_allowed', status: 400, body: graphError(100, "No Permission to Upload Video: You don't have permission to upload a video here.", { subcode: 1363042 }), code: 'permission_revoked', retryable: false },
    { row: 'token_invalid', status: 400, body: graphError(190, 'Error validating access token: Session has expired.', { subcode: 463 }), code: 'token_expired', retryable: false },
    { row: 'token_revoked_text', status: 400, body: { error: { message: 'REVOKED_ACCESS_TOKEN', type: 'OAuthException' } }, code: 'token_expired', retryable: false },
    { row: 'permission_missing', status: 403, body: graphError(10, '(#10) Application does not have permission for this action'), code: 'permission_revoked', retryable: false },
    { row: 'permission_missing', status: 400, body: graphError(200, '(#200) Requires pages_manage_posts permission'), code: 'permission_revoked', retryable: false },
    { row: 'blocked', status: 400, body: graphError(368, 'The action attempted has been deemed abusive or is otherwise disallowed'), code: 'permission_revoked', retryable: false },
    { row: 'throttled', status: 400, body: graphError(4, '(#4) Application request limit reached'), code: 'upstream_5xx', retryable: true },
    { row: 'throttled', status: 400, body: graphError(17, '(#17) User request limit reached'), code: 'upstream_5xx', retryable: true },
    { row: 'throttled', status: 400, body: graphError(32, '(#32) Page request limit reached'), code: 'upstream_5xx', retryable: true },
    { row: 'throttled', status: 400, body: graphError(613, 'Calls to this api have exceeded the rate limit.'), code: 'upstream_5xx', retryable: true },
    { row: 'throttled', status: 400, body: graphError(80001, 'There have been too many calls to this Page account.'), code: 'upstream_5xx', retryable: true },
    { row: 'feed_limit', status: 400, body: graphError(341, '(#341) Feed action request limit reached'), code: 'quota_exceeded', retryable: false },
    { row: 'video_upload_problem', status: 400, body: graphError(6000, 'There was a problem uploading your video file.'), code: 'upstream_5xx', retryable: true },
    { row: 'transient', status: 400, body: graphError(2, 'An unexpected error has occurred. Please retry your request later.', { transient: true }), code: 'upstream_5xx', retryable: true },
    { row: 'http_429', status: 429, body: 'Too Many Requests', code: 'upstream_5xx', retryable: true },
    { row: 'http_5xx', status: 502, body: '<html>Bad Gateway</html>', code: 'upstream_5xx', retryable: true },
    { row: FALLBACK_ROW_NAME, status: 400, body: graphError(100, '(#100) Some new thing nobody documented'), code: 'upstream_unknown', retryable: false },
  ];

  it('has a case for every row of the table', () => {
    const covered = new Set(cases.map((c) => c.row));
    for (const row of FACEBOOK_ERROR_TABLE) expect(covered, row.name).toContain(row.name);
    expect(covered).toContain(FALLBACK_ROW_NAME);
  });

  for (const c of cases) {
    it(`${c.row} (HTTP ${c.status}, ${JSON.stringify(c.body).slice(0, 60)}) → ${c.code}`, async () => {
      fake.failNext({ method: 'POST', path: /\/feed$/ }, c.status, c.body);
      const result = await new Job('text', 'Error case').run();
      expect(result).toMatchObject({ ok: false, code: c.code, retryable: c.retryable });
      if (result.ok !== false) throw new Error('expected a failure');
      // Only our words reach the caller; Facebook's body goes to the log.
      const theirs = typeof c.body === 'string' ? c.body : ((c.body as { error: { message: string } }).error.message);
      expect(result.message).not.toContain(theirs);
      expect(logs.some((l) => l.details.body === (typeof c.body === 'string' ? c.body : JSON.stringify(c.body)) && l.details.row === c.row)).toBe(true);
      expect(JSON.stringify(logs)).not.toContain(fake.pageToken);
      expect(fake.posts).toHaveLength(0);
    });
  }

  it('a refused connection is upstream_5xx, retryable', async () => {
    const closed = createFacebookAdapter({ ...fake.settings, apiBaseUrl: 'http://127.0.0.1:9/v23.0' }, deps);
    const req = new Job('text', 'x').request();
    expect(await closed.publish(req, 'fb-pending:job_fb1')).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
  });

  it('confirm: a missing post is not_found, a Facebook outage is unavailable', async () => {
    const req = new Job('text', 'x').request();
    expect(await adapter.confirm(req, `${fake.pageId}_404`, { late: false })).toEqual({ state: 'not_found' });
    fake.failNext({ method: 'GET' }, 500, graphError(2, 'Service temporarily unavailable', { transient: true }));
    expect(await adapter.confirm(req, `${fake.pageId}_404`, { late: true })).toEqual({ state: 'unavailable' });
  });
});

describe('facebook OAuth', () => {
  const redirectUri = 'https://publisher.example.com/connections/facebook/callback';

  async function authorize(oauth = createFacebookOAuth(fake.settings, deps)) {
    const url = new URL(oauth.authorizationUrl({ state: 'st_123', redirectUri }));
    expect(url.origin + url.pathname).toBe(fake.settings.authorizeUrl);
    expect(url.searchParams.get('scope')?.split(',')).toEqual(expect.arrayContaining(['pages_show_list', 'pages_manage_posts', 'pages_read_engagement']));
    expect(url.searchParams.get('state')).toBe('st_123');
    const res = await globalThis.fetch(url, { redirect: 'manual' });
    const back = new URL(res.headers.get('location') ?? '');
    expect(back.searchParams.get('state')).toBe('st_123');
    return back.searchParams.get('code') ?? '';
  }

  it('exchanges the code for a long-lived user token and stores the first Page with its token', async () => {
    const oauth = createFacebookOAuth(fake.settings, deps);
    const code = await authorize(oauth);
    const result = await oauth.exchangeCode({ state: 'state_1', code, redirectUri });
    expect(result).toEqual({ ok: true, tokens: { accessToken: fake.pageToken, refreshToken: null, expiresAt: null, accountId: fake.pageId, accountName: fake.pageName } });
    expect(fake.accountsCalledWith).toHaveLength(1);
    expect(fake.longTokens.has(fake.accountsCalledWith[0] ?? '')).toBe(true); // after fb_exchange_token
    expect(calls('GET', /oauth\/access_token$/).map((r) => r.params.grant_type ?? 'code')).toEqual(['code', 'fb_exchange_token']);
    expect(oauth.refresh).toBeUndefined(); // Page tokens from long-lived user tokens have no timer
    // The stored Page token publishes.
    expect(await new Job('text', 'Connected').run()).toMatchObject({ ok: true });
  });

  it('maps a used or foreign code to a failure in our words', async () => {
    const oauth = createFacebookOAuth(fake.settings, deps);
    const code = await authorize(oauth);
    expect(await oauth.exchangeCode({ state: 'state_1', code, redirectUri: 'https://elsewhere.example.com/cb' })).toMatchObject({ ok: false, code: 'upstream_unknown' });
    expect(await oauth.exchangeCode({ state: 'state_1', code: 'code-forged', redirectUri })).toMatchObject({ ok: false, code: 'upstream_unknown' });
  });

  it('a wrong app secret fails without leaking it', async () => {
    const oauth = createFacebookOAuth({ ...fake.settings, clientSecret: 'wrong-secret' }, deps);
    const code = await authorize(oauth);
    const result = await oauth.exchangeCode({ state: 'state_1', code, redirectUri });
    expect(result.ok).toBe(false);
    expect(JSON.stringify(logs)).not.toContain('wrong-secret');
  });

  it('fails cleanly when the app is not configured', async () => {
    const oauth = createFacebookOAuth({ ...fake.settings, clientSecret: undefined }, deps);
    expect(await oauth.exchangeCode({ state: 'state_1', code: 'x', redirectUri })).toMatchObject({ ok: false, code: 'upstream_unknown' });
  });
});
