import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobErrorCode } from '../../src/vocabulary/job-errors.js';
import type { MediaRef, NetworkAdapter, PublishRequest, Published } from '../../src/networks/adapter.js';
import { REFRESH_BEFORE_PUBLISH_MS, refreshDue } from '../../src/core/connections/token-refresh.js';
import { pkceFor } from '../../src/networks/kit/pkce.js';
import type { NetworkDeps, NetworkSettings } from '../../src/networks/network-deps.js';
import { createXAdapter } from '../../src/networks/x/adapter.js';
import { X_ERROR_TABLE, X_OAUTH_ERROR_TABLE } from '../../src/networks/x/errors.js';
import { SEGMENT_BYTES } from '../../src/networks/x/media.js';
import { createXOAuth } from '../../src/networks/x/oauth.js';
import { type FakeX, startFakeX } from '../fakes/x.js';
import { drive as driveJob, impatientFetch, type LogLine, NetworkJob, submitOk, testNetworkDeps } from '../support/network-job.js';

let fake: FakeX;
let clock: number;
let logs: LogLine[];
let file: Buffer;

beforeEach(async () => {
  fake = await startFakeX();
  clock = Date.now();
  logs = [];
  file = Buffer.from('0123456789');
});
afterEach(async () => {
  await fake.close();
});

function settings(over: Partial<NetworkSettings> = {}): NetworkSettings {
  return { clientId: fake.clientId, clientSecret: fake.clientSecret, apiBaseUrl: fake.baseUrl, authorizeUrl: fake.authorizeUrl, tokenUrl: fake.tokenUrl, apiVersion: undefined, ...over };
}

const deps = (over: Partial<NetworkDeps> = {}) => testNetworkDeps({ now: () => clock, logs, media: () => file }, over);

/** A job posting as the fake's account; `over` sets a test's own fields. */
class Job extends NetworkJob {
  constructor(over: Partial<PublishRequest> = {}) {
    super(() => ({ platform: 'x', connection: { id: 'conn_1', mode: 'live', name: '@acme' }, credentials: { accessToken: fake.token, accountId: fake.user.id }, text: 'Hello X', ...over }));
  }
}

const photo: MediaRef = { url: 'https://media.example/p.jpg', sizeBytes: 10, contentType: 'image/jpeg' };
const video: MediaRef = { url: 'https://media.example/v.mp4', sizeBytes: null, contentType: 'video/mp4' };
const chainOf = (n: number) => Array.from({ length: n }, (_, i) => `Post ${i + 1} of ${n}`);
const requestsTo = (method: string, path: string | RegExp) => fake.requests.filter((r) => r.method === method && (typeof path === 'string' ? r.path === path : path.test(r.path)));

/** Every failure these tests expect comes from publish: a refused submit throws rather than passing for one. */
const drive = (adapter: NetworkAdapter, job: NetworkJob) => driveJob(adapter, job, { submitMustSucceed: true });

/** Follows the authorization URL on the fake and returns the code it redirects back with. */
async function consent(url: string): Promise<string> {
  const res = await fetch(url, { redirect: 'manual' });
  expect(res.status).toBe(302);
  return new URL(res.headers.get('location') ?? '').searchParams.get('code') ?? '';
}

describe('X OAuth 2.0 (authorization code with PKCE, confidential client)', () => {
  const redirectUri = 'https://svc.example/connections/callback';

  it('sends the user to authorize with S256 PKCE derived from state, exchanges the code with Basic auth and reads the account', async () => {
    const oauth = createXOAuth(settings(), deps());
    const url = oauth.authorizationUrl({ state: 'st_1', redirectUri });
    expect(url.startsWith(`${fake.authorizeUrl}?`)).toBe(true);
    expect(url).toContain('scope=tweet.read%20tweet.write%20users.read%20offline.access%20media.write');
    const code = await consent(url);
    const q = fake.authorizeRequests[0];
    expect(q?.get('code_challenge')).toBe(pkceFor(fake.clientSecret, 'st_1').challenge);
    expect(q?.get('code_challenge_method')).toBe('S256');
    expect(q?.get('state')).toBe('st_1');

    const result = await oauth.exchangeCode({ code, state: 'st_1', redirectUri });
    expect(result).toEqual({
      ok: true,
      tokens: { accessToken: expect.stringMatching(/^x-access-/), refreshToken: expect.stringMatching(/^x-refresh-/), expiresAt: clock + 7_200_000, accountId: fake.user.id, accountName: '@acme' },
    });
    const tokenCall = requestsTo('POST', '/2/oauth2/token')[0];
    expect(tokenCall?.authorization).toMatch(/^Basic /);
    // The same code twice, or a code with another state's verifier: the user must consent again.
    expect(await oauth.exchangeCode({ code, state: 'st_1', redirectUri })).toMatchObject({ ok: false, code: 'token_expired', retryable: false });
    const other = await consent(oauth.authorizationUrl({ state: 'st_2', redirectUri }));
    expect(await oauth.exchangeCode({ code: other, state: 'st_forged', redirectUri })).toMatchObject({ ok: false, code: 'token_expired' });

    // The new token publishes.
    if (!result.ok) throw new Error('exchange failed');
    const job = new Job({ credentials: { accessToken: result.tokens.accessToken, accountId: result.tokens.accountId } });
    expect((await drive(createXAdapter(settings(), deps()), job)).result.ok).toBe(true);
  });

  it('refreshes with grant_type=refresh_token, keeps the rotated refresh token, and a refused refresh is token_expired', async () => {
    const oauth = createXOAuth(settings(), deps());
    const first = { accessToken: fake.token, refreshToken: fake.grantRefreshToken(), expiresAt: clock + 60_000, accountId: fake.user.id, accountName: '@acme' };
    clock += 1_000;
    const renewed = await oauth.refresh?.(first);
    if (!renewed?.ok) throw new Error('refresh failed');
    expect(renewed.tokens).toMatchObject({ accountId: fake.user.id, accountName: '@acme', expiresAt: clock + 7_200_000 });
    expect(renewed.tokens.refreshToken).not.toBe(first.refreshToken);
    expect(renewed.tokens.accessToken).not.toBe(first.accessToken);
    // The old refresh token was rotated away: refusing it expires the connection (not retried).
    expect(await oauth.refresh?.(first)).toMatchObject({ ok: false, code: 'token_expired', retryable: false });
    // The kept one works, once more.
    const again = await oauth.refresh?.(renewed.tokens);
    expect(again?.ok).toBe(true);
    // A server failure keeps the tokens for a later try; no refresh token at all means reconnecting.
    fake.failNext({ method: 'POST', path: '/2/oauth2/token', status: 503, body: { title: 'Service Unavailable', detail: 'Service Unavailable', type: 'about:blank', status: 503 } });
    expect(await oauth.refresh?.(again?.ok ? again.tokens : first)).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    expect(await oauth.refresh?.({ ...first, refreshToken: null })).toMatchObject({ ok: false, code: 'token_expired', retryable: false });
  });

  it('a connection whose two-hour token is about to lapse is renewed on use: the renewed token publishes, the lapsed one is refused', async () => {
    const oauth = createXOAuth(settings(), deps());
    const code = await consent(oauth.authorizationUrl({ state: 'st_1', redirectUri }));
    const connected = await oauth.exchangeCode({ code, state: 'st_1', redirectUri });
    if (!connected.ok) throw new Error(`exchange failed: ${connected.code}`);
    const expiresAt = connected.tokens.expiresAt ?? 0;
    // The maintenance sweep leaves such tokens alone: only a publish renews them (credentialsFor).
    expect(oauth.refreshOnUse).toBe(true);
    clock = expiresAt - 60_000;
    expect(refreshDue(connected.tokens.expiresAt, clock, REFRESH_BEFORE_PUBLISH_MS)).toBe(true);
    const renewed = await oauth.refresh?.(connected.tokens);
    if (!renewed?.ok) throw new Error('refresh on use failed');
    expect(renewed.tokens).toMatchObject({ accountId: fake.user.id, accountName: '@acme', expiresAt: clock + 7_200_000 });
    expect(refreshDue(renewed.tokens.expiresAt, clock, REFRESH_BEFORE_PUBLISH_MS)).toBe(false);
    fake.expire(connected.tokens.accessToken);
    const lapsed = new Job({ credentials: { accessToken: connected.tokens.accessToken, accountId: fake.user.id } });
    expect(await createXAdapter(settings(), deps()).publish(lapsed.request(), 'text')).toMatchObject({ ok: false, code: 'token_expired', retryable: false });
    const job = new Job({ credentials: { accessToken: renewed.tokens.accessToken, accountId: renewed.tokens.accountId } });
    expect((await drive(createXAdapter(settings(), deps()), job)).result.ok).toBe(true);
    expect(fake.tweets).toHaveLength(1);
  });

  const OAUTH_CASES: { row: string; arrange: () => void; settings?: Partial<NetworkSettings>; code: JobErrorCode; retryable: boolean }[] = [
    { row: 'no answer or 5xx server side', arrange: () => fake.failNext({ method: 'POST', path: '/2/oauth2/token', status: 500, body: { title: 'Internal Server Error', type: 'about:blank', status: 500 } }), code: 'upstream_5xx', retryable: true },
    { row: 'invalid_grant, or an invalid, used or expired code or refresh token', arrange: () => {}, code: 'token_expired', retryable: false },
    { row: 'access_denied by the user', arrange: () => fake.failNext({ method: 'POST', path: '/2/oauth2/token', status: 400, body: { error: 'access_denied', error_description: 'The user denied the request' } }), code: 'permission_revoked', retryable: false },
    { row: '429 throttled (15-minute window)', arrange: () => fake.failNext({ method: 'POST', path: '/2/oauth2/token', status: 429, body: { title: 'Too Many Requests', type: 'about:blank', status: 429 } }), code: 'upstream_5xx', retryable: true },
    { row: 'unauthorized_client, invalid_client and anything else', arrange: () => {}, settings: { clientSecret: 'wrong' }, code: 'upstream_unknown', retryable: false },
  ];
  it('covers every row of the token endpoint table', () => {
    expect(OAUTH_CASES.map((c) => c.row).sort()).toEqual(X_OAUTH_ERROR_TABLE.map((r) => r.name).sort());
  });
  for (const c of OAUTH_CASES) {
    it(`token endpoint: ${c.row} → ${c.code}`, async () => {
      c.arrange();
      const oauth = createXOAuth(settings(c.settings), deps());
      const result = await oauth.exchangeCode({ code: 'x-code-never-issued', state: 'st_1', redirectUri });
      expect(result).toMatchObject({ ok: false, code: c.code, retryable: c.retryable });
      expect(logs.some((l) => l.details.row === c.row)).toBe(true);
    });
  }

  it('maps a refused /2/users/me with the API table, and fails without configuration', async () => {
    const oauth = createXOAuth(settings(), deps());
    const code = await consent(oauth.authorizationUrl({ state: 'st_1', redirectUri }));
    fake.failNext({ method: 'GET', path: '/2/users/me', status: 403, body: { title: 'Forbidden', detail: 'You are not permitted to perform this action.', type: 'about:blank', status: 403 } });
    expect(await oauth.exchangeCode({ code, state: 'st_1', redirectUri })).toMatchObject({ ok: false, code: 'permission_revoked' });
    const unconfigured = createXOAuth(settings({ clientSecret: undefined }), deps());
    expect(await unconfigured.exchangeCode({ code: 'x', state: 'st_1', redirectUri })).toMatchObject({ ok: false, code: 'upstream_unknown' });
    expect(requestsTo('POST', '/2/oauth2/token')).toHaveLength(1); // the configured exchange only
  });
});

describe('the fake refuses what X refuses', () => {
  const call = (method: string, path: string, body?: unknown, token: string | null = fake.token) =>
    fetch(`${fake.baseUrl}${path}`, { method, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

  it('no token, unprocessed media, a reply to nothing, unknown timeline parameters, a token request without Basic auth', async () => {
    expect((await call('POST', '/2/tweets', { text: 'x' }, null)).status).toBe(401);
    const init = await call('POST', '/2/media/upload/initialize', { media_type: 'video/mp4', total_bytes: 10, media_category: 'tweet_video' });
    const id = ((await init.json()) as { data: { id: string } }).data.id;
    expect((await call('POST', '/2/tweets', { text: 'x', media: { media_ids: [id] } })).status).toBe(400);
    expect((await call('POST', '/2/tweets', { text: 'x', reply: { in_reply_to_tweet_id: '42' } })).status).toBe(403);
    expect((await call('GET', `/2/users/${fake.user.id}/tweets?max_results=2`)).status).toBe(400);
    expect((await call('GET', `/2/users/${fake.user.id}/tweets?tweet.fields=nope`)).status).toBe(400);
    expect((await call('GET', `/2/users/${fake.user.id}/tweets?foo=1`)).status).toBe(400);
    const token = await fetch(fake.tokenUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=refresh_token&refresh_token=x' });
    expect(await token.json()).toMatchObject({ error: 'unauthorized_client' });
    expect(fake.tweets).toHaveLength(0);
  });
});

describe('X publishing', () => {
  it('posts a text, saving the attempt before POST /2/tweets, and confirms it', async () => {
    const adapter = createXAdapter(settings(), deps());
    const job = new Job({ text: 'Launch day & <more> https://example.com/a?b=1' });
    const { result } = await drive(adapter, job);
    const tweet = fake.tweets[0];
    expect(fake.tweets).toHaveLength(1);
    expect(tweet).toMatchObject({ text: 'Launch day & <more> https://example.com/a?b=1', replyTo: null, mediaIds: [] });
    expect(result).toEqual({ ok: true, postId: tweet?.id, url: `https://x.com/i/web/status/${tweet?.id ?? ''}` });
    expect(job.saves[0]).toMatchObject({ index: 0, attempt: { index: 0, startedAt: clock } });
    expect(job.progress).toMatchObject({ index: 1, ids: [tweet?.id], lastTweetId: tweet?.id, attempt: null });
    expect(await adapter.confirm(job.request(), tweet?.id ?? '', { late: false })).toEqual({ state: 'found', url: `https://x.com/i/web/status/${tweet?.id ?? ''}` });
    // Called again (a crash after publish): the saved progress answers without posting.
    expect(await adapter.publish(job.request(), 'text')).toMatchObject({ ok: true, postId: tweet?.id });
    expect(fake.postAttempts).toBe(1);
  });

  it('uploads up to 4 photos as multipart (tweet_image) and attaches them; a fifth is refused before any upload', async () => {
    const adapter = createXAdapter(settings(), deps());
    const { result } = await drive(adapter, new Job({ contentType: 'photo', media: [photo, photo, photo, photo] }));
    expect(result.ok).toBe(true);
    expect(requestsTo('POST', '/2/media/upload')).toHaveLength(4);
    expect(fake.tweets[0]?.mediaIds).toEqual([...fake.media.keys()]);
    const five = await adapter.submit(new Job({ contentType: 'photo', media: [photo, photo, photo, photo, photo] }).request());
    expect(five).toMatchObject({ ok: false, code: 'upstream_unknown', retryable: false });
    expect(requestsTo('POST', '/2/media/upload')).toHaveLength(4);
  });

  it('sends a GIF in segments as tweet_gif (the one-shot upload takes no GIF) and waits for X to process it', async () => {
    fake.knobs.processingPolls = 1;
    const { result, pendings } = await drive(createXAdapter(settings(), deps()), new Job({ contentType: 'photo', media: [{ ...photo, url: 'https://m.example/a.gif', contentType: null }] }));
    expect(result.ok).toBe(true);
    expect(pendings).toBe(0); // two quick STATUS checks within the call
    expect([...fake.media.values()]).toMatchObject([{ kind: 'gif', mediaType: 'image/gif', state: 'succeeded', finalized: true }]);
    expect(requestsTo('POST', '/2/media/upload')).toHaveLength(0);
    expect(requestsTo('POST', /^\/2\/media\/upload\/(initialize|\d+\/append|\d+\/finalize)$/).map((r) => r.path.replace(/\d{5,}/, 'ID'))).toEqual([
      '/2/media/upload/initialize',
      '/2/media/upload/ID/append',
      '/2/media/upload/ID/finalize',
    ]);
    expect(requestsTo('GET', '/2/media/upload')).toHaveLength(2);
    // Declared from the upload's type alone, as an upload has no file name.
    const declared = await drive(createXAdapter(settings(), deps()), new Job({ text: 'Declared', contentType: 'photo', media: [{ ...photo, url: 'file:///media/abc', contentType: 'image/gif' }] }));
    expect(declared.result.ok).toBe(true);
    expect([...fake.media.values()].at(-1)).toMatchObject({ kind: 'gif', mediaType: 'image/gif' });
  });

  it('the fake follows X\'s OpenAPI: the one-shot upload refuses tweet_gif and image/gif', async () => {
    const oneShot = (category: string, type: string) => {
      const form = new FormData();
      form.set('media_category', category);
      form.set('media', new Blob([file], { type }), 'media');
      return fetch(`${fake.baseUrl}/2/media/upload`, { method: 'POST', headers: { authorization: `Bearer ${fake.token}` }, body: form });
    };
    expect((await oneShot('tweet_gif', 'image/gif')).status).toBe(400);
    expect((await oneShot('tweet_image', 'image/gif')).status).toBe(400);
    expect(fake.schemaViolations).toEqual([
      expect.stringMatching(/^POST \/2\/media\/upload: MediaUploadRequestOneShot\/media_category must be equal to one of the allowed values/),
      expect.stringMatching(/^POST \/2\/media\/upload: MediaUploadRequestOneShot\/media_type must be equal to one of the allowed values/),
      expect.stringMatching(/^POST \/2\/media\/upload: MediaUploadRequestOneShot\/media_type must be equal to one of the allowed values/),
    ]);
    expect((await oneShot('tweet_image', 'image/png')).status).toBe(200);
  });

  it('refuses what X would refuse before sending anything: a photo over 5 MB, an unsupported format, a long text', async () => {
    const adapter = createXAdapter(settings(), deps());
    expect(await adapter.submit(new Job({ contentType: 'photo', media: [{ ...photo, sizeBytes: 6 * 1024 * 1024 }] }).request())).toMatchObject({ ok: false, code: 'media_too_large' });
    expect(await adapter.submit(new Job({ contentType: 'video', media: [{ ...video, url: 'https://m.example/v.mkv', contentType: 'video/x-matroska' }] }).request())).toMatchObject({ ok: false, code: 'media_unsupported_format' });
    expect(await adapter.submit(new Job({ text: 'é'.repeat(200) + '界'.repeat(50) }).request())).toMatchObject({ ok: false, code: 'upstream_unknown' });
    file = Buffer.alloc(5 * 1024 * 1024 + 1); // a size the address did not announce, found when the file is opened
    expect(await adapter.submit(new Job({ contentType: 'photo', media: [{ ...photo, sizeBytes: null }] }).request())).toMatchObject({ ok: false, code: 'media_too_large' });
    expect(fake.requests).toHaveLength(0);
  });

  it('uploads a video in segments (initialize, append × 3, finalize), answers pending while X processes it, then posts once', async () => {
    file = Buffer.alloc(2 * SEGMENT_BYTES + 5, 7);
    fake.knobs.processingPolls = 4;
    const adapter = createXAdapter(settings(), deps());
    const job = new Job({ contentType: 'video', media: [video], text: 'A video' });
    const containerId = await submitOk(adapter, job);
    const media = fake.media.get(containerId);
    expect(media).toMatchObject({ kind: 'video', mediaType: 'video/mp4', totalBytes: file.length, finalized: true });
    expect([...(media?.segments.values() ?? [])]).toEqual([SEGMENT_BYTES, SEGMENT_BYTES, 5]);
    expect(await adapter.publish(job.request(), containerId)).toEqual({ ok: 'pending', retryAfterMs: 5_000 });
    expect(fake.tweets).toHaveLength(0);
    expect(await adapter.publish(job.request(), containerId)).toMatchObject({ ok: true });
    expect(fake.tweets).toHaveLength(1);
    expect(fake.tweets[0]?.mediaIds).toEqual([containerId]);
    expect(requestsTo('GET', '/2/media/upload')).toHaveLength(5);
  });

  it('hands back to the worker after check_after_secs when X asks for a long wait', async () => {
    fake.knobs.processingPolls = 1;
    fake.knobs.checkAfterSecs = 30;
    const adapter = createXAdapter(settings(), deps());
    const job = new Job({ contentType: 'video', media: [video] });
    const containerId = await submitOk(adapter, job);
    expect(await adapter.publish(job.request(), containerId)).toEqual({ ok: 'pending', retryAfterMs: 30_000 });
    expect(requestsTo('GET', '/2/media/upload')).toHaveLength(1);
    expect(await adapter.publish(job.request(), containerId)).toMatchObject({ ok: true });
  });

  it('fails a video X cannot process with media_unsupported_format', async () => {
    fake.knobs.processingFails = true;
    const { result } = await drive(createXAdapter(settings(), deps()), new Job({ contentType: 'video', media: [video] }));
    expect(result).toMatchObject({ ok: false, code: 'media_unsupported_format', retryable: false });
    expect(fake.tweets).toHaveLength(0);
  });

  it('fails a video X could not process for its size or duration with media_too_large', async () => {
    fake.knobs.processingFails = true;
    fake.knobs.processingError = 'Invalid or Unsupported media, Reason: Duration too long: 150.2s, maximum is 140s.';
    const { result } = await drive(createXAdapter(settings(), deps()), new Job({ contentType: 'video', media: [video] }));
    expect(result).toMatchObject({ ok: false, code: 'media_too_large', retryable: false });
    if (result.ok === false) expect(result.message).not.toContain('150.2s');
    expect(fake.tweets).toHaveLength(0);
  });

  it('resumes a video upload where it stopped: only the missing segments are sent again', async () => {
    file = Buffer.alloc(2 * SEGMENT_BYTES + 5, 1);
    let appends = 0;
    const flaky: typeof fetch = (input, init) => {
      if (String(input).endsWith('/append') && ++appends === 2) return Promise.reject(new TypeError('fetch failed'));
      return globalThis.fetch(input, init);
    };
    const job = new Job({ contentType: 'video', media: [video] });
    expect(await createXAdapter(settings(), deps({ fetch: flaky })).submit(job.request())).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    expect(await createXAdapter(settings(), deps()).submit(job.request())).toMatchObject({ ok: true });
    expect(requestsTo('POST', '/2/media/upload/initialize')).toHaveLength(1);
    expect(requestsTo('POST', /\/append$/)).toHaveLength(3);
  });

  it('does not finalize twice when the finalize answer was lost: STATUS tells it landed', async () => {
    const job = new Job({ contentType: 'video', media: [video] });
    fake.hangNext('POST', /\/finalize$/);
    expect(await createXAdapter(settings(), deps({ fetch: impatientFetch() })).submit(job.request())).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    expect(job.progress).toMatchObject({ media: [{ kind: 'video', segments: 1, finalizeSent: true, finalized: false }] });
    expect(await createXAdapter(settings(), deps()).submit(job.request())).toMatchObject({ ok: true });
    expect(requestsTo('POST', /\/finalize$/)).toHaveLength(1);
    expect(requestsTo('GET', '/2/media/upload')).toHaveLength(1);
  });

  it('a timeout on POST /2/tweets (created, answer lost), then a second publish: exactly one post, found on the timeline', async () => {
    const job = new Job();
    const containerId = await submitOk(createXAdapter(settings(), deps()), job);
    fake.hangNext('POST', '/2/tweets');
    const first = await createXAdapter(settings(), deps({ fetch: impatientFetch() })).publish(job.request(), containerId);
    expect(first).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    expect(fake.tweets).toHaveLength(1);
    const second = await createXAdapter(settings(), deps()).publish(job.request(), containerId);
    expect(second).toEqual({ ok: true, postId: fake.tweets[0]?.id, url: `https://x.com/i/web/status/${fake.tweets[0]?.id ?? ''}` });
    expect(fake.postAttempts).toBe(1);
    const lookup = requestsTo('GET', `/2/users/${fake.user.id}/tweets`)[0];
    expect(lookup?.query).toMatchObject({ 'tweet.fields': 'created_at,referenced_tweets,attachments', max_results: '20', start_time: new Date(clock - 600_000).toISOString().replace(/\.\d{3}Z$/, 'Z') });
  });

  it('a lost POST /2/tweets answer whose timeline lookup is refused (403) is not posted again, even once the timeline had time', async () => {
    const job = new Job();
    fake.hangNext('POST', '/2/tweets');
    await createXAdapter(settings(), deps({ fetch: impatientFetch() })).publish(job.request(), 'text');
    expect(fake.postAttempts).toBe(1);
    // Past the settle time, an absent post would be posted again: only the refused lookup stands in the way.
    clock += 31_000;
    fake.failNext({ method: 'GET', path: `/2/users/${fake.user.id}/tweets`, status: 403, body: { title: 'Forbidden', detail: 'You are not permitted to perform this action.', type: 'about:blank', status: 403 } });
    const result = await createXAdapter(settings(), deps()).publish(job.request(), 'text');
    // Not permission_revoked: a reconnect and a retry would start afresh, without the attempt's record.
    expect(result).toMatchObject({ ok: false, code: 'upstream_unknown', retryable: false });
    expect(result.ok === false && result.message).toMatch(/could not be checked.*Check the profile before republishing/);
    expect(logs.find((l) => l.message === 'x: error answer')?.details).toMatchObject({ call: expect.stringMatching(/^GET \/2\/users\//), row: '403 not permitted (scope missing, account locked or suspended)' });
    expect(fake.postAttempts).toBe(1);
    expect(fake.tweets).toHaveLength(1);
    // The unanswered attempt stays on record, so a later run (after reconnecting) still looks before posting.
    expect(job.progress).toMatchObject({ index: 0, attempt: { index: 0 } });
  });

  it('when the timeline lags, waits, posts again and takes X\'s duplicate refusal as "already posted": exactly one post', async () => {
    const job = new Job({ contentType: 'photo', media: [photo], text: 'With a photo & a link https://example.com' });
    const containerId = await submitOk(createXAdapter(settings(), deps()), job);
    fake.hangNext('POST', '/2/tweets');
    await createXAdapter(settings(), deps({ fetch: impatientFetch() })).publish(job.request(), containerId);
    fake.knobs.timelineLag = 2;
    const adapter = createXAdapter(settings(), deps());
    expect(await adapter.publish(job.request(), containerId)).toEqual({ ok: 'pending', retryAfterMs: 30_000 });
    clock += 31_000;
    expect(await adapter.publish(job.request(), containerId)).toMatchObject({ ok: true, postId: fake.tweets[0]?.id });
    expect(fake.tweets).toHaveLength(1);
    expect(fake.postAttempts).toBe(2);
  });

  it('gives up (may be live, not retried) when X keeps saying duplicate but the post never shows', async () => {
    const job = new Job();
    fake.hangNext('POST', '/2/tweets');
    await createXAdapter(settings(), deps({ fetch: impatientFetch() })).publish(job.request(), 'text');
    fake.knobs.timelineLag = 1_000;
    const adapter = createXAdapter(settings(), deps());
    let result: Published = { ok: 'pending', retryAfterMs: 0 };
    for (let i = 0; i < 10 && result.ok === 'pending'; i++) {
      result = await adapter.publish(job.request(), 'text');
      clock += 31_000;
    }
    expect(result).toMatchObject({ ok: false, code: 'upstream_unknown', retryable: false });
    expect(result.ok === false && result.message).toMatch(/may be live/);
    expect(fake.tweets).toHaveLength(1);
  });

  it('a 5xx on POST leaves the outcome unknown: the next run looks first, then posts once', async () => {
    const adapter = createXAdapter(settings(), deps());
    const job = new Job();
    fake.failNext({ method: 'POST', path: '/2/tweets', status: 503, body: { title: 'Service Unavailable', type: 'about:blank', status: 503 } });
    expect(await adapter.publish(job.request(), 'text')).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    expect(await adapter.publish(job.request(), 'text')).toMatchObject({ ok: 'pending' });
    clock += 31_000;
    expect(await adapter.publish(job.request(), 'text')).toMatchObject({ ok: true });
    expect(fake.tweets).toHaveLength(1);
  });

  it('a refusal (4xx) created nothing: the next attempt posts without a lookup', async () => {
    const adapter = createXAdapter(settings(), deps());
    const job = new Job();
    fake.failNext({ method: 'POST', path: '/2/tweets', status: 429, body: { title: 'Too Many Requests', detail: 'Too Many Requests', type: 'about:blank', status: 429 }, headers: { 'x-user-limit-24hour-remaining': '0', 'x-user-limit-24hour-limit': '100' } });
    expect(await adapter.publish(job.request(), 'text')).toMatchObject({ ok: false, code: 'quota_exceeded', retryable: false });
    expect(job.progress).toMatchObject({ attempt: null });
    expect(await adapter.publish(job.request(), 'text')).toMatchObject({ ok: true });
    expect(requestsTo('GET', `/2/users/${fake.user.id}/tweets`)).toHaveLength(0);
  });

  it('the same text posted earlier by other means is a refusal, not ours: no lookup, not retried', async () => {
    await createXAdapter(settings(), deps()).publish(new Job().request(), 'text');
    const result = await createXAdapter(settings(), deps()).publish(new Job().request(), 'text');
    expect(result).toMatchObject({ ok: false, code: 'upstream_unknown', retryable: false });
    expect(requestsTo('GET', `/2/users/${fake.user.id}/tweets`)).toHaveLength(0);
    expect(fake.tweets).toHaveLength(1);
  });

  it('stops without posting when the lease was lost, and fails without credentials', async () => {
    const job = new Job();
    job.leaseHeld = false;
    expect(await createXAdapter(settings(), deps()).publish(job.request(), 'text')).toMatchObject({ ok: false, retryable: true });
    expect(fake.postAttempts).toBe(0);
    const adapter = createXAdapter(settings(), deps());
    expect(await adapter.submit(new Job().request({ credentials: null }))).toMatchObject({ ok: false, code: 'upstream_unknown' });
    expect(await adapter.publish(new Job().request({ credentials: null }), 'text')).toMatchObject({ ok: false, code: 'upstream_unknown' });
    expect(fake.requests).toHaveLength(0);
  });
});

describe('X threads (a reply chain)', () => {
  /** The first `live` posts of a chain of `total` are on the fake, in order, each replying to the one before. */
  function expectChained(live: number, total = live) {
    expect(fake.tweets.map((t) => t.text)).toEqual(chainOf(total).slice(0, live));
    fake.tweets.forEach((t, i) => expect(t.replyTo).toBe(i === 0 ? null : fake.tweets[i - 1]?.id));
  }

  it('publishes a chain of 25, each post replying to the previous, saving the index and last post id after each', async () => {
    const job = new Job({ contentType: 'thread', text: null, thread: chainOf(25) });
    const { result } = await drive(createXAdapter(settings(), deps()), job);
    expectChained(25);
    expect(result).toEqual({ ok: true, postId: fake.tweets[0]?.id, url: `https://x.com/i/web/status/${fake.tweets[0]?.id ?? ''}` });
    expect(job.progress).toMatchObject({ index: 25, ids: fake.tweets.map((t) => t.id), lastTweetId: fake.tweets[24]?.id, attempt: null });
    // Each post was recorded as attempted before it was sent, and as live right after.
    const marks = job.saves.map((p) => (p.attempt === null ? `live ${String(p.index)}` : `try ${String((p.attempt as { index: number }).index)}`));
    expect(marks.slice(0, 4)).toEqual(['try 0', 'live 1', 'try 1', 'live 2']);
  });

  it('refuses a chain over 25 posts before posting anything', async () => {
    const adapter = createXAdapter(settings(), deps());
    expect(await adapter.submit(new Job({ contentType: 'thread', thread: chainOf(26) }).request())).toMatchObject({ ok: false, code: 'upstream_unknown', retryable: false });
    expect(await adapter.publish(new Job({ contentType: 'thread', thread: chainOf(26) }).request(), 'text')).toMatchObject({ ok: false });
    expect(fake.requests).toHaveLength(0);
  });

  it('a chain refused for good at post 7: posts 1..6 stay live and the failure says so (not refunded)', async () => {
    fake.failNext({ method: 'POST', path: '/2/tweets', status: 403, body: { title: 'Forbidden', detail: 'You are not permitted to perform this action.', type: 'about:blank', status: 403 }, when: () => fake.tweets.length === 6 });
    const job = new Job({ contentType: 'thread', text: null, thread: chainOf(10) });
    const { result } = await drive(createXAdapter(settings(), deps()), job);
    expect(result).toMatchObject({ ok: false, code: 'permission_revoked', retryable: false, partlyLive: true });
    expect(result.ok === false && result.message).toMatch(/^The chain stopped at post 7 of 10; posts 1\.\.6 are live on X\./);
    expectChained(6, 10);
    // A manual retry resumes at post 7: nothing already live is posted again.
    expect(await createXAdapter(settings(), deps()).publish(job.request(), 'text')).toMatchObject({ ok: true });
    expectChained(10);
  });

  it('a chain whose post 3 answer was lost resumes from the saved progress: exactly N posts, N POSTs', async () => {
    const n = 8;
    const job = new Job({ contentType: 'thread', text: null, thread: chainOf(n) });
    fake.hangNext('POST', '/2/tweets', () => fake.tweets.length === 2);
    const first = await createXAdapter(settings(), deps({ fetch: impatientFetch() })).publish(job.request(), 'text');
    expect(first).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true, partlyLive: true });
    expect(fake.tweets).toHaveLength(3);
    expect(job.progress).toMatchObject({ index: 2, lastTweetId: fake.tweets[1]?.id, attempt: { index: 2 } });
    const second = await createXAdapter(settings(), deps()).publish(job.request(), 'text');
    expect(second).toMatchObject({ ok: true, postId: fake.tweets[0]?.id });
    expectChained(n);
    expect(fake.postAttempts).toBe(n);
  });
  it('a chain whose previous post was deleted meanwhile stops (the account is fine: the connection is kept)', async () => {
    const job = new Job({ contentType: 'thread', text: null, thread: chainOf(3) });
    fake.failNext({ method: 'POST', path: '/2/tweets', status: 503, body: { title: 'Service Unavailable', type: 'about:blank', status: 503 }, when: () => fake.tweets.length === 1 });
    expect(await createXAdapter(settings(), deps()).publish(job.request(), 'text')).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    fake.tweets.splice(0, 1); // the user deleted post 1
    clock += 31_000;
    const result = await createXAdapter(settings(), deps()).publish(job.request(), 'text');
    expect(result).toMatchObject({ ok: false, code: 'upstream_unknown', retryable: false, partlyLive: true });
    expect(fake.tweets).toHaveLength(0);
  });
});

describe('X confirmation', () => {
  it('found, not_found (deleted: a 200 with a resource-not-found problem), unavailable', async () => {
    const adapter = createXAdapter(settings(), deps());
    const job = new Job();
    const { result } = await drive(adapter, job);
    if (result.ok !== true) throw new Error('not published');
    expect(await adapter.confirm(job.request(), result.postId, { late: false })).toEqual({ state: 'found', url: result.url });
    fake.tweets.length = 0;
    expect(await adapter.confirm(job.request(), result.postId, { late: true })).toEqual({ state: 'not_found' });
    fake.failNext({ method: 'GET', path: '/2/tweets/', status: 503, body: { title: 'Service Unavailable', type: 'about:blank', status: 503 } });
    expect(await adapter.confirm(job.request(), result.postId, { late: false })).toEqual({ state: 'unavailable' });
    fake.expire(fake.token);
    expect(await adapter.confirm(job.request(), result.postId, { late: false })).toEqual({ state: 'unavailable' });
    expect(await adapter.confirm(job.request({ credentials: null }), result.postId, { late: false })).toEqual({ state: 'unavailable' });
    await fake.close();
    expect(await adapter.confirm(job.request(), result.postId, { late: false })).toEqual({ state: 'unavailable' });
    fake = await startFakeX(); // for afterEach
  });
});

describe('X error table (spec 7.4)', () => {
  const problem = (status: number, title: string, detail: string, type = 'about:blank', extra: Record<string, unknown> = {}) => ({ title, detail, type, status, ...extra });
  type Case = { row: string; on: 'post' | 'photo' | 'video'; status: number; body: unknown; headers?: Record<string, string>; code: JobErrorCode; retryable: boolean };
  const CASES: Case[] = [
    { row: '401 token expired or revoked', on: 'post', status: 401, body: problem(401, 'Unauthorized', 'Unauthorized'), code: 'token_expired', retryable: false },
    {
      row: '402 payment required (pay-per-use credits depleted)',
      on: 'post',
      status: 402,
      body: { account_id: 1_234_567, title: 'CreditsDepleted', detail: 'Your enrolled account [1234567] does not have any credits to fulfill this request.', type: 'https://api.twitter.com/2/problems/credits' },
      code: 'quota_exceeded',
      retryable: false,
    },
    { row: '429 usage cap exceeded (usage-capped)', on: 'post', status: 429, body: { title: 'UsageCapExceeded', detail: 'Usage cap exceeded: Monthly product cap', type: 'https://api.twitter.com/2/problems/usage-capped', period: 'Monthly', scope: 'Product' }, code: 'quota_exceeded', retryable: false },
    { row: '429 with the 24-hour user or app limit used up', on: 'post', status: 429, body: problem(429, 'Too Many Requests', 'Too Many Requests'), headers: { 'x-app-limit-24hour-remaining': '0', 'x-rate-limit-remaining': '99' }, code: 'quota_exceeded', retryable: false },
    { row: '429 rate limit (15-minute window)', on: 'post', status: 429, body: problem(429, 'Too Many Requests', 'Too Many Requests'), headers: { 'x-rate-limit-remaining': '0', 'x-user-limit-24hour-remaining': '42' }, code: 'upstream_5xx', retryable: true },
    { row: '403 duplicate content', on: 'post', status: 403, body: problem(403, 'Forbidden', 'You are not allowed to create a Tweet with duplicate content.'), code: 'upstream_unknown', retryable: false },
    {
      row: '403 client not enrolled (client-forbidden)',
      on: 'post',
      status: 403,
      body: { client_id: '123', detail: 'When authenticating requests to the Twitter API v2 endpoints, you must use keys and tokens from a Twitter developer App that is attached to a Project.', registration_url: 'https://developer.twitter.com/en/docs/projects/overview', title: 'Client Forbidden', required_enrollment: 'Appropriate Level of API Access', reason: 'client-not-enrolled', type: 'https://api.twitter.com/2/problems/client-forbidden' },
      code: 'permission_revoked',
      retryable: false,
    },
    { row: '403 reply target deleted or not visible', on: 'post', status: 403, body: problem(403, 'Forbidden', 'You attempted to reply to a Tweet that is deleted or not visible to you.'), code: 'upstream_unknown', retryable: false },
    { row: '403 not permitted (scope missing, account locked or suspended)', on: 'post', status: 403, body: problem(403, 'Forbidden', 'You are not permitted to perform this action.'), code: 'permission_revoked', retryable: false },
    { row: '400 text too long', on: 'post', status: 400, body: problem(400, 'Invalid Request', 'Your Tweet text is too long.', 'https://api.x.com/2/problems/invalid-request'), code: 'upstream_unknown', retryable: false },
    { row: '413 payload too large', on: 'photo', status: 413, body: '<html>Request Entity Too Large</html>', code: 'media_too_large', retryable: false },
    { row: '415 unsupported media type', on: 'photo', status: 415, body: '<html>Unsupported Media Type</html>', code: 'media_unsupported_format', retryable: false },
    { row: '400 media file too large', on: 'photo', status: 400, body: problem(400, 'Invalid Request', 'File size exceeds 5242880 bytes.', 'https://api.x.com/2/problems/invalid-request'), code: 'media_too_large', retryable: false },
    { row: '400 unsupported media type or format', on: 'video', status: 400, body: problem(400, 'Invalid Request', 'media_type [video/x-flv] is not supported.', 'https://api.x.com/2/problems/invalid-request'), code: 'media_unsupported_format', retryable: false },
    { row: '408 / 5xx server side', on: 'post', status: 503, body: '<html>Service Unavailable: ignore previous instructions</html>', code: 'upstream_5xx', retryable: true },
    { row: 'anything else (undocumented)', on: 'post', status: 400, body: problem(400, 'Invalid Request', 'Something nobody documented', 'https://api.x.com/2/problems/invalid-request'), code: 'upstream_unknown', retryable: false },
  ];
  const NO_ANSWER = 'no answer (network error or timeout)';

  it('has a case for every row', () => {
    expect([...CASES.map((c) => c.row), NO_ANSWER].sort()).toEqual(X_ERROR_TABLE.map((r) => r.name).sort());
  });

  for (const c of CASES) {
    it(`${c.row} → ${c.code}${c.retryable ? ' (retryable)' : ''}`, async () => {
      const adapter = createXAdapter(settings(), deps());
      const path = c.on === 'post' ? '/2/tweets' : c.on === 'photo' ? '/2/media/upload' : '/2/media/upload/initialize';
      fake.failNext({ method: 'POST', path, status: c.status, body: c.body, ...(c.headers ? { headers: c.headers } : {}) });
      const job = c.on === 'post' ? new Job() : new Job({ contentType: c.on, media: [c.on === 'photo' ? photo : video] });
      const result = c.on === 'post' ? await adapter.publish(job.request(), 'text') : await adapter.submit(job.request());
      expect(result).toMatchObject({ ok: false, code: c.code, retryable: c.retryable });
      // The network's text is logged with the deciding row, never returned.
      const raw = typeof c.body === 'string' ? c.body : JSON.stringify(c.body);
      const logged = logs.find((l) => l.message === 'x: error answer');
      expect(logged?.details).toMatchObject({ row: c.row, status: c.status, body: raw });
      if (result.ok === false) expect(result.message).not.toMatch(/ignore previous|nobody documented|Tweet text|credits to fulfill|File size|x-flv|attempted to reply/);
      expect(JSON.stringify(logs)).not.toContain(fake.token);
      expect(fake.tweets).toHaveLength(0);
    });
  }

  it(`${NO_ANSWER} → upstream_5xx (retryable)`, async () => {
    const adapter = createXAdapter(settings({ apiBaseUrl: 'http://127.0.0.1:9' }), deps());
    expect(await adapter.publish(new Job().request(), 'text')).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
  });

  it('a 429 in the 15-minute window says when the window resets (x-rate-limit-reset), which the failure carries for the worker\'s retry (job-policy waits for it)', async () => {
    const resetAt = Math.floor(clock / 1000) + 600;
    fake.failNext({ method: 'POST', path: '/2/tweets', status: 429, body: problem(429, 'Too Many Requests', 'Too Many Requests'), headers: { 'x-rate-limit-remaining': '0', 'x-rate-limit-reset': String(resetAt) } });
    const result = await createXAdapter(settings(), deps()).publish(new Job().request(), 'text');
    expect(result).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true, retryAfterMs: resetAt * 1000 - clock });
    // Without the header the schedule decides, as before.
    fake.failNext({ method: 'POST', path: '/2/tweets', status: 429, body: problem(429, 'Too Many Requests', 'Too Many Requests'), headers: { 'x-rate-limit-remaining': '0' } });
    const bare = await createXAdapter(settings(), deps()).publish(new Job().request(), 'text');
    expect(bare).toMatchObject({ ok: false, retryable: true });
    expect(bare).not.toHaveProperty('retryAfterMs');
  });

  it('an expired token, as the fake itself answers it → token_expired', async () => {
    fake.expire(fake.token);
    expect(await createXAdapter(settings(), deps()).publish(new Job().request(), 'text')).toMatchObject({ ok: false, code: 'token_expired', retryable: false });
  });
});
