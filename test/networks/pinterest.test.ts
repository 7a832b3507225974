import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobErrorCode } from '../../src/vocabulary/job-errors.js';
import type { MediaRef, NetworkAdapter, PublishRequest } from '../../src/networks/adapter.js';
import { createPinterestAdapter } from '../../src/networks/pinterest/adapter.js';
import { createPinterestOAuth, PINTEREST_SCOPES } from '../../src/networks/pinterest/oauth.js';
import { PINTEREST_ERROR_TABLE, PINTEREST_OAUTH_ERROR_TABLE, PINTEREST_UPLOAD_ERROR_TABLE } from '../../src/networks/pinterest/errors.js';
import type { NetworkDeps, NetworkSettings } from '../../src/networks/network-deps.js';
import type { NetworkTokens } from '../../src/networks/network-oauth.js';
import { startFakePinterest, type FakeBoard, type FakePinterest, type ScriptedAnswer } from '../fakes/pinterest.js';
import { drive as driveJob, impatientFetch, type LogLine, NetworkJob, submitOk, testNetworkDeps } from '../support/network-job.js';

let fake: FakePinterest;
let board: FakeBoard;
let clock: number;
let logs: LogLine[];
const FILE_BYTES = Buffer.from('0123456789');

beforeEach(async () => {
  fake = await startFakePinterest();
  board = fake.addBoard('Recipes');
  clock = Date.now();
  logs = [];
});
afterEach(async () => {
  await fake.close();
});

function settings(over: Partial<NetworkSettings> = {}): NetworkSettings {
  return { clientId: fake.clientId, clientSecret: fake.clientSecret, apiBaseUrl: fake.apiBaseUrl, authorizeUrl: fake.authorizeUrl, tokenUrl: fake.tokenUrl, apiVersion: undefined, ...over };
}

const deps = (over: Partial<NetworkDeps> = {}) => testNetworkDeps({ now: () => clock, logs, media: () => FILE_BYTES }, over);

/** A job pinning a photo to the fake's board; `over` sets a test's own fields. */
class Job extends NetworkJob {
  constructor(over: Partial<PublishRequest> = {}) {
    super(() => ({
      platform: 'pinterest',
      connection: { id: 'conn_1', mode: 'live', name: 'acme_studio · Recipes' },
      credentials: { accessToken: fake.token, accountId: board.id },
      contentType: 'photo',
      text: 'Lemon tart, step by step',
      title: 'Lemon tart',
      media: [photo],
      ...over,
    }));
  }
}

const photo: MediaRef = { url: 'https://media.example/p.jpg', sizeBytes: 10, contentType: 'image/jpeg' };
const upload: MediaRef = { url: 'file:///data/media/m1.jpg', publicUrl: 'https://svc.example/media/m1?sig=abc', sizeBytes: 10, contentType: 'image/jpeg' };
const video: MediaRef = { url: 'file:///data/media/v1.mp4', publicUrl: 'https://svc.example/media/v1?sig=abc', sizeBytes: 10, contentType: 'video/mp4' };
const videoJob = (over: Partial<PublishRequest> = {}) => new Job({ contentType: 'video', media: [video], ...over });

/** Every failure these tests expect comes from publish: a refused submit throws rather than passing for one. */
const drive = (adapter: NetworkAdapter, job: NetworkJob) => driveJob(adapter, job, { submitMustSucceed: true });

const pinUrl = (id: string | undefined) => `https://www.pinterest.com/pin/${id ?? ''}/`;
const lookups = () => fake.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/pins') && r.path.startsWith('/v5/boards/')).length;
const redirectUri = 'https://svc.example/oauth/pinterest/callback';

async function connect(oauth = createPinterestOAuth(settings(), deps())) {
  const res = await fetch(oauth.authorizationUrl({ state: 'st_1', redirectUri }), { redirect: 'manual' });
  const code = new URL(res.headers.get('location') ?? '').searchParams.get('code') ?? '';
  return oauth.exchangeCode({ state: 'st_1', code, redirectUri });
}

describe('Pinterest OAuth', () => {
  it('sends the user to www.pinterest.com/oauth/ with our comma-separated scopes and state', async () => {
    const url = createPinterestOAuth(settings(), deps()).authorizationUrl({ state: 'st_1', redirectUri });
    expect(url.startsWith(`${fake.authorizeUrl}?`)).toBe(true);
    const res = await fetch(url, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const q = fake.authorizeRequests[0];
    expect(Object.fromEntries(q ?? [])).toEqual({ client_id: fake.clientId, redirect_uri: redirectUri, response_type: 'code', scope: 'boards:read,boards:write,pins:read,pins:write,user_accounts:read', state: 'st_1' });
    expect(PINTEREST_SCOPES).toHaveLength(5);
    expect(new URL(res.headers.get('location') ?? '').searchParams.get('state')).toBe('st_1');
  });

  it('exchanges the code (Basic auth, continuous refresh), reads the user and takes their first public board', async () => {
    fake.addBoard('Ads', { privacy: 'PROTECTED', is_ads_only: true });
    fake.addBoard('Private', { privacy: 'SECRET' });
    fake.boards.unshift({ id: '999000111', name: 'Team board', privacy: 'PUBLIC', is_ads_only: false, owner: 'someone_else' });
    const result = await connect();
    expect(result).toEqual({
      ok: true,
      tokens: { accessToken: expect.stringMatching(/^pina_/), refreshToken: expect.stringMatching(/^pinr_/), expiresAt: clock + 2_592_000_000, accountId: board.id, accountName: 'acme_studio · Recipes' },
    });
    const form = fake.tokenRequests[0];
    expect(form?.get('grant_type')).toBe('authorization_code');
    expect(form?.get('continuous_refresh')).toBe('true');
    expect(form?.get('client_secret')).toBeNull(); // the secret travels in the Basic header only
    // The new token publishes to the chosen board.
    if (!result.ok) throw new Error('connect failed');
    const job = new Job({ credentials: { accessToken: result.tokens.accessToken, accountId: result.tokens.accountId } });
    expect((await drive(createPinterestAdapter(settings(), deps()), job)).result.ok).toBe(true);
    expect(fake.pins[0]?.board_id).toBe(board.id);
  });

  it('creates a "Published" board when the user has none to post on', async () => {
    fake.boards.splice(0);
    fake.addBoard('Ads', { privacy: 'PROTECTED', is_ads_only: true });
    const result = await connect();
    const made = fake.boards.find((b) => b.name === 'Published');
    expect(made).toMatchObject({ privacy: 'PUBLIC', owner: fake.user.username });
    expect(result).toMatchObject({ ok: true, tokens: { accountId: made?.id, accountName: 'acme_studio · Published' } });
  });

  it('refuses a connection without the scopes needed to publish', async () => {
    const oauth = createPinterestOAuth(settings(), deps());
    const code = fake.issueCode(redirectUri, ['boards:read', 'user_accounts:read']);
    expect(await oauth.exchangeCode({ state: 's', code, redirectUri })).toMatchObject({ ok: false, code: 'permission_revoked', retryable: false });
  });

  it('refreshes (the refresh token rotates, the board stays); a refused refresh is a non-retryable token_expired', async () => {
    const oauth = createPinterestOAuth(settings(), deps());
    const connected = await connect(oauth);
    if (!connected.ok) throw new Error('connect failed');
    clock += 20 * 86_400_000;
    const renewed = await oauth.refresh?.(connected.tokens);
    if (!renewed?.ok) throw new Error('refresh failed');
    expect(renewed.tokens).toMatchObject({ accountId: board.id, accountName: 'acme_studio · Recipes', expiresAt: clock + 2_592_000_000 });
    expect(renewed.tokens.accessToken).not.toBe(connected.tokens.accessToken);
    expect(renewed.tokens.refreshToken).not.toBe(connected.tokens.refreshToken);
    expect(fake.tokenRequests.at(-1)?.get('grant_type')).toBe('refresh_token');
    // The user removed the app: the refresh token is refused.
    fake.revokeRefreshTokens();
    expect(await oauth.refresh?.(renewed.tokens)).toMatchObject({ ok: false, code: 'token_expired', retryable: false });
    const none: NetworkTokens = { ...renewed.tokens, refreshToken: null };
    expect(await oauth.refresh?.(none)).toMatchObject({ ok: false, code: 'token_expired', retryable: false });
  });

  it('fails without configuration, before any request', async () => {
    const oauth = createPinterestOAuth(settings({ clientSecret: undefined }), deps());
    expect(await oauth.exchangeCode({ state: 's', code: 'x', redirectUri })).toMatchObject({ ok: false, code: 'upstream_unknown', retryable: false });
    expect(fake.tokenRequests).toHaveLength(0);
  });

  const token = (status: number, body: unknown): ScriptedAnswer => ({ method: 'POST', path: '/v5/oauth/token', status, body });
  const OAUTH_CASES: { why: string; arrange: () => void; settings?: Partial<NetworkSettings>; code: JobErrorCode; retryable: boolean }[] = [
    { why: '401 client authentication failed (app id or secret)', arrange: () => {}, settings: { clientSecret: 'wrong' }, code: 'upstream_unknown', retryable: false },
    { why: '400 grant refused (code used or expired, refresh token revoked or expired)', arrange: () => {}, code: 'token_expired', retryable: false },
    { why: '403 app or account not permitted', arrange: () => fake.failNext(token(403, { code: 29, message: 'You are not permitted to access that resource.' })), code: 'permission_revoked', retryable: false },
    { why: '429 throttled', arrange: () => fake.failNext(token(429, { code: 8, message: 'This request exceeded a rate limit.' })), code: 'quota_exceeded', retryable: true },
    { why: '5xx server side', arrange: () => fake.failNext(token(503, { code: 503, message: 'Service Unavailable' })), code: 'upstream_5xx', retryable: true },
    { why: 'anything else (undocumented)', arrange: () => fake.failNext(token(409, { code: 7, message: 'Conflict' })), code: 'upstream_unknown', retryable: false },
  ];
  it('covers every row of the token endpoint table', () => {
    expect(OAUTH_CASES.map((c) => c.why).sort()).toEqual(PINTEREST_OAUTH_ERROR_TABLE.map((r) => r.name).sort());
  });
  for (const c of OAUTH_CASES) {
    it(`token endpoint: ${c.why} → ${c.code}`, async () => {
      c.arrange();
      const result = await createPinterestOAuth(settings(c.settings), deps()).exchangeCode({ state: 's', code: 'never-issued', redirectUri });
      expect(result).toMatchObject({ ok: false, code: c.code, retryable: c.retryable });
      // The refused client gives the catch-all's result, so only the logged row tells which decided.
      const logged = logs.filter((l) => l.details.call === 'POST /v5/oauth/token' && l.details.row !== undefined);
      expect(logged.map((l) => l.details.row)).toEqual([c.why]);
    });
  }
});

describe('Pinterest publishing', () => {
  it('creates an image pin from the public address, with title and description, and confirms it', async () => {
    const adapter = createPinterestAdapter(settings(), deps());
    const job = new Job({ media: [upload] });
    const { result } = await drive(adapter, job);
    const pin = fake.pins[0];
    expect(fake.pins).toHaveLength(1);
    expect(result).toEqual({ ok: true, postId: pin?.id, url: pinUrl(pin?.id) });
    expect(pin).toMatchObject({ board_id: board.id, title: 'Lemon tart', description: 'Lemon tart, step by step' });
    // An upload goes by its signed public address (Pinterest cannot read file://).
    expect(pin?.media_source).toEqual({ source_type: 'image_url', url: upload.publicUrl });
    expect(job.progress).toMatchObject({ pinId: pin?.id, creating: null });
    expect(await adapter.confirm(job.request(), pin?.id ?? '', { late: false })).toEqual({ state: 'found', url: pinUrl(pin?.id) });
  });

  it('makes a carousel (multiple_image_urls) of at most 5 photos', async () => {
    const media = Array.from({ length: 7 }, (_, i) => ({ ...photo, url: `https://media.example/p${i}.jpg` }));
    const { result } = await drive(createPinterestAdapter(settings(), deps()), new Job({ media }));
    expect(result.ok).toBe(true);
    expect(fake.pins[0]?.media_source).toEqual({ source_type: 'multiple_image_urls', items: media.slice(0, 5).map((m) => ({ url: m.url })) });
  });

  it('sends photos without a public address as base64 (JPEG/PNG only)', async () => {
    const local = (n: number): MediaRef => ({ url: `file:///data/media/l${n}.png`, publicUrl: null, sizeBytes: 10, contentType: 'image/png' });
    const adapter = createPinterestAdapter(settings(), deps());
    expect((await drive(adapter, new Job({ media: [local(1)] }))).result.ok).toBe(true);
    expect(fake.pins[0]?.media_source).toEqual({ source_type: 'image_base64', content_type: 'image/png', data: FILE_BYTES.toString('base64') });
    expect((await drive(adapter, new Job({ media: [local(1), local(2)] }))).result.ok).toBe(true);
    expect(fake.pins[1]?.media_source).toMatchObject({ source_type: 'multiple_image_base64', items: [{ content_type: 'image/png' }, { content_type: 'image/png' }] });
    const gif = { ...local(3), contentType: 'image/gif' };
    expect(await adapter.submit(new Job({ media: [gif] }).request())).toMatchObject({ ok: false, code: 'media_unsupported_format' });
    expect(await adapter.submit(new Job({ media: [] }).request())).toMatchObject({ ok: false, code: 'upstream_unknown' });
  });

  it('respects the limits: title to 100 and description to 800 code points (PinCreate.description); empty texts are left out', async () => {
    const adapter = createPinterestAdapter(settings(), deps());
    const long = '🍋'.repeat(900);
    expect((await drive(adapter, new Job({ title: 't'.repeat(150), text: long }))).result.ok).toBe(true);
    expect(fake.pins[0]?.title).toBe('t'.repeat(100));
    expect([...(fake.pins[0]?.description ?? '')]).toHaveLength(800);
    expect((await drive(adapter, new Job({ title: '  ', text: null }))).result.ok).toBe(true);
    expect(fake.pins[1]).toMatchObject({ title: null, description: null });
  });

  it('uploads a video (register, signed form upload), answers pending while it processes, then pins it once', async () => {
    fake.processingPolls = 4;
    const adapter = createPinterestAdapter(settings(), deps());
    const job = videoJob();
    const containerId = await submitOk(adapter, job);
    expect(fake.media.get(containerId)).toMatchObject({ status: 'processing', bytes: FILE_BYTES.length });
    expect(await adapter.publish(job.request(), containerId)).toEqual({ ok: 'pending', retryAfterMs: expect.any(Number) });
    expect(fake.pins).toHaveLength(0);
    const result = await adapter.publish(job.request(), containerId);
    expect(result).toMatchObject({ ok: true, postId: fake.pins[0]?.id });
    expect(fake.pins).toHaveLength(1);
    expect(fake.pins[0]?.media_source).toEqual({ source_type: 'video_id', media_id: containerId, cover_image_key_frame_time: 1 });
    expect(fake.uploads).toBe(1);
  });

  it('a run taken over after the video upload does not upload it again', async () => {
    const job = videoJob();
    const first = await submitOk(createPinterestAdapter(settings(), deps()), job);
    // The worker crashed before recording the container: submit runs again with the saved progress.
    const again = await submitOk(createPinterestAdapter(settings(), deps()), job);
    expect(again).toBe(first);
    expect(fake.registrations).toBe(1);
    expect(fake.uploads).toBe(1);
  });

  it('fails a video Pinterest cannot process with media_unsupported_format', async () => {
    fake.videoFails = true;
    const { result } = await drive(createPinterestAdapter(settings(), deps()), videoJob());
    expect(result).toMatchObject({ ok: false, code: 'media_unsupported_format', retryable: false });
    expect(fake.pins).toHaveLength(0);
  });

  it('a timeout on POST /v5/pins (created, answer lost) then a second publish: exactly one pin', async () => {
    const job = new Job();
    const containerId = await submitOk(createPinterestAdapter(settings(), deps()), job);
    fake.hangNext('POST', '/v5/pins');
    const first = await createPinterestAdapter(settings(), deps({ fetch: impatientFetch() })).publish(job.request(), containerId);
    expect(first).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    expect(fake.pins).toHaveLength(1);
    expect(job.progress).toMatchObject({ creating: { attemptedAt: clock }, pinId: null });
    const second = await createPinterestAdapter(settings(), deps()).publish(job.request(), containerId);
    expect(second).toEqual({ ok: true, postId: fake.pins[0]?.id, url: pinUrl(fake.pins[0]?.id) });
    expect(fake.pins).toHaveLength(1);
    expect(fake.pinAttempts).toBe(1);
    // And once more (a crash after publish): the recorded pin answers without asking Pinterest.
    const calls = fake.requests.length;
    expect(await createPinterestAdapter(settings(), deps()).publish(job.request(), containerId)).toMatchObject({ ok: true, postId: fake.pins[0]?.id });
    expect(fake.requests.length).toBe(calls);
  });

  it('a lost video pin answer is found on the board too (same kind, same texts)', async () => {
    const job = videoJob();
    const containerId = await submitOk(createPinterestAdapter(settings(), deps()), job);
    fake.hangNext('POST', '/v5/pins');
    await createPinterestAdapter(settings(), deps({ fetch: impatientFetch() })).publish(job.request(), containerId);
    expect(await createPinterestAdapter(settings(), deps()).publish(job.request(), containerId)).toMatchObject({ ok: true, postId: fake.pins[0]?.id });
    expect(fake.pinAttempts).toBe(1);
  });

  it('after a 5xx on POST, waits for the board listing to settle, then creates once (an older twin is not ours)', async () => {
    const adapter = createPinterestAdapter(settings(), deps());
    const job = new Job();
    const containerId = await submitOk(adapter, job);
    // The same texts pinned yesterday: too old to be this attempt's pin.
    const yesterday = clock - 86_400_000;
    fake.pins.push({ id: '1000', board_id: board.id, title: 'Lemon tart', description: 'Lemon tart, step by step', alt_text: null, media_source: { source_type: 'image_url', url: photo.url }, created_at: new Date(yesterday).toISOString(), createdMs: yesterday });
    fake.failNext({ method: 'POST', path: '/v5/pins', status: 502, body: { code: 502, message: 'Bad Gateway' } });
    expect(await adapter.publish(job.request(), containerId)).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    expect(await adapter.publish(job.request(), containerId)).toMatchObject({ ok: 'pending' });
    clock += 31_000;
    const result = await adapter.publish(job.request(), containerId);
    expect(result).toMatchObject({ ok: true, postId: fake.pins[1]?.id });
    expect(fake.pins).toHaveLength(2);
    expect(fake.pinAttempts).toBe(1);
  });

  it('when the lookup itself is refused, stops instead of risking a second pin', async () => {
    const job = new Job();
    const containerId = await submitOk(createPinterestAdapter(settings(), deps()), job);
    fake.hangNext('POST', '/v5/pins');
    await createPinterestAdapter(settings(), deps({ fetch: impatientFetch() })).publish(job.request(), containerId);
    fake.failNext({ method: 'GET', path: `/v5/boards/${board.id}/pins`, status: 503, body: { code: 503, message: 'unavailable' } });
    expect(await createPinterestAdapter(settings(), deps()).publish(job.request(), containerId)).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    expect(fake.pinAttempts).toBe(1);
    expect(job.progress).toMatchObject({ creating: { attemptedAt: clock } });
  });

  it('when the lookup is refused for good (403), stops as "may be live" rather than as a refusal a retry would answer with a second pin', async () => {
    const job = new Job();
    const containerId = await submitOk(createPinterestAdapter(settings(), deps()), job);
    fake.hangNext('POST', '/v5/pins');
    await createPinterestAdapter(settings(), deps({ fetch: impatientFetch() })).publish(job.request(), containerId);
    fake.failNext({ method: 'GET', path: `/v5/boards/${board.id}/pins`, status: 403, body: { code: 3, message: 'Not authorized to access board or Pin.' } });
    const result = await createPinterestAdapter(settings(), deps()).publish(job.request(), containerId);
    expect(result).toMatchObject({ ok: false, code: 'upstream_unknown', retryable: false });
    expect(result.ok === false && result.message).toMatch(/could not be checked.*Check the board before republishing/);
    expect(fake.pinAttempts).toBe(1);
  });

  it('after a 4xx refusal (nothing created), the next attempt creates without a lookup', async () => {
    const adapter = createPinterestAdapter(settings(), deps());
    const job = new Job();
    const containerId = await submitOk(adapter, job);
    fake.failNext({ method: 'POST', path: '/v5/pins', status: 429, body: { code: 8, message: 'This request exceeded a rate limit.' } });
    expect(await adapter.publish(job.request(), containerId)).toMatchObject({ ok: false, code: 'quota_exceeded', retryable: false });
    expect(await adapter.publish(job.request(), containerId)).toMatchObject({ ok: true });
    expect(lookups()).toBe(0);
    expect(fake.pins).toHaveLength(1);
  });

  it('stops without creating when the lease was lost', async () => {
    const adapter = createPinterestAdapter(settings(), deps());
    const job = new Job();
    const containerId = await submitOk(adapter, job);
    job.leaseHeld = false;
    expect(await adapter.publish(job.request(), containerId)).toMatchObject({ ok: false, retryable: true });
    expect(fake.pinAttempts).toBe(0);
  });

  it('a deleted board fails with permission_revoked and our own sentence', async () => {
    const adapter = createPinterestAdapter(settings(), deps());
    fake.boards.splice(0);
    const { result } = await drive(adapter, new Job());
    expect(result).toMatchObject({ ok: false, code: 'permission_revoked', retryable: false });
    expect(result.ok === false && result.message).toMatch(/board .* no longer exists\. Reconnect Pinterest/);
  });

  it('fails without credentials or without a board, before any request', async () => {
    const adapter = createPinterestAdapter(settings(), deps());
    expect(await adapter.submit(new Job().request({ credentials: null }))).toMatchObject({ ok: false, code: 'upstream_unknown' });
    expect(await adapter.publish(new Job().request({ credentials: { accessToken: fake.token, accountId: 'acme_studio' } }), 'images')).toMatchObject({ ok: false, code: 'permission_revoked' });
    expect(fake.requests).toHaveLength(0);
  });
});

describe('Pinterest confirmation', () => {
  it('found, not_found (deleted or unknown), unavailable', async () => {
    const adapter = createPinterestAdapter(settings(), deps());
    const job = new Job();
    const { result } = await drive(adapter, job);
    if (result.ok !== true) throw new Error('not published');
    expect(await adapter.confirm(job.request(), result.postId, { late: false })).toEqual({ state: 'found', url: pinUrl(result.postId) });
    fake.pins.splice(0);
    expect(await adapter.confirm(job.request(), result.postId, { late: true })).toEqual({ state: 'not_found' });
    fake.failNext({ method: 'GET', path: '/v5/pins/', status: 500, body: { code: 500, message: 'Internal error' } });
    expect(await adapter.confirm(job.request(), result.postId, { late: false })).toEqual({ state: 'unavailable' });
    expect(await adapter.confirm(job.request({ credentials: null }), result.postId, { late: false })).toEqual({ state: 'unavailable' });
    await fake.close();
    expect(await adapter.confirm(job.request(), result.postId, { late: false })).toEqual({ state: 'unavailable' });
    fake = await startFakePinterest(); // for afterEach
  });
});

describe('Pinterest error table (spec 7.4)', () => {
  const e = (code: number, message: string) => ({ code, message });
  const CASES: { why: string; status: number; body: unknown; headers?: Record<string, string>; code: JobErrorCode; retryable: boolean }[] = [
    { why: '401 code 3: the token lacks a required scope', status: 401, body: e(3, 'Your token does not have sufficient permissions to perform this operation.'), code: 'permission_revoked', retryable: false },
    { why: '401 token expired, revoked or invalid', status: 401, body: e(2, 'Authentication failed.'), code: 'token_expired', retryable: false },
    { why: '403 code 233: image too small', status: 403, body: e(233, 'Your image is too small. Please choose a larger image and try again.'), code: 'media_unsupported_format', retryable: false },
    { why: '403 code 235: image broken or unreadable', status: 403, body: e(235, 'Sorry, this image is broken. Please pick a different image.'), code: 'media_unsupported_format', retryable: false },
    { why: '403 not permitted (code 29) or scope missing', status: 403, body: e(29, 'You are not permitted to access that resource.'), code: 'permission_revoked', retryable: false },
    { why: '404 board not found (code 40): the board was deleted', status: 404, body: e(40, 'Board not found.'), code: 'permission_revoked', retryable: false },
    { why: '429 rate limit with a short Retry-After', status: 429, body: e(8, 'This request exceeded a rate limit.'), headers: { 'retry-after': '60' }, code: 'quota_exceeded', retryable: true },
    { why: '429 rate limit (codes 8, 30)', status: 429, body: e(8, 'This request exceeded a rate limit (per day).'), headers: { 'retry-after': '86400' }, code: 'quota_exceeded', retryable: false },
    { why: '413 payload too large', status: 413, body: e(413, 'Request Entity Too Large'), code: 'media_too_large', retryable: false },
    { why: '400 image or video over the size limit (message)', status: 400, body: e(1, 'The image file size exceeds the maximum of 20MB.'), code: 'media_too_large', retryable: false },
    { why: '400 invalid media URL or unsupported image/video (code 1, message)', status: 400, body: e(1, 'Whoops! It looks like you entered an invalid URL. Try creating a Pin again with a valid URL.'), code: 'media_unsupported_format', retryable: false },
    { why: '408 / 5xx server side', status: 503, body: e(503, 'Service Unavailable'), code: 'upstream_5xx', retryable: true },
    { why: 'anything else (undocumented)', status: 400, body: e(1, 'Something new.'), code: 'upstream_unknown', retryable: false },
  ];

  it('has a case for every row', () => {
    expect(CASES.map((c) => c.why).sort()).toEqual(PINTEREST_ERROR_TABLE.map((r) => r.name).sort());
  });

  for (const c of CASES) {
    it(`${c.why} → ${c.code}${c.retryable ? ' (retryable)' : ''}`, async () => {
      const adapter = createPinterestAdapter(settings(), deps());
      fake.failNext({ method: 'POST', path: '/v5/pins', status: c.status, body: c.body, ...(c.headers ? { headers: c.headers } : {}) });
      const { result } = await drive(adapter, new Job());
      expect(result).toMatchObject({ ok: false, code: c.code, retryable: c.retryable });
      // A retried rate limit carries its announced reset, so the worker's retry waits for it.
      const announced = c.retryable && c.headers?.['retry-after'] !== undefined ? Number(c.headers['retry-after']) * 1000 : undefined;
      expect(result.ok === false ? result.retryAfterMs : 'published').toBe(announced);
      // The network's text is logged, never returned; the deciding row is logged with it.
      const text = (c.body as { message: string }).message;
      if (result.ok === false) expect(result.message).not.toContain(text);
      expect(logs.some((l) => String(l.details.body).includes(text) && l.details.row === c.why)).toBe(true);
      expect(fake.pins).toHaveLength(0);
    });
  }

  it('an expired token from the fake → token_expired; a token without pins:write → permission_revoked', async () => {
    const adapter = createPinterestAdapter(settings(), deps());
    fake.expiredTokens.add(fake.token);
    expect((await drive(adapter, new Job())).result).toMatchObject({ ok: false, code: 'token_expired', retryable: false });
    const narrow = fake.tokenWith(['boards:read', 'pins:read', 'user_accounts:read']);
    const job = new Job({ credentials: { accessToken: narrow, accountId: board.id } });
    expect((await drive(adapter, job)).result).toMatchObject({ ok: false, code: 'permission_revoked', retryable: false });
  });

  it('no answer at all (refused connection) → upstream_5xx, retryable', async () => {
    const adapter = createPinterestAdapter(settings({ apiBaseUrl: 'http://127.0.0.1:9/v5' }), deps());
    expect(await adapter.publish(new Job().request(), 'images')).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
  });

  const s3 = (code: string, message: string) => `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`;
  const UPLOAD_CASES: { why: string; status: number; body: string; code: JobErrorCode; retryable: boolean }[] = [
    { why: 'EntityTooLarge / 413: the file is over the limit', status: 400, body: s3('EntityTooLarge', 'Your proposed upload exceeds the maximum allowed size'), code: 'media_too_large', retryable: false },
    { why: '403 upload grant expired or refused', status: 403, body: s3('AccessDenied', 'Invalid according to Policy: Policy expired.'), code: 'upstream_5xx', retryable: true },
    { why: '408 / 5xx storage side', status: 503, body: s3('SlowDown', 'Please reduce your request rate.'), code: 'upstream_5xx', retryable: true },
    { why: 'anything else (malformed upload)', status: 400, body: s3('InvalidArgument', "Bucket POST must contain a field named 'file'."), code: 'upstream_unknown', retryable: false },
  ];
  it('has an upload case for every row of the storage table', () => {
    expect(UPLOAD_CASES.map((c) => c.why).sort()).toEqual(PINTEREST_UPLOAD_ERROR_TABLE.map((r) => r.name).sort());
  });
  for (const c of UPLOAD_CASES) {
    it(`video storage: ${c.why} → ${c.code}`, async () => {
      fake.failNext({ method: 'POST', path: '/media-upload/', status: c.status, body: c.body });
      const job = videoJob();
      expect(await createPinterestAdapter(settings(), deps()).submit(job.request())).toMatchObject({ ok: false, code: c.code, retryable: c.retryable });
      expect(logs.some((l) => String(l.details.body).includes(c.body.slice(40, 80)) && l.details.row === c.why)).toBe(true);
      // Nothing was saved for a failed upload: the next run registers again and succeeds.
      expect(job.progress).toBeNull();
      expect((await createPinterestAdapter(settings(), deps()).submit(job.request())).ok).toBe(true);
      expect(fake.registrations).toBe(2);
    });
  }

  it('the real size limit of the fake storage → media_too_large', async () => {
    fake.maxUploadBytes = 5;
    expect(await createPinterestAdapter(settings(), deps()).submit(videoJob().request())).toMatchObject({ ok: false, code: 'media_too_large' });
  });
});

describe('the Pinterest fake rejects what the real API rejects', () => {
  const call = async (method: string, path: string, body?: unknown, tokenValue: string | null = fake.token) => {
    const res = await fetch(`${fake.apiBaseUrl}${path}`, {
      method,
      headers: { ...(tokenValue ? { authorization: `Bearer ${tokenValue}` } : {}), 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as { code?: number } };
  };

  it('missing token, missing scope, missing board_id or media_source, a foreign board, limits, a video not ready', async () => {
    const image = { source_type: 'image_url', url: 'https://media.example/p.jpg' };
    expect(await call('POST', '/pins', { board_id: board.id, media_source: image }, null)).toMatchObject({ status: 401, body: { code: 2 } });
    expect(await call('POST', '/pins', { board_id: board.id, media_source: image }, fake.tokenWith(['pins:read']))).toMatchObject({ status: 401, body: { code: 3 } });
    expect((await call('POST', '/pins', { media_source: image })).status).toBe(400);
    expect((await call('POST', '/pins', { board_id: board.id })).status).toBe(400);
    expect(await call('POST', '/pins', { board_id: '123', media_source: image })).toMatchObject({ status: 404, body: { code: 40 } });
    expect((await call('POST', '/pins', { board_id: board.id, title: 't'.repeat(101), media_source: image })).status).toBe(400);
    const six = { source_type: 'multiple_image_urls', items: Array.from({ length: 6 }, () => ({ url: image.url })) };
    expect((await call('POST', '/pins', { board_id: board.id, media_source: six })).status).toBe(400);
    const registered = await call('POST', '/media', { media_type: 'video' });
    const mediaId = (registered.body as { media_id?: string }).media_id;
    expect((await call('POST', '/pins', { board_id: board.id, media_source: { source_type: 'video_id', media_id: mediaId } })).status).toBe(400);
    expect((await call('GET', '/boards?page_size=300')).status).toBe(400);
    expect(fake.pins).toHaveLength(0);
  });

  it('the storage wants every signed field and the file last', async () => {
    const registered = (await call('POST', '/media', { media_type: 'video' })).body as { upload_url: string; upload_parameters: Record<string, string> };
    const form = (fields: Record<string, string>, fileFirst: boolean) => {
      const f = new FormData();
      if (fileFirst) f.append('file', new Blob([FILE_BYTES]), 'v');
      for (const [k, v] of Object.entries(fields)) f.append(k, v);
      if (!fileFirst) f.append('file', new Blob([FILE_BYTES]), 'v');
      return f;
    };
    const withoutPolicy = Object.fromEntries(Object.entries(registered.upload_parameters).filter(([k]) => k !== 'policy'));
    expect((await fetch(registered.upload_url, { method: 'POST', body: form(withoutPolicy, false) })).status).toBe(403);
    expect((await fetch(registered.upload_url, { method: 'POST', body: form(registered.upload_parameters, true) })).status).toBe(400);
    expect((await fetch(registered.upload_url, { method: 'POST', body: form(registered.upload_parameters, false) })).status).toBe(204);
  });
});
