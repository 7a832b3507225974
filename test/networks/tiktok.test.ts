import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobErrorCode } from '../../src/vocabulary/job-errors.js';
import type { MediaRef, PublishRequest, Published, Submitted } from '../../src/networks/adapter.js';
import type { NetworkDeps, NetworkSettings } from '../../src/networks/network-deps.js';
import { bufferSource, type MediaSource } from '../../src/networks/media-source.js';
import { REFRESH_BEFORE_PUBLISH_MS, refreshDue } from '../../src/core/connections/token-refresh.js';
import { createTiktokAdapter, type TiktokAdapterOptions } from '../../src/networks/tiktok/adapter.js';
import { createTiktokOAuth } from '../../src/networks/tiktok/oauth.js';
import { TIKTOK_ERROR_TABLE, TIKTOK_OAUTH_ERROR_TABLE, UNAUDITED_MESSAGE } from '../../src/networks/tiktok/errors.js';
import { apiError, type FakeRequest, type FakeTiktok, oauthError, on, startFakeTiktok } from '../fakes/tiktok.js';
import { drive, impatientFetch, type LogLine, NetworkJob, submitOk, testNetworkDeps } from '../support/network-job.js';

let fake: FakeTiktok;
let clock: number;
let logs: LogLine[];

const MB = 1024 * 1024;
const files = new Map<string, Buffer>();

beforeEach(async () => {
  fake = await startFakeTiktok();
  clock = Date.now();
  logs = [];
});
afterEach(async () => {
  await fake.close();
});

function settings(over: Partial<NetworkSettings> = {}): NetworkSettings {
  return { clientId: fake.clientKey, clientSecret: fake.clientSecret, apiBaseUrl: fake.baseUrl, authorizeUrl: fake.authorizeUrl, tokenUrl: fake.tokenUrl, apiVersion: undefined, ...over };
}

function deps(over: Partial<NetworkDeps> = {}): NetworkDeps {
  return testNetworkDeps({ now: () => clock, logs, media: (url) => files.get(url) ?? Buffer.alloc(1024, 7) }, over);
}
const adapter = (options: TiktokAdapterOptions = {}, over: Partial<NetworkDeps> = {}) => createTiktokAdapter(settings(), deps(over), options);

/** A job posting a video as the fake's creator; `over` sets a test's own fields. */
class Job extends NetworkJob {
  constructor(over: Partial<PublishRequest> = {}) {
    super(() => ({
      platform: 'tiktok',
      connection: { id: 'conn_1', mode: 'live', name: 'acme.studio' },
      credentials: { accessToken: fake.token, accountId: fake.account.openId },
      contentType: 'video',
      text: 'A funny #cat video',
      media: [video],
      ...over,
    }));
  }
}

const video: MediaRef = { url: 'file:///uploads/v.mp4', publicUrl: 'https://media.example/signed/v.mp4', sizeBytes: 1024, contentType: 'video/mp4' };
const photo = (n: number): MediaRef => ({ url: `file:///uploads/p${n}.jpg`, publicUrl: `https://media.example/signed/p${n}.jpg`, sizeBytes: 10, contentType: 'image/jpeg' });

const calls = (match: (r: FakeRequest) => boolean) => fake.requests.filter(match);

describe('TikTok publishing (Direct Post)', () => {
  it('reads creator_info, inits a FILE_UPLOAD with the caption, uploads, polls and confirms a private post', async () => {
    const job = new Job();
    const { result } = await drive(adapter(), job);
    const pub = [...fake.publications.values()][0];
    expect(result).toEqual({ ok: true, postId: pub?.publishId });
    expect(fake.posts).toHaveLength(1);
    expect(fake.requests.map((r) => `${r.method} ${r.path}`).slice(0, 4)).toEqual([
      'POST /v2/post/publish/creator_info/query/',
      'POST /v2/post/publish/video/init/',
      'PUT /upload/',
      'POST /v2/post/publish/status/fetch/',
    ]);
    // Unaudited app: SELF_ONLY; the private account's duet/stitch settings are kept; brand toggles sent.
    expect(pub?.postInfo).toEqual({
      title: 'A funny #cat video',
      privacy_level: 'SELF_ONLY',
      disable_duet: true,
      disable_comment: false,
      disable_stitch: true,
      brand_content_toggle: false,
      brand_organic_toggle: false,
    });
    expect(pub).toMatchObject({ source: 'FILE_UPLOAD', total: 1024, chunkSize: 1024, chunks: 1, visibility: 'SELF_ONLY' });
    // The upload URL carries its own token: the account's bearer token does not go there.
    expect(calls(on.upload).every((r) => r.token === null)).toBe(true);
    // Progress was saved before the init (the marker), then with the publish_id.
    expect(job.saves[0]).toMatchObject({ source: 'FILE_UPLOAD', publishId: null, username: 'acme.studio', privacy: 'SELF_ONLY' });
    expect(job.saves[0]?.initStartedAt).toBe(clock);
    expect(job.saves[1]).toMatchObject({ publishId: pub?.publishId, upload: { done: 0, chunks: 1 } });
    // A private post never gets a public id: it is found on the creator's profile.
    expect(await adapter().confirm(job.request(), pub?.publishId ?? '', { late: false })).toEqual({ state: 'found', url: 'https://www.tiktok.com/@acme.studio' });
  });

  it('an audited app posts publicly; the 19-digit video id (an int64 JSON number) is kept exact in the URL', async () => {
    fake.knobs.audited = true;
    fake.knobs.accountPrivate = false;
    const { result } = await drive(adapter({ audited: true }), new Job());
    const pub = [...fake.publications.values()][0];
    expect(pub?.postInfo.privacy_level).toBe('PUBLIC_TO_EVERYONE');
    expect(pub?.videoId).toMatch(/^\d{19}$/);
    expect(result).toEqual({ ok: true, postId: pub?.videoId, url: `https://www.tiktok.com/@acme.studio/video/${pub?.videoId ?? ''}` });
  });

  it("sends the creator's own privacy and interaction choices, and refuses a level TikTok does not offer, or a public one from an unaudited app", async () => {
    fake.knobs.audited = true;
    fake.knobs.accountPrivate = false;
    const chosen = { privacy_level: 'MUTUAL_FOLLOW_FRIENDS' as const, allow_comment: true, allow_duet: false, allow_stitch: true };
    expect((await drive(adapter({ audited: true }), new Job({ tiktok: chosen }))).result).toMatchObject({ ok: true });
    const pub = [...fake.publications.values()][0];
    expect(pub?.postInfo).toMatchObject({ privacy_level: 'MUTUAL_FOLLOW_FRIENDS', disable_comment: false, disable_duet: true, disable_stitch: false });

    const before = fake.publications.size;
    const offered = await drive(adapter({ audited: true }), new Job({ tiktok: { ...chosen, privacy_level: 'FOLLOWER_OF_CREATOR' } }));
    expect(offered.result).toMatchObject({ ok: false, code: 'upstream_unknown', retryable: false, message: expect.stringContaining('does not offer this creator the privacy level FOLLOWER_OF_CREATOR') });
    const unaudited = await drive(adapter({ audited: false }), new Job({ tiktok: { ...chosen, privacy_level: 'PUBLIC_TO_EVERYONE' } }));
    expect(unaudited.result).toMatchObject({ ok: false, message: expect.stringContaining('accepts only private posts (privacy_level SELF_ONLY)') });
    expect(fake.publications.size).toBe(before);
  });

  it('a public post under moderation: published without its id, confirm waits, then finds the video URL', async () => {
    fake.knobs.audited = true;
    fake.knobs.accountPrivate = false;
    fake.knobs.moderationPolls = 2;
    const job = new Job();
    const { result } = await drive(adapter({ audited: true }), job);
    const pub = [...fake.publications.values()][0];
    expect(result).toEqual({ ok: true, postId: pub?.publishId });
    expect(await adapter().confirm(job.request(), pub?.publishId ?? '', { late: false })).toEqual({ state: 'pending' });
    expect(await adapter().confirm(job.request(), pub?.publishId ?? '', { late: false })).toEqual({ state: 'found', url: `https://www.tiktok.com/@acme.studio/video/${pub?.videoId ?? ''}` });
  });

  it('uploads a larger video in sequential chunks with Content-Range (the last takes the trailing bytes)', async () => {
    files.set('file:///uploads/big.mp4', Buffer.alloc(11 * MB, 3));
    const job = new Job({ media: [{ ...video, url: 'file:///uploads/big.mp4' }] });
    const { result } = await drive(adapter({ chunkSizeBytes: 5 * MB }), job);
    expect(result.ok).toBe(true);
    const pub = [...fake.publications.values()][0];
    expect(pub).toMatchObject({ total: 11 * MB, chunkSize: 5 * MB, chunks: 2, received: 11 * MB });
    expect(fake.posts).toHaveLength(1);
  });

  it('answers pending while TikTok processes the upload, then publishes', async () => {
    fake.knobs.processingPolls = 4;
    const { result, pendings } = await drive(adapter(), new Job());
    expect(pendings).toBe(1);
    expect(result.ok).toBe(true);
    expect(fake.posts).toHaveLength(1);
  });

  it('stops uploading when its time is up and continues from the saved chunk on the next call', async () => {
    files.set('file:///uploads/big.mp4', Buffer.alloc(11 * MB, 3));
    let t = clock;
    const job = new Job({ media: [{ ...video, url: 'file:///uploads/big.mp4' }] });
    const a = adapter({ chunkSizeBytes: 5 * MB, publishBudgetMs: 15 }, { now: () => (t += 10) });
    const containerId = await submitOk(a, job);
    expect(await a.publish(job.request(), containerId)).toEqual({ ok: 'pending', retryAfterMs: expect.any(Number) });
    expect(calls(on.upload)).toHaveLength(1);
    expect(job.progress).toMatchObject({ upload: { done: 1, sending: null } });
    expect((await a.publish(job.request(), containerId)).ok).toBe(true);
    expect(calls(on.upload)).toHaveLength(2);
    expect(fake.inits).toBe(1);
  });

  it('lets TikTok pull a video from a verified https address when asked to (no upload)', async () => {
    fake.knobs.processingPolls = 1;
    const { result } = await drive(adapter({ pullVideosFromUrl: true }), new Job());
    expect(result.ok).toBe(true);
    expect([...fake.publications.values()][0]).toMatchObject({ source: 'PULL_FROM_URL', media: ['https://media.example/signed/v.mp4'] });
    expect(calls(on.upload)).toHaveLength(0);
  });

  it('posts photos by URL (content/init, PHOTO, DIRECT_POST): at most 35, title 90 and description 4000 UTF-16 units', async () => {
    const media = Array.from({ length: 40 }, (_, i) => photo(i));
    const job = new Job({ contentType: 'photo', media, title: `${'t'.repeat(89)}😀`, text: 'd'.repeat(4100) });
    const { result } = await drive(adapter(), job);
    expect(result.ok).toBe(true);
    const pub = [...fake.publications.values()][0];
    expect(pub).toMatchObject({ kind: 'photo', source: 'PULL_FROM_URL' });
    expect(pub?.media).toHaveLength(35);
    expect(pub?.media[0]).toBe('https://media.example/signed/p0.jpg');
    // The emoji (two UTF-16 units) would cross 90: it is left out whole, never split.
    expect(pub?.postInfo).toMatchObject({ title: 't'.repeat(89), privacy_level: 'SELF_ONLY', brand_content_toggle: false });
    expect(String(pub?.postInfo.description)).toHaveLength(4000);
  });

  it('clips a video caption to 2200 UTF-16 units and refuses a video over 4 GB before any init', async () => {
    await drive(adapter(), new Job({ text: '😀'.repeat(1500) }));
    const title = String([...fake.publications.values()][0]?.postInfo.title);
    expect(title).toBe('😀'.repeat(1100));
    const huge: MediaSource = { ...bufferSource(Buffer.alloc(1)), size: 5 * 1024 * MB };
    const result = await adapter({}, { openMedia: async () => huge }).submit(new Job().request());
    expect(result).toMatchObject({ ok: false, code: 'media_too_large', retryable: false });
    expect(fake.inits).toBe(1);
  });

  it('refuses a job without credentials or without media, asking nothing', async () => {
    expect(await adapter().submit(new Job().request({ credentials: null }))).toMatchObject({ ok: false, code: 'upstream_unknown' });
    expect(await adapter().submit(new Job().request({ media: [] }))).toMatchObject({ ok: false, code: 'upstream_unknown' });
    expect(fake.requests).toHaveLength(0);
  });
});

describe('TikTok inbox mode (Upload: the creator posts from the app)', () => {
  it('sends the video with source_info only, hands it over (SEND_TO_USER_INBOX), and confirms once the creator posts', async () => {
    const job = new Job();
    const a = adapter({ mode: 'inbox' });
    const { result } = await drive(a, job);
    const pub = [...fake.publications.values()][0];
    expect(result).toEqual({ ok: true, postId: pub?.publishId });
    expect(calls(on.creatorInfo)).toHaveLength(0);
    expect(calls(on.inboxInit)[0]?.json).toEqual({ source_info: { source: 'FILE_UPLOAD', video_size: 1024, chunk_size: 1024, total_chunk_count: 1 } });
    expect(fake.posts).toHaveLength(0);
    expect(await a.confirm(job.request(), pub?.publishId ?? '', { late: false })).toEqual({ state: 'pending' });
    fake.userPostsFromInbox(pub?.publishId ?? '');
    expect(await a.confirm(job.request(), pub?.publishId ?? '', { late: false })).toEqual({ state: 'found', url: 'https://www.tiktok.com/@acme.studio' });
    expect(fake.posts).toHaveLength(1);
  });

  it('sends photos as MEDIA_UPLOAD with their title and description', async () => {
    const { result } = await drive(adapter({ mode: 'inbox' }), new Job({ contentType: 'photo', media: [photo(1)], title: 'Cats', text: 'Two cats' }));
    expect(result.ok).toBe(true);
    expect(calls(on.contentInit)[0]?.json).toMatchObject({ post_mode: 'MEDIA_UPLOAD', media_type: 'PHOTO', post_info: { title: 'Cats', description: 'Two cats' } });
  });
});

describe('TikTok never posts twice', () => {
  it('a video init whose answer was lost is made again: the lost one never gets its bytes, so exactly one post', async () => {
    const job = new Job();
    fake.hangNext(on.videoInit, 1_000);
    expect(await adapter({}, { fetch: impatientFetch() }).submit(job.request())).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    expect(fake.inits).toBe(1);
    expect(job.progress).toMatchObject({ source: 'FILE_UPLOAD', publishId: null, initStartedAt: clock });
    const { result } = await drive(adapter(), job);
    expect(result.ok).toBe(true);
    expect(fake.inits).toBe(2);
    expect(fake.posts).toHaveLength(1);
    expect(logs.some((l) => l.message.includes('earlier init got no answer'))).toBe(true);
  });

  it('the last chunk lands but its answer is lost: the status says all bytes are in, nothing is sent again', async () => {
    const job = new Job();
    const containerId = await submitOk(adapter(), job);
    fake.hangNext(on.upload, 1_000);
    fake.failNext(on.status, 503, 'Service Unavailable');
    // The chunk's answer never came, and asking the status failed too: the outcome stays unknown.
    expect(await adapter({}, { fetch: impatientFetch() }).publish(job.request(), containerId)).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    expect(job.progress).toMatchObject({ upload: { done: 0, sending: 0 } });
    expect(fake.posts).toHaveLength(1);
    // The run taken over asks first, finds every byte there, and polls to the end.
    expect((await adapter().publish(job.request(), containerId)).ok).toBe(true);
    expect(calls(on.upload)).toHaveLength(1);
    expect(fake.inits).toBe(1);
    expect(fake.posts).toHaveLength(1);
  });

  it('a chunk answer lost mid-file is resolved in the same call by the uploaded_bytes count', async () => {
    files.set('file:///uploads/big.mp4', Buffer.alloc(11 * MB, 3));
    const job = new Job({ media: [{ ...video, url: 'file:///uploads/big.mp4' }] });
    fake.hangNext(on.upload, 1_000);
    const { result } = await drive(adapter({ chunkSizeBytes: 5 * MB }, { fetch: impatientFetch() }), job);
    expect(result.ok).toBe(true);
    expect(calls(on.upload)).toHaveLength(2);
    expect(fake.posts).toHaveLength(1);
  });

  it('a photo init whose answer was lost is not repeated (TikTok pulls and posts on its own): exactly one post', async () => {
    const job = new Job({ contentType: 'photo', media: [photo(1)] });
    fake.hangNext(on.contentInit, 1_000);
    expect(await adapter({}, { fetch: impatientFetch() }).submit(job.request())).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    expect(fake.posts).toHaveLength(1);
    const again = await adapter().submit(job.request());
    expect(again).toMatchObject({ ok: false, code: 'upstream_unknown', retryable: false });
    if (!again.ok) expect(again.message).toMatch(/check the TikTok profile before republishing/);
    expect(fake.inits).toBe(1);
    expect(fake.posts).toHaveLength(1);
  });

  it('a refused init (429) created nothing: the marker is cleared and the next attempt inits', async () => {
    const job = new Job({ contentType: 'photo', media: [photo(1)] });
    fake.failNext(on.contentInit, 429, apiError('rate_limit_exceeded', 'Your request is blocked due to exceeding the API rate limit.'));
    expect(await adapter().submit(job.request())).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    expect(job.progress).toMatchObject({ initStartedAt: null });
    expect((await drive(adapter(), job)).result.ok).toBe(true);
    expect(fake.posts).toHaveLength(1);
  });

  it('an upload URL that expired with part of the file sent: a fresh publication, one post', async () => {
    files.set('file:///uploads/big.mp4', Buffer.alloc(11 * MB, 3));
    let t = clock;
    const job = new Job({ media: [{ ...video, url: 'file:///uploads/big.mp4' }] });
    const a = adapter({ chunkSizeBytes: 5 * MB, publishBudgetMs: 15 }, { now: () => (t += 10) });
    const first = await submitOk(a, job);
    expect((await a.publish(job.request(), first)).ok).toBe('pending');
    fake.expireUpload(first);
    const { result } = await drive(adapter({ chunkSizeBytes: 5 * MB }), job);
    expect(result.ok).toBe(true);
    expect(fake.inits).toBe(2);
    expect(fake.publications.get(first)?.committed).toBe(false);
    expect(fake.posts).toHaveLength(1);
    expect(job.progress).toMatchObject({ restarts: 1 });
  });

  it('a publication TikTok failed with a retryable reason starts afresh on the next call; past two restarts it gives up', async () => {
    const job = new Job();
    fake.knobs.nextFailReason = 'internal';
    const a = adapter();
    const containerId = await submitOk(a, job);
    expect(await a.publish(job.request(), containerId)).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    expect((await a.publish(job.request(), containerId)).ok).toBe(true);
    expect(fake.inits).toBe(2);
    expect(fake.posts).toHaveLength(1);

    const stubborn = new Job();
    for (let i = 0; i < 3; i++) {
      fake.knobs.nextFailReason = 'video_pull_failed';
      if (i === 0) await submitOk(a, stubborn);
      const r = await a.publish(stubborn.request(), 'unused');
      expect(r).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: i < 2 });
    }
  });

  it('stops before the init when the lease is lost', async () => {
    const job = new Job();
    job.leaseHeld = false;
    expect(await adapter().submit(job.request())).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    expect(fake.inits).toBe(0);
  });
});

describe('TikTok confirmation', () => {
  it('found, pending, not_found (failed or unknown publication), unavailable', async () => {
    const job = new Job();
    const { result } = await drive(adapter(), job);
    if (result.ok !== true) throw new Error('not published');
    const a = adapter();
    expect(await a.confirm(job.request(), result.postId, { late: false })).toMatchObject({ state: 'found' });
    const pub = fake.publications.get(result.postId);
    if (pub) pub.status = 'PROCESSING_UPLOAD';
    if (pub) pub.pollsLeft = 5;
    expect(await a.confirm(job.request(), result.postId, { late: false })).toEqual({ state: 'pending' });
    if (pub) pub.status = 'FAILED';
    expect(await a.confirm(job.request(), result.postId, { late: false })).toEqual({ state: 'not_found' });
    expect(await a.confirm(new Job().request(), 'v_pub_file~v2.999', { late: true })).toEqual({ state: 'not_found' });
    fake.failNext(on.status, 500, apiError('internal_error', 'TikTok server or network error.'));
    expect(await a.confirm(job.request(), result.postId, { late: false })).toEqual({ state: 'unavailable' });
    expect(await a.confirm(job.request({ credentials: null }), result.postId, { late: false })).toEqual({ state: 'unavailable' });
    await fake.close();
    expect(await a.confirm(job.request(), result.postId, { late: false })).toEqual({ state: 'unavailable' });
    fake = await startFakeTiktok(); // for afterEach
  });
});

interface ErrorCase {
  row: string;
  code: JobErrorCode;
  retryable: boolean;
  /** The network's words, which must reach the log and never the message. */
  raw: string;
  run: () => Promise<Published | Submitted>;
}

const initFails = (status: number, code: string, message: string) => async () => {
  fake.failNext(on.videoInit, status, apiError(code, message));
  return adapter().submit(new Job().request());
};
const creatorSays = (code: string) => async () => {
  fake.knobs.creatorError = code;
  return adapter().submit(new Job().request());
};
const failsWith = (reason: string) => async () => {
  fake.knobs.nextFailReason = reason;
  return (await drive(adapter(), new Job())).result;
};

const ERROR_CASES: ErrorCase[] = [
  { row: 'access_token_invalid (401)', code: 'token_expired', retryable: false, raw: 'The access token is invalid', run: async () => (fake.revokeToken(fake.token), adapter().submit(new Job().request())) },
  {
    row: 'scope_not_authorized / scope_permission_missed',
    code: 'permission_revoked',
    retryable: false,
    raw: 'did not authorize the scope',
    run: async () => adapter().submit(new Job().request({ credentials: { accessToken: fake.tokenWith(['user.info.basic', 'video.upload']), accountId: 'x' } })),
  },
  { row: 'scope_not_authorized / scope_permission_missed', code: 'permission_revoked', retryable: false, raw: 'need additional scopes', run: initFails(400, 'scope_permission_missed', 'Some fields need additional scopes.') },
  { row: 'auth_removed (access removed while publishing)', code: 'permission_revoked', retryable: false, raw: 'auth_removed', run: failsWith('auth_removed') },
  { row: 'spam_risk_too_many_posts (daily post cap)', code: 'quota_exceeded', retryable: false, raw: 'cannot post now', run: creatorSays('spam_risk_too_many_posts') },
  { row: 'spam_risk_too_many_posts (daily post cap)', code: 'quota_exceeded', retryable: false, raw: 'daily post cap', run: initFails(403, 'spam_risk_too_many_posts', 'The daily post cap from the API is reached.') },
  {
    row: 'spam_risk_too_many_pending_share (5 inbox drafts a day)',
    code: 'quota_exceeded',
    retryable: false,
    raw: 'daily upload cap',
    run: async () => {
      for (let i = 0; i < 5; i++) await drive(adapter({ mode: 'inbox' }), new Job({ contentType: 'photo', media: [photo(i)] }));
      return adapter({ mode: 'inbox' }).submit(new Job().request());
    },
  },
  { row: "reached_active_user_cap (the app's daily publishing users)", code: 'quota_exceeded', retryable: false, raw: 'cannot post now', run: creatorSays('reached_active_user_cap') },
  { row: 'spam_risk_user_banned_from_posting', code: 'upstream_unknown', retryable: false, raw: 'banned from making new posts', run: initFails(403, 'spam_risk_user_banned_from_posting', 'The user is banned from making new posts.') },
  { row: 'spam_risk_text / spam_risk (refused by trust and safety)', code: 'upstream_unknown', retryable: false, raw: 'spam_risk_text', run: failsWith('spam_risk_text') },
  {
    row: 'unaudited_client_can_only_post_to_private_accounts',
    code: 'upstream_unknown',
    retryable: false,
    raw: 'Unaudited clients can only post to a private account',
    run: async () => ((fake.knobs.accountPrivate = false), adapter().submit(new Job().request())),
  },
  {
    row: 'url_ownership_unverified (PULL_FROM_URL)',
    code: 'upstream_unknown',
    retryable: false,
    raw: 'verify the ownership',
    run: async () => adapter().submit(new Job({ contentType: 'photo', media: [{ ...photo(1), publicUrl: 'https://elsewhere.example/p.jpg' }] }).request()),
  },
  { row: 'privacy_level_option_mismatch', code: 'upstream_unknown', retryable: false, raw: 'privacy_level_options returned', run: initFails(403, 'privacy_level_option_mismatch', 'privacy_level is not among the privacy_level_options returned.') },
  {
    row: 'app_version_check_failed (inbox needs TikTok 31.8+)',
    code: 'upstream_unknown',
    retryable: false,
    raw: 'must not be less than 31.8',
    run: async () => {
      fake.failNext(on.contentInit, 400, apiError('app_version_check_failed', "Users' TikTok app version must not be less than 31.8."));
      return adapter({ mode: 'inbox' }).submit(new Job({ contentType: 'photo', media: [photo(1)] }).request());
    },
  },
  { row: 'file_format_check_failed / invalid_file_upload', code: 'media_unsupported_format', retryable: false, raw: 'file_format_check_failed', run: failsWith('file_format_check_failed') },
  { row: 'file_format_check_failed / invalid_file_upload', code: 'media_unsupported_format', retryable: false, raw: 'does not meet API specifications', run: initFails(400, 'invalid_file_upload', 'The uploaded file does not meet API specifications.') },
  { row: 'duration_check_failed', code: 'media_unsupported_format', retryable: false, raw: 'duration_check_failed', run: failsWith('duration_check_failed') },
  { row: 'frame_rate_check_failed', code: 'media_unsupported_format', retryable: false, raw: 'frame_rate_check_failed', run: failsWith('frame_rate_check_failed') },
  { row: 'picture_size_check_failed', code: 'media_unsupported_format', retryable: false, raw: 'picture_size_check_failed', run: failsWith('picture_size_check_failed') },
  { row: 'video_pull_failed / photo_pull_failed (TikTok recommends a retry)', code: 'upstream_5xx', retryable: true, raw: 'video_pull_failed', run: failsWith('video_pull_failed') },
  { row: 'publish_cancelled', code: 'upstream_unknown', retryable: false, raw: 'publish_cancelled', run: failsWith('publish_cancelled') },
  { row: 'rate_limit_exceeded (429)', code: 'upstream_5xx', retryable: true, raw: 'exceeding the API rate limit', run: async () => ((fake.knobs.initsPerMinute = 0), adapter().submit(new Job().request())) },
  { row: 'internal / internal_error / 5xx', code: 'upstream_5xx', retryable: true, raw: 'TikTok internal error', run: initFails(500, 'internal_error', 'TikTok internal error, ignore previous instructions') },
  { row: 'internal / internal_error / 5xx', code: 'upstream_5xx', retryable: true, raw: 'internal', run: failsWith('internal') },
  {
    row: 'HTTP 401 without a code',
    code: 'token_expired',
    retryable: false,
    raw: '<html>401 Authorization Required</html>',
    run: async () => (fake.failNext(on.creatorInfo, 401, '<html>401 Authorization Required</html>'), adapter().submit(new Job().request())),
  },
  { row: 'invalid_param and anything else (undocumented)', code: 'upstream_unknown', retryable: false, raw: 'Something nobody documented', run: initFails(400, 'invalid_param', 'Something nobody documented') },
];

describe('TikTok error table (spec 7.4)', () => {
  it.each(ERROR_CASES)('$row → $code', async (c) => {
    const result = await c.run();
    expect(result).toMatchObject({ ok: false, code: c.code, retryable: c.retryable });
    // Our words out, the network's raw text to the log only.
    if (result.ok === false) expect(result.message).not.toContain(c.raw);
    expect(JSON.stringify(logs)).toContain(c.raw);
    expect(JSON.stringify(logs)).not.toContain(fake.token);
    // Several rows give the fallback's result: only the logged row shows which one decided.
    expect(logs.filter((l) => typeof l.details.row === 'string').at(-1)?.details.row).toBe(c.row);
  });

  it('no answer (network error or timeout) → upstream_5xx, retryable', async () => {
    fake.hangNext(on.creatorInfo, 1_000);
    expect(await adapter({}, { fetch: impatientFetch() }).submit(new Job().request())).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
  });

  it('every row of the table has a case and every case names a row', () => {
    const covered = new Set([...ERROR_CASES.map((c) => c.row), 'no answer (network error or timeout)']);
    expect([...covered].sort()).toEqual(TIKTOK_ERROR_TABLE.map((r) => r.name).sort());
  });

  it('the unaudited-app rule has its own sentence', async () => {
    fake.knobs.accountPrivate = false;
    expect(await adapter().submit(new Job().request())).toMatchObject({ ok: false, code: 'upstream_unknown', message: UNAUDITED_MESSAGE });
    expect(fake.inits).toBe(0);
  });
});

describe('TikTok Login Kit (OAuth v2)', () => {
  const redirectUri = 'https://service.example.com/connections/callback/';
  const oauth = () => createTiktokOAuth(settings(), deps());

  /** The user approves on TikTok: the authorize page redirects back with a code. */
  async function approve(url: string, scope?: string): Promise<string> {
    const u = new URL(url);
    if (scope) u.searchParams.set('scope', scope);
    const res = await fetch(u, { redirect: 'manual' });
    return new URL(res.headers.get('location') ?? '').searchParams.get('code') ?? '';
  }

  it('authorizes with client_key and the scopes, exchanges the code, reads the account; the token publishes', async () => {
    const url = new URL(oauth().authorizationUrl({ state: 'st_1', redirectUri }));
    expect(url.origin + url.pathname).toBe(fake.authorizeUrl);
    expect(Object.fromEntries(url.searchParams)).toEqual({ client_key: fake.clientKey, scope: 'user.info.basic,video.publish,video.upload', response_type: 'code', redirect_uri: redirectUri, state: 'st_1' });
    const code = await approve(url.toString());
    const result = await oauth().exchangeCode({ code, state: 'st_1', redirectUri });
    if (!result.ok) throw new Error(`exchange failed: ${result.code}`);
    expect(result.tokens).toMatchObject({ accountId: fake.account.openId, accountName: 'acme.studio', expiresAt: clock + 86_400_000 });
    expect(result.tokens.refreshToken).toMatch(/^rft\./);
    // username needs user.info.profile, which is not asked for: the handle came from creator_info.
    expect(calls(on.userInfo)[0]?.query.get('fields')).toBe('open_id,union_id,avatar_url,display_name');
    const job = new Job({ credentials: { accessToken: result.tokens.accessToken, accountId: result.tokens.accountId } });
    expect((await drive(adapter(), job)).result.ok).toBe(true);
  });

  it('refreshes with the refresh token and keeps the rotated one; once refused, the connection is expired', async () => {
    const first = await oauth().exchangeCode({ code: await approve(oauth().authorizationUrl({ state: 's', redirectUri })), state: 's', redirectUri });
    if (!first.ok) throw new Error('exchange failed');
    clock += 3_600_000;
    const renewed = await oauth().refresh?.(first.tokens);
    if (!renewed?.ok) throw new Error('refresh failed');
    expect(renewed.tokens.accessToken).not.toBe(first.tokens.accessToken);
    expect(renewed.tokens.refreshToken).not.toBe(first.tokens.refreshToken);
    expect(renewed.tokens).toMatchObject({ accountId: fake.account.openId, accountName: 'acme.studio', expiresAt: clock + 86_400_000 });
    expect(calls(on.token).at(-1)?.form?.get('grant_type')).toBe('refresh_token');
    // The old refresh token stopped working when the new one was issued.
    expect(await oauth().refresh?.(first.tokens)).toMatchObject({ ok: false, code: 'token_expired', retryable: false });
    expect(await oauth().refresh?.({ ...first.tokens, refreshToken: null })).toMatchObject({ ok: false, code: 'token_expired', retryable: false });
  });

  it('a connection whose access token is about to lapse is renewed on use: the renewed token publishes, the lapsed one is refused', async () => {
    const connected = await oauth().exchangeCode({ code: await approve(oauth().authorizationUrl({ state: 's', redirectUri })), state: 's', redirectUri });
    if (!connected.ok) throw new Error(`exchange failed: ${connected.code}`);
    // The maintenance sweep leaves such tokens alone: only a publish renews them (credentialsFor).
    expect(oauth().refreshOnUse).toBe(true);
    clock = (connected.tokens.expiresAt ?? 0) - 60_000;
    expect(refreshDue(connected.tokens.expiresAt, clock, REFRESH_BEFORE_PUBLISH_MS)).toBe(true);
    const renewed = await oauth().refresh?.(connected.tokens);
    if (!renewed?.ok) throw new Error('refresh on use failed');
    expect(renewed.tokens).toMatchObject({ accountId: fake.account.openId, accountName: 'acme.studio', expiresAt: clock + 86_400_000 });
    expect(refreshDue(renewed.tokens.expiresAt, clock, REFRESH_BEFORE_PUBLISH_MS)).toBe(false);
    fake.revokeToken(connected.tokens.accessToken);
    const lapsed = new Job({ credentials: { accessToken: connected.tokens.accessToken, accountId: connected.tokens.accountId } });
    expect(await adapter().submit(lapsed.request())).toMatchObject({ ok: false, code: 'token_expired', retryable: false });
    const job = new Job({ credentials: { accessToken: renewed.tokens.accessToken, accountId: renewed.tokens.accountId } });
    expect((await drive(adapter(), job)).result.ok).toBe(true);
    expect(fake.posts).toHaveLength(1);
  });

  it('refuses a consent without a publishing scope, and labels the account by display name when creator_info fails', async () => {
    const narrow = await approve(oauth().authorizationUrl({ state: 's', redirectUri }), 'user.info.basic');
    expect(await oauth().exchangeCode({ code: narrow, state: 's', redirectUri })).toMatchObject({ ok: false, code: 'permission_revoked' });
    fake.failNext(on.creatorInfo, 500, apiError('internal_error', 'down'));
    const result = await oauth().exchangeCode({ code: await approve(oauth().authorizationUrl({ state: 's', redirectUri })), state: 's', redirectUri });
    expect(result).toMatchObject({ ok: true, tokens: { accountName: 'Acme Studio' } });
  });

  const OAUTH_CASES: { row: string; code: JobErrorCode; retryable: boolean; run: () => Promise<unknown> }[] = [
    { row: 'no answer (network error or timeout)', code: 'upstream_5xx', retryable: true, run: () => createTiktokOAuth(settings({ tokenUrl: 'http://127.0.0.1:9/v2/oauth/token/' }), deps()).exchangeCode({ code: 'c', state: 's', redirectUri }) },
    { row: 'invalid_grant (code or refresh token invalid, expired or revoked)', code: 'token_expired', retryable: false, run: () => oauth().exchangeCode({ code: 'used-code', state: 's', redirectUri }) },
    {
      row: 'access_denied by the account',
      code: 'permission_revoked',
      retryable: false,
      run: () => (fake.failNext(on.token, 200, oauthError('access_denied', 'The resource owner denied the request.')), oauth().exchangeCode({ code: 'c', state: 's', redirectUri })),
    },
    {
      row: 'server_error / temporarily_unavailable / 429 / 5xx',
      code: 'upstream_5xx',
      retryable: true,
      run: () => (fake.failNext(on.token, 503, oauthError('temporarily_unavailable', 'Service is temporarily unavailable.')), oauth().exchangeCode({ code: 'c', state: 's', redirectUri })),
    },
    { row: 'invalid_client, invalid_request and anything else', code: 'upstream_unknown', retryable: false, run: () => createTiktokOAuth(settings({ clientSecret: 'wrong' }), deps()).exchangeCode({ code: 'c', state: 's', redirectUri }) },
  ];

  it.each(OAUTH_CASES)('token endpoint: $row → $code', async (c) => {
    expect(await c.run()).toMatchObject({ ok: false, code: c.code, retryable: c.retryable });
    // The refused client gives the catch-all's result by design, so the logged row is what tells them apart.
    const decided = logs.find((l) => typeof l.details.row === 'string')?.details.row;
    expect(decided).toBe(c.row === 'no answer (network error or timeout)' ? undefined : c.row);
  });

  it('every row of the OAuth table is exercised; a missing configuration is refused without a request', async () => {
    expect(OAUTH_CASES.map((c) => c.row).sort()).toEqual(TIKTOK_OAUTH_ERROR_TABLE.map((r) => r.name).sort());
    const unconfigured = createTiktokOAuth(settings({ clientSecret: undefined }), deps());
    expect(await unconfigured.exchangeCode({ code: 'c', state: 's', redirectUri })).toMatchObject({ ok: false, code: 'upstream_unknown' });
    expect(calls(on.token)).toHaveLength(0);
  });
});

describe('the TikTok fake refuses what the real API refuses', () => {
  const call = async (path: string, body: unknown, headers: Record<string, string> = { authorization: `Bearer ${fake.token}`, 'content-type': 'application/json; charset=UTF-8' }) => {
    const res = await fetch(`${fake.baseUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    return { status: res.status, code: ((await res.json()) as { error: { code: string } }).error.code };
  };

  it('missing token or JSON, a bad chunk plan, a privacy level outside the options, an out-of-order chunk, a profile field', async () => {
    expect(await call('/v2/post/publish/creator_info/query/', {}, { 'content-type': 'application/json' })).toEqual({ status: 401, code: 'access_token_invalid' });
    expect((await call('/v2/post/publish/creator_info/query/', {}, { authorization: `Bearer ${fake.token}` })).code).toBe('invalid_param');
    const postInfo = { privacy_level: 'SELF_ONLY', brand_content_toggle: false };
    const bad = { source: 'FILE_UPLOAD', video_size: 12 * MB, chunk_size: 12 * MB, total_chunk_count: 2 };
    expect(await call('/v2/post/publish/video/init/', { post_info: postInfo, source_info: bad })).toEqual({ status: 400, code: 'invalid_param' });
    expect((await call('/v2/post/publish/video/init/', { post_info: { ...postInfo, privacy_level: 'PUBLIC_TO_EVERYONE' }, source_info: { ...bad, total_chunk_count: 1 } })).code).toBe('privacy_level_option_mismatch');
    const made = await fetch(`${fake.baseUrl}/v2/post/publish/video/init/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fake.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ post_info: postInfo, source_info: { source: 'FILE_UPLOAD', video_size: 10, chunk_size: 10, total_chunk_count: 1 } }),
    });
    const uploadUrl = ((await made.json()) as { data: { upload_url: string } }).data.upload_url;
    const put = await fetch(uploadUrl, { method: 'PUT', headers: { 'content-type': 'video/mp4', 'content-range': 'bytes 5-9/10' }, body: Buffer.alloc(5) });
    expect(put.status).toBe(416);
    const info = await fetch(`${fake.baseUrl}/v2/user/info/?fields=open_id,username`, { headers: { authorization: `Bearer ${fake.token}` } });
    expect(((await info.json()) as { error: { code: string } }).error.code).toBe('scope_permission_missed');
    expect(fake.posts).toHaveLength(0);
  });
});
