import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JOB_ERROR_MESSAGES, type JobErrorCode } from '../../src/vocabulary/job-errors.js';
import type { NetworkAdapter, PublishRequest, Published } from '../../src/networks/adapter.js';
import type { NetworkDeps } from '../../src/networks/network-deps.js';
import type { NetworkTokens } from '../../src/networks/network-oauth.js';
import { createYoutubeAdapter, type YoutubeAdapterOptions } from '../../src/networks/youtube/adapter.js';
import { createYoutubeOAuth } from '../../src/networks/youtube/oauth.js';
import { YOUTUBE_ERROR_TABLE, YOUTUBE_MESSAGES } from '../../src/networks/youtube/errors.js';
import { RAW_TEXT, READONLY_SCOPE, startYoutubeFake, UPLOAD_SCOPE, type FakeScript, type YoutubeFake } from '../fakes/youtube.js';
import { bufferSource } from '../../src/networks/media-source.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openFileSource } from '../../src/media/file-source.js';
import { withinDeadline } from '../../src/outbound/deadline.js';

const KIB = 1024;
const CHUNK = 256 * KIB;
/** Three chunks of 256 KiB: two full, one partial. */
const VIDEO = randomBytes(700 * KIB);
const NOW = 1_750_000_000_000;

let fake: YoutubeFake;
let logs: Array<{ message: string; details: Record<string, unknown> }>;

beforeEach(async () => {
  fake = await startYoutubeFake();
  logs = [];
});
afterEach(async () => {
  // The token must never reach a log line, whatever the test did.
  expect(JSON.stringify(logs)).not.toContain(fake.token);
  await fake.close();
});

function deps(overrides: Partial<NetworkDeps> = {}): NetworkDeps {
  return {
    fetch: globalThis.fetch,
    userHostFetch: globalThis.fetch,
    now: () => NOW,
    sleep: async () => {},
    log: (message, details) => logs.push({ message, details }),
    openMedia: async () => bufferSource(VIDEO),
    ...overrides,
  };
}

/** A client whose every request gives up after `ms` (the fake's `hang` then looks like a lost answer). */
const shortFetch =
  (ms: number): typeof globalThis.fetch =>
  (input, init) =>
    withinDeadline(ms, (signal) => globalThis.fetch(input, { ...init, signal }), init?.signal ?? undefined);

const adapter = (options: YoutubeAdapterOptions = {}, overrides: Partial<NetworkDeps> = {}): NetworkAdapter =>
  createYoutubeAdapter(fake.settings, deps(overrides), { chunkSizeBytes: CHUNK, ...options });

/** A job as the worker builds it; `progress` reads what the last run saved, as a reloaded job would. */
function job(overrides: Partial<Omit<PublishRequest, 'progress' | 'saveProgress'>> = {}) {
  const state: { progress: Record<string, unknown> | null; saves: Array<Record<string, unknown>>; leaseLost: boolean } = { progress: null, saves: [], leaseLost: false };
  const req: PublishRequest = {
    jobId: 'job_1',
    attempt: 1,
    platform: 'youtube',
    connection: { id: 'conn_1', mode: 'live', name: 'Acme Videos' },
    credentials: { accessToken: fake.token, accountId: 'UCfakeChannel0000000000' },
    contentType: 'video',
    text: 'Launch day.\nEverything about the launch.',
    title: 'Our launch',
    thread: null,
    media: [{ url: 'https://media.example/launch.mp4', sizeBytes: VIDEO.length, contentType: 'video/mp4' }],
    sandboxOutcome: null,
    get progress() {
      return state.progress;
    },
    async saveProgress(p) {
      if (state.leaseLost) return false;
      state.progress = { ...p };
      state.saves.push({ ...p });
      return true;
    },
    ...overrides,
  };
  return { req, state };
}

/** submit, then publish again on pending, like the worker. */
async function run(a: NetworkAdapter, req: PublishRequest): Promise<{ containerId: string; published: Published; calls: number }> {
  const submitted = await a.submit(req);
  if (!submitted.ok) throw new Error(`submit failed: ${submitted.code}`);
  let published: Published = await a.publish(req, submitted.containerId);
  let calls = 1;
  while (published.ok === 'pending' && calls < 20) {
    published = await a.publish(req, submitted.containerId);
    calls += 1;
  }
  return { containerId: submitted.containerId, published, calls };
}

const kinds = () => fake.sessionRequests.map((r) => r.kind);

describe('youtube OAuth', () => {
  it('builds the consent URL, exchanges the code, reads the channel and refreshes', async () => {
    const oauth = createYoutubeOAuth(fake.settings, deps());
    const url = new URL(oauth.authorizationUrl({ state: 'st_1', redirectUri: 'https://app.example/callback' }));
    expect(url.searchParams.get('access_type')).toBe('offline');
    expect(url.searchParams.get('prompt')).toBe('consent');
    expect(url.searchParams.get('scope')?.split(' ')).toEqual([UPLOAD_SCOPE, READONLY_SCOPE]);

    const consent = await fetch(url, { redirect: 'manual' });
    expect(consent.status).toBe(302);
    const back = new URL(consent.headers.get('location') ?? '');
    expect(back.searchParams.get('state')).toBe('st_1');

    const exchanged = await oauth.exchangeCode({ state: 'state_1', code: back.searchParams.get('code') ?? '', redirectUri: 'https://app.example/callback' });
    if (exchanged.ok !== true) throw new Error(exchanged.code);
    const tokens = exchanged.tokens;
    expect(fake.accessTokens.has(tokens.accessToken)).toBe(true);
    expect(tokens).toMatchObject({ accountId: 'UCfakeChannel0000000000', accountName: 'Acme Videos', expiresAt: NOW + 3_599_000 });
    expect(tokens.refreshToken).toMatch(/^1\/\//);

    const refreshed = await oauth.refresh?.(tokens);
    if (refreshed?.ok !== true) throw new Error('refresh failed');
    expect(refreshed.tokens.accessToken).not.toBe(tokens.accessToken);
    expect(refreshed.tokens).toMatchObject({ refreshToken: tokens.refreshToken, accountId: tokens.accountId, accountName: 'Acme Videos' });

    // Revoked by the user (or a "Testing" app's 7-day limit): invalid_grant → reconnect.
    fake.refreshTokens.clear();
    expect(await oauth.refresh?.(tokens)).toMatchObject({ ok: false, code: 'token_expired', retryable: false });
  });

  async function codeFor(oauth: ReturnType<typeof createYoutubeOAuth>): Promise<string> {
    const consent = await fetch(oauth.authorizationUrl({ state: 's', redirectUri: 'https://app.example/cb' }), { redirect: 'manual' });
    return new URL(consent.headers.get('location') ?? '').searchParams.get('code') ?? '';
  }

  it.each<[string, (f: YoutubeFake) => void, JobErrorCode, boolean]>([
    ['a used or wrong code (invalid_grant)', () => {}, 'token_expired', false],
    ['an account without a channel', (f) => (f.channel = null), 'permission_revoked', false],
    ['the upload scope unticked on the consent screen', (f) => (f.grantedScope = READONLY_SCOPE), 'permission_revoked', false],
    ['the token endpoint failing (503)', (f) => f.script('token', { kind: 'error', status: 503 }), 'upstream_5xx', true],
    ['the channel lookup failing (500)', (f) => f.script('channels', { kind: 'error', status: 500 }), 'upstream_5xx', true],
  ])('exchangeCode maps %s', async (name, arrange, code, retryable) => {
    const oauth = createYoutubeOAuth(fake.settings, deps());
    const real = await codeFor(oauth);
    arrange(fake);
    const result = await oauth.exchangeCode({ state: 'state_1', code: name.startsWith('a used') ? 'bogus' : real, redirectUri: 'https://app.example/cb' });
    expect(result).toMatchObject({ ok: false, code, retryable });
  });

  it('reports a wrong client secret as a configuration problem, in our words', async () => {
    const oauth = createYoutubeOAuth({ ...fake.settings, clientSecret: 'wrong' }, deps());
    const result = await oauth.exchangeCode({ state: 'state_1', code: await codeFor(oauth), redirectUri: 'https://app.example/cb' });
    expect(result).toMatchObject({ ok: false, code: 'upstream_unknown', message: YOUTUBE_MESSAGES.clientConfig });
  });

  it('refresh without a refresh token asks for a reconnect', async () => {
    const tokens: NetworkTokens = { accessToken: 'x', refreshToken: null, expiresAt: null, accountId: 'UC', accountName: 'n' };
    expect(await createYoutubeOAuth(fake.settings, deps()).refresh?.(tokens)).toMatchObject({ ok: false, code: 'token_expired' });
  });
});

describe('youtube adapter: publishing', () => {
  it('reads a video file from disk chunk by chunk (never whole) and closes it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'yt-file-'));
    const path = join(dir, 'video.mp4');
    writeFileSync(path, VIDEO);
    const reads: number[] = [];
    let closed = 0;
    const a = adapter({}, {
      openMedia: async () => {
        const source = await openFileSource(path);
        return {
          size: source.size,
          read: async (offset, length) => {
            reads.push(length);
            return source.read(offset, length);
          },
          blob: (type) => source.blob(type),
          close: async () => {
            closed += 1;
            await source.close();
          },
        };
      },
    });
    const { req } = job({});
    const { published } = await run(a, req);
    expect(published.ok).toBe(true);
    expect(fake.posts[0]?.bytes.equals(VIDEO)).toBe(true);
    // Each read is one chunk at most: the file is never held whole.
    expect(Math.max(...reads)).toBeLessThanOrEqual(CHUNK);
    expect(reads.reduce((x, y) => x + y, 0)).toBe(VIDEO.length);
    expect(closed).toBeGreaterThanOrEqual(2); // once for the size at submit, once after the upload
    rmSync(dir, { recursive: true, force: true });
  });

  it('uploads in 256 KiB chunks, publishes once and confirms the public URL', async () => {
    const a = adapter();
    const { req, state } = job({ title: 'T'.repeat(150) });
    const { published } = await run(a, req);
    expect(published.ok).toBe(true);
    expect(fake.posts).toHaveLength(1);
    const video = fake.posts[0];
    if (!video || published.ok !== true) throw new Error('no video');
    expect(published).toEqual({ ok: true, postId: video.id, url: `https://www.youtube.com/watch?v=${video.id}` });
    expect(video.bytes.equals(VIDEO)).toBe(true);
    expect(video).toMatchObject({ title: 'T'.repeat(100), description: req.text, categoryId: '22', privacyStatus: 'public', madeForKids: false });
    expect(fake.sessionRequests.map((r) => r.bytes)).toEqual([CHUNK, CHUNK, VIDEO.length - 2 * CHUNK]);
    expect(state.progress).toMatchObject({ videoId: video.id, offset: VIDEO.length });

    expect(await a.confirm(req, video.id, { late: false })).toEqual({ state: 'found', url: published.url });

    // Called again (a worker that lost the answer): the saved id answers, nothing is sent.
    const before = fake.sessionRequests.length;
    expect(await a.publish(req, 'ignored')).toEqual(published);
    expect(fake.sessionRequests.length).toBe(before);
  });

  it('answers pending while a long upload goes on, then finishes (the worker calls publish again)', async () => {
    const { req } = job();
    const { published, calls } = await run(adapter({ publishBudgetMs: 0 }), req);
    expect(calls).toBe(3);
    expect(published.ok).toBe(true);
    expect(fake.posts).toHaveLength(1);
    expect(fake.posts[0]?.bytes.equals(VIDEO)).toBe(true);
  });

  it('confirms a video still processing as found; rejected or unknown ones as not found; errors as unavailable', async () => {
    fake.processingPolls = 2;
    const a = adapter();
    const { req } = job();
    const { published } = await run(a, req);
    if (published.ok !== true) throw new Error('not published');
    expect(await a.confirm(req, published.postId, { late: false })).toMatchObject({ state: 'found' });
    expect(await a.confirm(req, published.postId, { late: false })).toMatchObject({ state: 'found' });
    expect(await a.confirm(req, 'missing0000', { late: false })).toEqual({ state: 'not_found' });
    fake.script('videos', { kind: 'error', status: 503 });
    expect(await a.confirm(req, published.postId, { late: true })).toEqual({ state: 'unavailable' });
    const video = fake.posts[0];
    if (video) video.uploadStatus = 'rejected';
    expect(await a.confirm(req, published.postId, { late: false })).toEqual({ state: 'not_found' });
    expect(await a.confirm(job({ credentials: null }).req, published.postId, { late: false })).toEqual({ state: 'unavailable' });
  });

  it('refuses to run without credentials, and never sends the token off the API host', async () => {
    const a = adapter();
    expect(await a.submit(job({ credentials: null }).req)).toMatchObject({ ok: false, code: 'upstream_unknown' });
    expect(await a.publish(job({ credentials: null }).req, 'x')).toMatchObject({ ok: false, code: 'upstream_unknown' });
    let called = false;
    const spy = adapter({}, { fetch: async () => ((called = true), new Response(null, { status: 500 })) });
    expect(await spy.publish(job().req, 'https://evil.example/upload?upload_id=1')).toMatchObject({ ok: false, code: 'upstream_unknown' });
    expect(called).toBe(false);
  });

  it('stops when the job lease is lost, before sending anything', async () => {
    const a = adapter();
    const { req, state } = job();
    const submitted = await a.submit(req);
    if (!submitted.ok) throw new Error('submit failed');
    state.leaseLost = true;
    expect(await a.publish(req, submitted.containerId)).toMatchObject({ ok: false, retryable: true, message: YOUTUBE_MESSAGES.leaseLost });
    expect(fake.sessionRequests).toHaveLength(0);
  });
});

describe('youtube adapter: never twice', () => {
  it('a timeout on the last chunk, then a second publish that finds the video instead of uploading again', async () => {
    // The fake stores the last chunk and creates the video but never answers; the session queries hang too.
    fake.script('chunk', { kind: 'pass' }, { kind: 'pass' }, { kind: 'hang' });
    fake.script('status', { kind: 'hang' }, { kind: 'hang' }, { kind: 'hang' });
    const a = adapter({}, { fetch: shortFetch(300) });
    const { req, state } = job();
    const submitted = await a.submit(req);
    if (!submitted.ok) throw new Error('submit failed');
    expect(await a.publish(req, submitted.containerId)).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    expect(fake.posts).toHaveLength(1); // the video exists, the first run could not know
    expect(state.progress).toMatchObject({ offset: 2 * CHUNK });

    const second = await a.publish(req, submitted.containerId);
    expect(second).toEqual({ ok: true, postId: fake.posts[0]?.id, url: `https://www.youtube.com/watch?v=${fake.posts[0]?.id ?? ''}` });
    expect(fake.posts).toHaveLength(1);
    expect(fake.sessionRequests.at(-1)).toMatchObject({ kind: 'status' });
    expect(fake.sessionRequests.filter((r) => r.kind === 'chunk' && r.afterDone)).toHaveLength(0);
  });

  it('a publish without saved progress asks the session instead of sending bytes', async () => {
    const { containerId, published } = await run(adapter(), job().req);
    const again = await adapter().publish(job().req, containerId);
    expect(again).toEqual(published);
    expect(fake.sessionRequests.at(-1)).toMatchObject({ kind: 'status' });
    expect(fake.sessionRequests.filter((r) => r.kind === 'chunk' && r.afterDone)).toHaveLength(0);
    expect(fake.posts).toHaveLength(1);
  });

  it('a chunk answered 503 is resumed by asking the session, ending with exactly one video', async () => {
    fake.script('chunk', { kind: 'pass' }, { kind: 'error', status: 503 });
    const { req } = job();
    const { published } = await run(adapter(), req);
    expect(published.ok).toBe(true);
    expect(kinds()).toEqual(['chunk', 'chunk', 'status', 'chunk', 'chunk']);
    expect(fake.sessionRequests[2]?.contentRange).toBe(`bytes */${VIDEO.length}`);
    expect(fake.posts).toHaveLength(1);
    expect(fake.posts[0]?.bytes.equals(VIDEO)).toBe(true);
  });

  it('a connection dropped mid-chunk continues from what the session kept, without re-sending it', async () => {
    fake.script('chunk', { kind: 'pass' }, { kind: 'drop', persist: true });
    const { req } = job();
    const { published } = await run(adapter(), req);
    expect(published.ok).toBe(true);
    expect(kinds()).toEqual(['chunk', 'chunk', 'status', 'chunk']);
    expect(fake.sessionRequests[3]?.contentRange).toBe(`bytes ${2 * CHUNK}-${VIDEO.length - 1}/${VIDEO.length}`);
    expect(fake.posts).toHaveLength(1);
    expect(fake.posts[0]?.bytes.equals(VIDEO)).toBe(true);
  });

  it('a run taken over after a crash asks the session first, then continues where it stands', async () => {
    // The first run's chunk arrived but its answer was lost, and it gave up (no resumes left).
    fake.script('chunk', { kind: 'drop', persist: true });
    const { req } = job();
    const first = adapter({ resumeAttempts: 0 });
    const submitted = await first.submit(req);
    if (!submitted.ok) throw new Error('submit failed');
    expect(await first.publish(req, submitted.containerId)).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });

    const published = await adapter().publish(req, submitted.containerId);
    expect(published.ok).toBe(true);
    expect(kinds()).toEqual(['chunk', 'status', 'chunk', 'chunk']);
    expect(fake.sessionRequests[2]?.contentRange).toBe(`bytes ${CHUNK}-${2 * CHUNK - 1}/${VIDEO.length}`);
    expect(fake.posts).toHaveLength(1);
    expect(fake.posts[0]?.bytes.equals(VIDEO)).toBe(true);
  });

  it('gives up (retryable) after a few broken chunks in one call, and an expired session is not retried', async () => {
    const broken: FakeScript = { kind: 'error', status: 503 };
    fake.script('chunk', broken, broken, broken, broken);
    const { req } = job();
    const a = adapter();
    const submitted = await a.submit(req);
    if (!submitted.ok) throw new Error('submit failed');
    expect(await a.publish(req, submitted.containerId)).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    expect(kinds()).toEqual(['chunk', 'status', 'chunk', 'status', 'chunk', 'status', 'chunk']);

    for (const s of fake.sessions) s.expired = true;
    expect(await a.publish(req, submitted.containerId)).toMatchObject({ ok: false, code: 'upstream_unknown', retryable: false, message: YOUTUBE_MESSAGES.sessionGone });
    expect(fake.posts).toHaveLength(0);
  });
});

describe('youtube adapter: error table', () => {
  // One case per row of YOUTUBE_ERROR_TABLE (the OAuth rows are covered above), through the fake's real shapes.
  const cases: Array<{ name: string; arrange(f: YoutubeFake, r: PublishRequest): PublishRequest; code: JobErrorCode; retryable: boolean; message?: string }> = [
    { name: 'no answer (dropped connection)', arrange: (f, r) => (f.script('initiate', { kind: 'drop' }), r), code: 'upstream_5xx', retryable: true },
    { name: '401 youtubeSignupRequired', arrange: (f, r) => (f.script('initiate', { kind: 'error', status: 401, reason: 'youtubeSignupRequired' }), r), code: 'permission_revoked', retryable: false, message: YOUTUBE_MESSAGES.noChannel },
    { name: '403 insufficientPermissions (scope removed)', arrange: (f, r) => (f.accessTokens.set(f.token, READONLY_SCOPE), r), code: 'permission_revoked', retryable: false },
    { name: '403 authenticatedUserAccountSuspended', arrange: (f, r) => (f.script('initiate', { kind: 'error', status: 403, reason: 'authenticatedUserAccountSuspended' }), r), code: 'permission_revoked', retryable: false },
    { name: '403 quotaExceeded', arrange: (f, r) => (f.script('initiate', { kind: 'error', status: 403, reason: 'quotaExceeded' }), r), code: 'quota_exceeded', retryable: false },
    { name: '400 uploadLimitExceeded', arrange: (f, r) => (f.script('initiate', { kind: 'error', status: 400, reason: 'uploadLimitExceeded' }), r), code: 'quota_exceeded', retryable: false },
    { name: '403 rateLimitExceeded', arrange: (f, r) => (f.script('initiate', { kind: 'error', status: 403, reason: 'rateLimitExceeded' }), r), code: 'upstream_5xx', retryable: true },
    { name: '403 userRateLimitExceeded', arrange: (f, r) => (f.script('initiate', { kind: 'error', status: 403, reason: 'userRateLimitExceeded' }), r), code: 'upstream_5xx', retryable: true },
    { name: '400 invalidTitle (the fake refuses "<")', arrange: (_f, r) => ({ ...r, title: 'A <b>bold</b> launch' }), code: 'upstream_unknown', retryable: false, message: YOUTUBE_MESSAGES.metadata },
    { name: '400 invalidDescription', arrange: (f, r) => (f.script('initiate', { kind: 'error', status: 400, reason: 'invalidDescription' }), r), code: 'upstream_unknown', retryable: false, message: YOUTUBE_MESSAGES.metadata },
    { name: '400 invalidTags', arrange: (f, r) => (f.script('initiate', { kind: 'error', status: 400, reason: 'invalidTags' }), r), code: 'upstream_unknown', retryable: false, message: YOUTUBE_MESSAGES.metadata },
    { name: '400 invalidCategoryId', arrange: (f, r) => (f.script('initiate', { kind: 'error', status: 400, reason: 'invalidCategoryId' }), r), code: 'upstream_unknown', retryable: false, message: YOUTUBE_MESSAGES.metadata },
    { name: '400 badContent (the fake refuses text/plain)', arrange: (_f, r) => ({ ...r, media: [{ url: 'https://media.example/a.txt', sizeBytes: 1, contentType: 'text/plain' }] }), code: 'media_unsupported_format', retryable: false },
    { name: '400 mediaBodyRequired', arrange: (f, r) => (f.script('initiate', { kind: 'error', status: 400, reason: 'mediaBodyRequired' }), r), code: 'media_unsupported_format', retryable: false },
    { name: '413 too large', arrange: (f, r) => (f.script('initiate', { kind: 'error', status: 413, reason: 'uploadTooLarge' }), r), code: 'media_too_large', retryable: false },
    { name: '401 authError (token expired)', arrange: (f, r) => (f.accessTokens.clear(), r), code: 'token_expired', retryable: false },
    { name: '429', arrange: (f, r) => (f.script('initiate', { kind: 'error', status: 429, reason: 'rateLimitExceeded2' }), r), code: 'upstream_5xx', retryable: true },
    { name: '503 backendError', arrange: (f, r) => (f.script('initiate', { kind: 'error', status: 503, reason: 'backendError' }), r), code: 'upstream_5xx', retryable: true },
    { name: 'an undocumented 400', arrange: (f, r) => (f.script('initiate', { kind: 'error', status: 400, reason: 'somethingNew' }), r), code: 'upstream_unknown', retryable: false },
  ];

  it.each(cases)('submit maps $name', async ({ arrange, code, retryable, message }) => {
    const req = arrange(fake, job().req);
    const result = await adapter().submit(req);
    expect(result).toEqual({ ok: false, code, retryable, message: message ?? JOB_ERROR_MESSAGES[code] });
    expect(JSON.stringify(result)).not.toContain(RAW_TEXT);
    expect(fake.sessions).toHaveLength(0);
  });

  it('has a sample for every row, each matched by that row first', () => {
    const e = (status: number, reasons: string[] = [], oauthError: string | null = null) => ({ status, reasons, oauthError });
    const samples: Array<[string, ReturnType<typeof e>]> = [
      ['no answer (network error or timeout)', e(0)],
      ['token endpoint invalid_grant', e(400, [], 'invalid_grant')],
      ['token endpoint refuses our client', e(401, [], 'invalid_client')],
      ['youtubeSignupRequired', e(401, ['youtubeSignupRequired'])],
      ['permission or account gone', e(403, ['forbidden'])],
      ['daily quota or upload cap', e(403, ['quotaExceeded'])],
      ['rate limit (back off)', e(403, ['userRateLimitExceeded'])],
      ['invalid metadata', e(400, ['invalidTags'])],
      ['media missing or of an unsupported type', e(400, ['mediaBodyRequired'])],
      ['file too large', e(413)],
      ['401 (authError)', e(401, ['authError'])],
      ['408 / 429 / 5xx', e(502)],
      ['anything else', e(409, ['conflict'])],
    ];
    expect(samples.map(([name]) => name)).toEqual(YOUTUBE_ERROR_TABLE.map((r) => r.name));
    for (const [name, sample] of samples) expect(YOUTUBE_ERROR_TABLE.find((r) => r.matches(sample))?.name).toBe(name);
  });

  it('logs the raw body and returns only our words', async () => {
    fake.script('initiate', { kind: 'error', status: 403, reason: 'quotaExceeded' });
    await adapter().submit(job().req);
    expect(JSON.stringify(logs)).toContain(RAW_TEXT);
  });

  it('maps an error on a chunk too (401 mid-upload), keeping the session for after the reconnect', async () => {
    fake.script('chunk', { kind: 'pass' }, { kind: 'error', status: 401, reason: 'authError' });
    const a = adapter();
    const { req, state } = job();
    const submitted = await a.submit(req);
    if (!submitted.ok) throw new Error('submit failed');
    expect(await a.publish(req, submitted.containerId)).toMatchObject({ ok: false, code: 'token_expired', retryable: false });
    expect(state.progress).toMatchObject({ offset: CHUNK });
    expect(await a.publish(req, submitted.containerId)).toMatchObject({ ok: true });
    expect(kinds()).toEqual(['chunk', 'chunk', 'status', 'chunk', 'chunk']);
    expect(fake.posts).toHaveLength(1);
  });
});
