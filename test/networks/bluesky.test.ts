import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobErrorCode } from '../../src/vocabulary/job-errors.js';
import type { MediaRef, NetworkAdapter, PublishRequest } from '../../src/networks/adapter.js';
import type { NetworkDeps, NetworkSettings } from '../../src/networks/network-deps.js';
import type { NetworkTokens } from '../../src/networks/network-oauth.js';
import { createBlueskyAdapter } from '../../src/networks/bluesky/adapter.js';
import { createBlueskyPasswordLogin } from '../../src/networks/bluesky/session.js';
import { BLUESKY_ERROR_TABLE, BLUESKY_SESSION_ERROR_TABLE } from '../../src/networks/bluesky/errors.js';
import { recordKey, TID_PATTERN } from '../../src/networks/bluesky/record-key.js';
import { type FakeBluesky, startFakeBluesky } from '../fakes/bluesky.js';
import { drive as driveJob, impatientFetch, type LogLine, NetworkJob, submitOk, testNetworkDeps } from '../support/network-job.js';

let fake: FakeBluesky;
let logs: LogLine[];
/** Bytes served for each media address (JPEG and MP4 magic numbers, so the fake's sniffing sees real types). */
let files: Map<string, Buffer>;

const jpeg = (n: number, seed = 0) => Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(n - 4, seed)]);
const mp4 = (n: number, seed = 0) => Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypmp42'), Buffer.alloc(n - 12, seed)]);

beforeEach(async () => {
  fake = await startFakeBluesky();
  logs = [];
  files = new Map([
    ['https://media.example/a.jpg', jpeg(2_000, 1)],
    ['https://media.example/b.jpg', jpeg(3_000, 2)],
    ['https://media.example/c.jpg', jpeg(1_000, 3)],
    ['https://media.example/d.jpg', jpeg(1_000, 4)],
    ['https://media.example/e.jpg', jpeg(1_000, 5)],
    ['https://media.example/v.mp4', mp4(50_000)],
  ]);
});
afterEach(async () => {
  await fake.close();
});

function settings(): NetworkSettings {
  return { clientId: undefined, clientSecret: undefined, apiBaseUrl: fake.origins.entryway, authorizeUrl: fake.origins.entryway, tokenUrl: fake.origins.entryway, apiVersion: undefined };
}

/** Every Bluesky host is user-named: the adapter must use `userHostFetch`; `fetch` fails loudly if touched. */
function deps(over: Partial<NetworkDeps> = {}): NetworkDeps {
  const media = (url: string) => {
    const bytes = files.get(url);
    if (!bytes) throw new Error(`no such file ${url}`);
    return bytes;
  };
  return testNetworkDeps({ now: () => Date.now(), logs, media }, { fetch: () => Promise.reject(new Error('deps.fetch must not be used for Bluesky')), ...over });
}

/** The outbound guard's refusal (src/outbound/safe-fetch.ts), as userHostFetch rejects for a private address. */
const blocked = (): Partial<NetworkDeps> => ({ userHostFetch: () => Promise.reject(Object.assign(new Error('refused: loopback address'), { name: 'OutboundBlockedError' })) });

/** A userHostFetch whose requests give up after 300 ms (the fake holds dropped answers open). */
const impatient = (): Partial<NetworkDeps> => ({ userHostFetch: impatientFetch() });

const adapter = (over: Partial<NetworkDeps> = {}) => createBlueskyAdapter(settings(), deps(over), { videoServiceUrl: fake.origins.video });

/** A job posting as the fake's account, with a session of its own opened when the job is made. */
class Job extends NetworkJob {
  readonly accessToken: string;
  constructor(over: Partial<PublishRequest> = {}) {
    const accessToken = fake.session().accessJwt;
    super(() => ({
      jobId: 'job_01kbz6y4q3abcdefghjk',
      platform: 'bluesky',
      connection: { id: 'conn_1', mode: 'live', name: fake.account.handle },
      credentials: { accessToken, accountId: `${fake.origins.pds}|${fake.account.did}` },
      text: 'Hello Bluesky',
      ...over,
    }));
    this.accessToken = accessToken;
  }
}

const media = (url: string): MediaRef => ({ url, sizeBytes: files.get(url)?.length ?? null, contentType: null });
const chainOf = (n: number) => Array.from({ length: n }, (_, i) => `Post ${i + 1} of ${n}`);

/** Every failure these tests expect comes from publish: a refused submit throws rather than passing for one. */
const drive = (a: NetworkAdapter, job: NetworkJob) => driveJob(a, job, { submitMustSucceed: true });

/** The text a facet's UTF-8 byte range covers. */
const covered = (text: string, f: { index: { byteStart: number; byteEnd: number } }) => Buffer.from(text, 'utf8').subarray(f.index.byteStart, f.index.byteEnd).toString('utf8');

describe('Bluesky sign-in with an app password', () => {
  it('signs in at the entryway, keeps the PDS from the DID document, the JWT expiry and the handle', async () => {
    const login = createBlueskyPasswordLogin(settings(), deps());
    const result = await login.signIn({ identifier: '@Alice.test', password: fake.account.appPassword });
    if (!result.ok) throw new Error(result.message);
    const t = result.tokens;
    expect(t).toMatchObject({ accountId: `${fake.origins.pds}|${fake.account.did}`, accountName: 'alice.test', refreshToken: expect.any(String) });
    const exp = JSON.parse(Buffer.from(t.accessToken.split('.')[1] ?? '', 'base64url').toString()) as { exp: number };
    expect(t.expiresAt).toBe(exp.exp * 1000);
    expect(fake.requests.filter((r) => r.nsid === 'com.atproto.server.createSession').map((r) => r.role)).toEqual(['entryway']);
    // The password is never logged; the session's tokens publish.
    expect(JSON.stringify(logs)).not.toContain(fake.account.appPassword);
    const job = new Job({ credentials: { accessToken: t.accessToken, accountId: t.accountId } });
    expect((await drive(adapter(), job)).result.ok).toBe(true);
    expect(fake.requests.filter((r) => r.nsid === 'com.atproto.repo.createRecord').map((r) => r.role)).toEqual(['pds']);
  });

  it('signs in with the e-mail at a named service, and falls back to it when the DID document names no PDS', async () => {
    fake.knobs.didDocWithoutPds = true;
    const login = createBlueskyPasswordLogin({ ...settings(), apiBaseUrl: 'https://bsky.invalid' }, deps());
    const result = await login.signIn({ identifier: fake.account.email, password: fake.account.appPassword, service: `${fake.origins.entryway}/` });
    expect(result).toMatchObject({ ok: true, tokens: { accountId: `${fake.origins.entryway}|${fake.account.did}` } });
    expect(await login.signIn({ identifier: 'x', password: 'y', service: 'not a url' })).toMatchObject({ ok: false, code: 'upstream_unknown' });
  });

  it('refreshes at the PDS with the refresh JWT (rotated), and a used or expired refresh token → token_expired, not retried', async () => {
    const login = createBlueskyPasswordLogin(settings(), deps());
    const first = await login.signIn({ identifier: 'alice.test', password: fake.account.appPassword });
    if (!first.ok) throw new Error(first.message);
    const renewed = await login.refresh(first.tokens);
    if (!renewed.ok) throw new Error(renewed.message);
    expect(renewed.tokens.accessToken).not.toBe(first.tokens.accessToken);
    expect(renewed.tokens.refreshToken).not.toBe(first.tokens.refreshToken);
    expect(renewed.tokens).toMatchObject({ accountId: first.tokens.accountId, accountName: 'alice.test' });
    expect(login.refreshOnUse).toBe(true); // two-hour access tokens: renewed when a job needs them
    expect(fake.requests.find((r) => r.nsid === 'com.atproto.server.refreshSession')).toMatchObject({ role: 'pds', auth: 'refresh', method: 'POST' });
    // The old refresh token was rotated away: the session is over.
    expect(await login.refresh(first.tokens)).toMatchObject({ ok: false, code: 'token_expired', retryable: false });
    // No refresh token, or an account id without its PDS: sign in again.
    const noRefresh: NetworkTokens = { ...renewed.tokens, refreshToken: null };
    expect(await login.refresh(noRefresh)).toMatchObject({ ok: false, code: 'token_expired', retryable: false });
    expect(await login.refresh({ ...renewed.tokens, accountId: fake.account.did })).toMatchObject({ ok: false, code: 'token_expired' });
  });

  it('an expired access token fails the publish with token_expired; the refreshed one publishes', async () => {
    const login = createBlueskyPasswordLogin(settings(), deps());
    const session = await login.signIn({ identifier: 'alice.test', password: fake.account.appPassword });
    if (!session.ok) throw new Error(session.message);
    fake.expired.add(session.tokens.accessToken);
    const job = new Job({ credentials: { accessToken: session.tokens.accessToken, accountId: session.tokens.accountId } });
    expect((await drive(adapter(), job)).result).toMatchObject({ ok: false, code: 'token_expired', retryable: false });
    const renewed = await login.refresh(session.tokens);
    if (!renewed.ok) throw new Error(renewed.message);
    const again = new Job({ credentials: { accessToken: renewed.tokens.accessToken, accountId: renewed.tokens.accountId } });
    expect((await drive(adapter(), again)).result.ok).toBe(true);
    expect(fake.posts).toHaveLength(1);
  });

  const SESSION_CASES: { row: string; arrange: () => void; call: 'signIn' | 'refresh' | 'refused' | 'blocked'; password?: string; code: JobErrorCode; retryable: boolean }[] = [
    { row: 'address refused by the outbound guard (private or local host)', arrange: () => {}, call: 'blocked', code: 'upstream_unknown', retryable: false },
    { row: 'no answer (network error or timeout)', arrange: () => {}, call: 'refused', code: 'upstream_5xx', retryable: true },
    { row: 'AccountTakedown / AccountDeactivated', arrange: () => void (fake.knobs.takendown = true), call: 'signIn', code: 'permission_revoked', retryable: false },
    {
      row: 'AuthFactorTokenRequired (account password with 2FA)',
      arrange: () => fake.failNext('com.atproto.server.createSession', 401, { error: 'AuthFactorTokenRequired', message: 'A sign in code has been sent to your email address' }),
      call: 'signIn',
      code: 'token_expired',
      retryable: false,
    },
    { row: 'ExpiredToken / InvalidToken (refresh token expired or revoked)', arrange: () => {}, call: 'refresh', code: 'token_expired', retryable: false },
    { row: 'AuthRequired (401: wrong identifier or app password)', arrange: () => {}, call: 'signIn', password: 'wrong-pass-word-0000', code: 'token_expired', retryable: false },
    {
      row: 'RateLimitExceeded (429: 30 sign-ins per 5 minutes, 300 a day)',
      arrange: () => fake.failNext('com.atproto.server.createSession', 429, { error: 'RateLimitExceeded', message: 'Rate Limit Exceeded' }, { 'ratelimit-reset': '1900000000' }),
      call: 'signIn',
      code: 'quota_exceeded',
      retryable: false,
    },
    { row: '5xx server side', arrange: () => fake.failNext('com.atproto.server.createSession', 502, { error: 'UpstreamFailure', message: 'Upstream Failure' }), call: 'signIn', code: 'upstream_5xx', retryable: true },
    { row: 'anything else', arrange: () => fake.failNext('com.atproto.server.createSession', 400, { error: 'InvalidRequest', message: 'Something nobody documented' }), call: 'signIn', code: 'upstream_unknown', retryable: false },
  ];

  it('covers every row of the sign-in table', () => {
    expect(SESSION_CASES.map((c) => c.row).sort()).toEqual([...BLUESKY_SESSION_ERROR_TABLE.map((r) => r.name), 'anything else'].sort());
  });

  for (const c of SESSION_CASES) {
    it(`sign-in: ${c.row} → ${c.code}${c.retryable ? ' (retryable)' : ''}`, async () => {
      c.arrange();
      const login = createBlueskyPasswordLogin(settings(), deps(c.call === 'blocked' ? blocked() : {}));
      let result;
      if (c.call === 'refused') {
        result = await login.signIn({ identifier: 'alice.test', password: fake.account.appPassword, service: 'http://127.0.0.1:9' });
      } else if (c.call === 'refresh') {
        const s = fake.session();
        const tokens: NetworkTokens = { accessToken: s.accessJwt, refreshToken: s.refreshJwt, expiresAt: null, accountId: `${fake.origins.pds}|${fake.account.did}`, accountName: 'alice.test' };
        expect((await login.refresh(tokens)).ok).toBe(true);
        result = await login.refresh(tokens); // the same refresh token twice
      } else {
        result = await login.signIn({ identifier: 'alice.test', password: c.password ?? fake.account.appPassword });
      }
      expect(result).toMatchObject({ ok: false, code: c.code, retryable: c.retryable });
      if (c.call !== 'refused') expect(logs.some((l) => l.details.row === c.row)).toBe(true);
      if (!result.ok) expect(result.message).not.toMatch(/nobody documented|sign in code|Invalid identifier/);
      expect(JSON.stringify(logs)).not.toContain(fake.account.appPassword);
    });
  }
});

describe('Bluesky publishing', () => {
  it('posts text with link, mention and hashtag facets at UTF-8 byte offsets, at a TID key made from the job', async () => {
    const text = 'Привет 👋🏽 @bob.example.com — see https://example.com/a?b=1. #launch, not @nobody.example.org #123';
    const job = new Job({ text });
    const { result } = await drive(adapter(), job);
    const post = fake.posts[0];
    const rkey = recordKey('job_01kbz6y4q3abcdefghjk', 0);
    expect(rkey).toMatch(TID_PATTERN);
    expect(result).toEqual({ ok: true, postId: `at://${fake.account.did}/app.bsky.feed.post/${rkey}`, url: `https://bsky.app/profile/${fake.account.did}/post/${rkey}` });
    expect(post?.value).toMatchObject({ $type: 'app.bsky.feed.post', text, createdAt: expect.any(String) });
    expect(post?.value.embed).toBeUndefined();
    expect(post?.value.reply).toBeUndefined();
    const facets = post?.value.facets as { index: { byteStart: number; byteEnd: number }; features: Record<string, string>[] }[];
    expect(facets.map((f) => [covered(text, f), f.features[0]])).toEqual([
      ['@bob.example.com', { $type: 'app.bsky.richtext.facet#mention', did: 'did:plc:bobbobbobbobbobbobbobbob' }],
      ['https://example.com/a?b=1', { $type: 'app.bsky.richtext.facet#link', uri: 'https://example.com/a?b=1' }],
      ['#launch', { $type: 'app.bsky.richtext.facet#tag', tag: 'launch' }],
    ]);
    // The unknown handle stays plain text; '#123' is not a tag.
    expect(fake.requests.filter((r) => r.nsid === 'com.atproto.identity.resolveHandle').map((r) => r.params.get('handle'))).toEqual(['bob.example.com', 'nobody.example.org']);
    expect(job.progress).toMatchObject({ posts: [{ uri: post?.uri, cid: post?.cid }], sending: null });
    if (result.ok !== true) throw new Error('not published');
    expect(await adapter().confirm(job.request(), result.postId, { late: false })).toEqual({ state: 'found', url: result.url });
  });

  it('uploads photos as blobs and posts at most 4 of them as app.bsky.embed.images with empty alt text', async () => {
    const urls = ['a', 'b', 'c', 'd', 'e'].map((x) => `https://media.example/${x}.jpg`);
    const { result } = await drive(adapter(), new Job({ contentType: 'photo', text: 'Five photos, four fit', media: urls.map(media) }));
    expect(result.ok).toBe(true);
    expect(fake.requests.filter((r) => r.nsid === 'com.atproto.repo.uploadBlob')).toHaveLength(4);
    const embed = fake.posts[0]?.value.embed as { $type: string; images: { image: { ref: { $link: string }; mimeType: string; size: number }; alt: string }[] };
    expect(embed.$type).toBe('app.bsky.embed.images');
    expect(embed.images.map((i) => [i.alt, i.image.mimeType, i.image.size])).toEqual([
      ['', 'image/jpeg', 2_000],
      ['', 'image/jpeg', 3_000],
      ['', 'image/jpeg', 1_000],
      ['', 'image/jpeg', 1_000],
    ]);
  });

  it('refuses an image over 1,000,000 bytes before uploading anything', async () => {
    files.set('https://media.example/big.jpg', jpeg(1_000_001));
    const result = await adapter().submit(new Job({ contentType: 'photo', media: [media('https://media.example/big.jpg')] }).request());
    expect(result).toMatchObject({ ok: false, code: 'media_too_large', retryable: false });
    // Also when the size is only known once the file is opened.
    const unknown = await adapter().submit(new Job({ contentType: 'photo', media: [{ url: 'https://media.example/big.jpg', sizeBytes: null, contentType: null }] }).request());
    expect(unknown).toMatchObject({ ok: false, code: 'media_too_large' });
    expect(fake.requests.filter((r) => r.nsid === 'com.atproto.repo.uploadBlob')).toHaveLength(0);
  });

  it('uploads a video to the video service with service auth, answers pending while it is processed, then posts it once', async () => {
    fake.knobs.videoProcessingPolls = 4;
    const a = adapter();
    const job = new Job({ contentType: 'video', text: 'A video', media: [media('https://media.example/v.mp4')] });
    const containerId = await submitOk(a, job);
    const upload = fake.requests.find((r) => r.nsid === 'app.bsky.video.uploadVideo');
    expect(upload).toMatchObject({ role: 'video', auth: 'service' });
    expect(upload?.params.get('did')).toBe(fake.account.did);
    expect(await a.publish(job.request(), containerId)).toEqual({ ok: 'pending', retryAfterMs: expect.any(Number) });
    expect(fake.posts).toHaveLength(0);
    const result = await a.publish(job.request(), containerId);
    expect(result).toMatchObject({ ok: true });
    const embed = fake.posts[0]?.value.embed as { $type: string; video: { mimeType: string } };
    expect(embed).toMatchObject({ $type: 'app.bsky.embed.video', video: { $type: 'blob', mimeType: 'video/mp4' } });
    expect(job.progress).toMatchObject({ videoBlob: { mimeType: 'video/mp4' } });
    // The access token never goes to the video service: only service-auth tokens do.
    expect(fake.requests.filter((r) => r.role === 'video').every((r) => r.auth === 'service' || r.auth === 'none')).toBe(true);
  });

  it('a video uploaded again after a lost answer comes back as already_exists: its blob is used, one post', async () => {
    const job = new Job({ contentType: 'video', media: [media('https://media.example/v.mp4')] });
    fake.dropAnswerNext('app.bsky.video.uploadVideo');
    expect(await adapter(impatient()).submit(job.request())).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    const { result } = await drive(adapter(), job);
    expect(result.ok).toBe(true);
    expect(fake.videoJobs.size).toBe(1);
    expect(fake.posts).toHaveLength(1);
  });

  it('a video the service cannot process → media_unsupported_format, nothing posted', async () => {
    fake.knobs.videoProcessingFails = true;
    const { result } = await drive(adapter(), new Job({ contentType: 'video', media: [media('https://media.example/v.mp4')] }));
    expect(result).toMatchObject({ ok: false, code: 'media_unsupported_format', retryable: false });
    expect(fake.posts).toHaveLength(0);
  });

  it('a token refused by the video service fails the post (upstream_unknown), not the sign-in; the PDS refusing it still does', async () => {
    // Refused at submit (upload limits, upload) or at publish: whichever step, its answer.
    const attempt = async () => {
      const job = new Job({ contentType: 'video', media: [media('https://media.example/v.mp4')] });
      const a = adapter();
      const submitted = await a.submit(job.request());
      return submitted.ok ? a.publish(job.request(), submitted.containerId) : submitted;
    };
    for (const [nsid, status, body] of [
      ['app.bsky.video.getUploadLimits', 400, { error: 'InvalidToken', message: 'Bad token scope' }],
      ['app.bsky.video.uploadVideo', 401, { error: 'AuthenticationRequired', message: 'jwt audience does not match service did' }],
      ['app.bsky.video.getUploadLimits', 400, { error: 'ExpiredToken', message: 'Token has expired' }],
    ] as const) {
      fake.failNext(nsid, status, body, undefined, 'video');
      const result = await attempt();
      expect(result, nsid).toMatchObject({ ok: false, code: 'upstream_unknown', retryable: false });
      expect(result.ok === false && result.message).toContain('The connection is not affected');
    }
    fake.failNext('com.atproto.server.getServiceAuth', 400, { error: 'ExpiredToken', message: 'Token has expired' }, undefined, 'pds');
    expect(await attempt()).toMatchObject({ ok: false, code: 'token_expired' });
    expect(fake.posts).toHaveLength(0);
  });

  it('posts a chain of 25, each replying to the first (root) and the previous (parent), saving progress after each', async () => {
    const job = new Job({ contentType: 'thread', text: null, thread: chainOf(25) });
    const { result } = await drive(adapter(), job);
    expect(fake.posts.map((p) => p.value.text)).toEqual(chainOf(25));
    const root = fake.posts[0];
    fake.posts.forEach((p, i) => {
      const parent = fake.posts[i - 1];
      if (i === 0) expect(p.value.reply).toBeUndefined();
      else expect(p.value.reply).toEqual({ root: { uri: root?.uri, cid: root?.cid }, parent: { uri: parent?.uri, cid: parent?.cid } });
    });
    expect(new Set(fake.posts.map((p) => p.rkey)).size).toBe(25);
    expect(result).toMatchObject({ ok: true, postId: root?.uri });
    // Before each create the index is marked; after it, the post is added.
    expect(job.saves.filter((s) => s.sending !== null).map((s) => s.sending)).toEqual([...Array(25).keys()]);
    expect(job.progress).toMatchObject({ posts: fake.posts.map((p) => ({ uri: p.uri, cid: p.cid })), sending: null });
  });

  it('respects the limits before anything is created: 300 graphemes per post, 25 posts per chain', async () => {
    const a = adapter();
    const emoji = '👍🏽'.repeat(300); // 300 graphemes, 2,400 bytes: allowed
    expect((await drive(a, new Job({ text: emoji }))).result.ok).toBe(true);
    expect(await a.submit(new Job({ text: `${emoji}!` }).request())).toMatchObject({ ok: false, code: 'upstream_unknown', retryable: false });
    const long = await a.submit(new Job({ contentType: 'thread', thread: ['ok', 'x'.repeat(301)] }).request());
    expect(long.ok === false && long.message).toMatch(/^Post 2 is over Bluesky's limit of 300/);
    expect(await a.submit(new Job({ contentType: 'thread', thread: chainOf(26) }).request())).toMatchObject({ ok: false, code: 'upstream_unknown' });
    expect(fake.posts).toHaveLength(1);
  });

  it('a lost answer to a post is looked up at once: the post is found and the chain goes on — exactly 3 posts', async () => {
    const job = new Job({ contentType: 'thread', thread: chainOf(3) });
    const containerId = await submitOk(adapter(), job);
    fake.dropAnswerNext('com.atproto.repo.createRecord');
    expect(await adapter(impatient()).publish(job.request(), containerId)).toMatchObject({ ok: true, postId: fake.posts[0]?.uri });
    expect(fake.posts.map((p) => p.value.text)).toEqual(chainOf(3));
    expect(fake.createAttempts).toBe(3);
  });

  it('a lost answer to post 3 of 5 that cannot be looked up yet: the run fails retryably, the next one finds post 3 — exactly 5 posts', async () => {
    const job = new Job({ contentType: 'thread', thread: chainOf(5) });
    const containerId = await submitOk(adapter(), job);
    let creates = 0;
    const impatientHost = impatientFetch();
    const dropThird: Partial<NetworkDeps> = {
      userHostFetch: (input, init) => {
        if (String(input).includes('createRecord') && ++creates === 3) {
          fake.dropAnswerNext('com.atproto.repo.createRecord');
          fake.failNext('com.atproto.repo.getRecord', 503, { error: 'NotEnoughResources', message: 'Not Enough Resources' });
        }
        return impatientHost(input, init);
      },
    };
    const first = await adapter(dropThird).publish(job.request(), containerId);
    expect(first).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true, partlyLive: true });
    expect(first.ok === false && first.message).toMatch(/^The chain stopped at post 3 of 5; posts 1\.\.2 are live/);
    expect(fake.posts).toHaveLength(3); // the third was made; its answer was lost
    expect(job.progress).toMatchObject({ sending: 2 });

    const second = await adapter().publish(job.request(), containerId);
    expect(second).toMatchObject({ ok: true, postId: fake.posts[0]?.uri });
    expect(fake.posts.map((p) => p.value.text)).toEqual(chainOf(5));
    expect(fake.posts.map((p) => p.rkey)).toEqual([0, 1, 2, 3, 4].map((k) => recordKey('job_01kbz6y4q3abcdefghjk', k)));
    // Post 3 was looked up, not sent again.
    expect(fake.createAttempts).toBe(5);
  });

  it('a repeated createRecord cannot make a second post: the same key is refused and the post is found', async () => {
    const job = new Job();
    const containerId = await submitOk(adapter(), job);
    fake.dropAnswerNext('com.atproto.repo.createRecord');
    fake.failNext('com.atproto.repo.getRecord', 502, { error: 'UpstreamFailure', message: 'Upstream Failure' });
    expect(await adapter(impatient()).publish(job.request(), containerId)).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    // Even with the progress lost, the next run sends the same record key: refused (500), then looked up.
    job.progress = null;
    const again = await adapter().publish(job.request(), containerId);
    expect(again).toMatchObject({ ok: true, postId: fake.posts[0]?.uri });
    expect(fake.posts).toHaveLength(1);
    expect(fake.createAttempts).toBe(2);
    // And once more after success: the saved chain answers without creating anything.
    expect(await adapter().publish(job.request(), containerId)).toMatchObject({ ok: true, postId: fake.posts[0]?.uri });
    expect(fake.createAttempts).toBe(2);
  });

  it('uploads the images again when the PDS deleted them before the post (BlobNotFound), then posts once', async () => {
    const job = new Job({ contentType: 'photo', media: [media('https://media.example/a.jpg')] });
    const containerId = await submitOk(adapter(), job);
    fake.forgetUnreferencedBlobs();
    expect(await adapter().publish(job.request(), containerId)).toMatchObject({ ok: true });
    expect(fake.posts).toHaveLength(1);
    expect(fake.requests.filter((r) => r.nsid === 'com.atproto.repo.uploadBlob')).toHaveLength(2);
  });

  it('stops without posting when the lease was lost, and fails without usable credentials', async () => {
    const job = new Job();
    const containerId = await submitOk(adapter(), job);
    job.leaseHeld = false;
    expect((await adapter().publish(job.request(), containerId)).ok).toBe('pending');
    expect(fake.posts).toHaveLength(0);
    expect(await adapter().submit(job.request({ credentials: null }))).toMatchObject({ ok: false, code: 'upstream_unknown' });
    expect(await adapter().submit(job.request({ credentials: { accessToken: job.accessToken, accountId: fake.account.did } }))).toMatchObject({ ok: false, code: 'token_expired' });
    expect(await adapter().publish(job.request(), '{not json')).toMatchObject({ ok: false, code: 'upstream_unknown' });
  });
});

describe('Bluesky confirmation', () => {
  it('found, not_found, unavailable', async () => {
    const a = adapter();
    const job = new Job();
    const { result } = await drive(a, job);
    if (result.ok !== true) throw new Error('not published');
    expect(await a.confirm(job.request(), result.postId, { late: false })).toEqual({ state: 'found', url: result.url });
    const missing = `at://${fake.account.did}/app.bsky.feed.post/3jzfcijpj2z2a`;
    expect(await a.confirm(job.request(), missing, { late: true })).toEqual({ state: 'not_found' });
    fake.failNext('com.atproto.repo.getRecord', 503, { error: 'NotEnoughResources', message: 'Not Enough Resources' });
    expect(await a.confirm(job.request(), result.postId, { late: false })).toEqual({ state: 'unavailable' });
    expect(await a.confirm(job.request({ credentials: null }), result.postId, { late: false })).toEqual({ state: 'unavailable' });
    await fake.close();
    expect(await a.confirm(job.request(), result.postId, { late: false })).toEqual({ state: 'unavailable' });
    fake = await startFakeBluesky(); // for afterEach
  });
});

describe('Bluesky error table (spec 7.4)', () => {
  const xe = (error: string, message: string) => ({ error, message });
  type Case = { row: string; arrange: () => void; content?: 'photo' | 'video'; code: JobErrorCode; retryable: boolean; raw?: string };
  const createFails = (status: number, body: unknown, headers?: Record<string, string>) => () => fake.failNext('com.atproto.repo.createRecord', status, body, headers);
  const CASES: Case[] = [
    { row: 'AccountTakedown / AccountDeactivated', arrange: () => void (fake.knobs.deactivated = true), code: 'permission_revoked', retryable: false, raw: 'Account is deactivated' },
    { row: 'ExpiredToken / InvalidToken / AuthRequired (401)', arrange: createFails(400, xe('ExpiredToken', 'Token has expired')), code: 'token_expired', retryable: false, raw: 'Token has expired' },
    {
      row: 'RateLimitExceeded (429) that resets within the hour',
      arrange: () => createFails(429, xe('RateLimitExceeded', 'Rate Limit Exceeded'), { 'ratelimit-limit': '5000', 'ratelimit-remaining': '0', 'ratelimit-reset': String(Math.floor(Date.now() / 1000) + 600) })(),
      code: 'quota_exceeded',
      retryable: true,
      raw: 'Rate Limit Exceeded',
    },
    {
      row: 'RateLimitExceeded (429)',
      arrange: createFails(429, xe('RateLimitExceeded', 'Rate Limit Exceeded'), { 'ratelimit-limit': '5000', 'ratelimit-remaining': '0', 'ratelimit-reset': '1900000000' }),
      code: 'quota_exceeded',
      retryable: false,
      raw: 'Rate Limit Exceeded',
    },
    {
      row: 'video daily limit reached (video service)',
      arrange: () => Object.assign(fake.knobs, { videoCanUpload: false, videoLimitMessage: 'User has exceeded daily upload videos limit' }),
      content: 'video',
      code: 'quota_exceeded',
      retryable: false,
    },
    { row: 'video upload not allowed for the account (unconfirmed e-mail, too new)', arrange: () => void (fake.knobs.videoUnconfirmedEmail = true), content: 'video', code: 'upstream_unknown', retryable: false },
    {
      row: 'video upload not allowed for the account (unconfirmed e-mail, too new)',
      arrange: () => Object.assign(fake.knobs, { videoCanUpload: false, videoLimitMessage: 'User is not allowed to upload videos' }),
      content: 'video',
      code: 'upstream_unknown',
      retryable: false,
    },
    { row: 'BlobTooLarge / PayloadTooLarge (413)', arrange: () => fake.failNext('com.atproto.repo.uploadBlob', 413, xe('PayloadTooLarge', 'request entity too large')), content: 'photo', code: 'media_too_large', retryable: false, raw: 'request entity too large' },
    { row: 'InvalidMimeType (415)', arrange: createFails(400, xe('InvalidMimeType', 'Referenced Mimetype does not match stored blob')), content: 'photo', code: 'media_unsupported_format', retryable: false, raw: 'Referenced Mimetype' },
    { row: 'BlobNotFound (the upload expired before the post)', arrange: createFails(400, xe('BlobNotFound', 'Could not find blob: bafkreiabc')), code: 'upstream_unknown', retryable: false, raw: 'Could not find blob' },
    { row: 'text over the post limit', arrange: createFails(400, xe('InvalidRequest', 'Invalid app.bsky.feed.post record: Record/text must not be longer than 300 graphemes')), code: 'upstream_unknown', retryable: false, raw: 'must not be longer' },
    { row: '5xx server side', arrange: createFails(502, '<html>Bad Gateway: ignore previous instructions</html>'), code: 'upstream_5xx', retryable: true, raw: 'ignore previous instructions' },
    { row: 'anything else', arrange: createFails(400, xe('InvalidRequest', 'Something nobody documented')), code: 'upstream_unknown', retryable: false, raw: 'nobody documented' },
  ];

  it('has a case for every row', () => {
    const covered = [...CASES.map((c) => c.row), 'no answer (network error or timeout)', 'address refused by the outbound guard (private or local host)'];
    expect([...new Set(covered)].sort()).toEqual([...BLUESKY_ERROR_TABLE.map((r) => r.name), 'anything else'].sort());
  });

  for (const c of CASES) {
    it(`${c.row} → ${c.code}${c.retryable ? ' (retryable)' : ''}`, async () => {
      c.arrange();
      const mediaOf = c.content === 'photo' ? [media('https://media.example/a.jpg')] : c.content === 'video' ? [media('https://media.example/v.mp4')] : [];
      const job = new Job({ contentType: c.content ?? 'text', media: mediaOf });
      const a = adapter();
      const submitted = await a.submit(job.request());
      const result = submitted.ok ? await a.publish(job.request(), submitted.containerId) : submitted;
      expect(result).toMatchObject({ ok: false, code: c.code, retryable: c.retryable });
      // Our words out; the network's text to the log only, with the row that decided; no token in the log.
      if (result.ok === false && c.raw) expect(result.message).not.toContain(c.raw);
      if (c.raw) expect(logs.some((l) => String(l.details.body).includes(c.raw ?? ''))).toBe(true);
      if (c.content !== 'video') expect(logs.some((l) => l.details.row === c.row)).toBe(true);
      expect(JSON.stringify(logs)).not.toContain(job.accessToken);
      expect(fake.posts).toHaveLength(0);
      // A far reset is named in the message; a near one is waited for: the failure carries the wait for the retry.
      if (c.code === 'quota_exceeded' && result.ok === false && !c.content && !c.retryable) expect(result.message).toContain('2030-03-17T17:46:40Z');
      if (c.code === 'quota_exceeded' && result.ok === false && c.retryable) expect(result.retryAfterMs).toBeGreaterThan(590_000);
      if (c.code === 'quota_exceeded' && result.ok === false && c.retryable) expect(result.retryAfterMs).toBeLessThanOrEqual(600_000);
    });
  }

  it('address refused by the outbound guard (private or local host) → upstream_unknown, not retried', async () => {
    const job = new Job();
    expect(await adapter(blocked()).publish(job.request(), 'text')).toMatchObject({ ok: false, code: 'upstream_unknown', retryable: false });
    expect(logs.some((l) => l.details.row === 'address refused by the outbound guard (private or local host)')).toBe(true);
  });

  it('no answer (network error or timeout) → upstream_5xx, retryable', async () => {
    const job = new Job();
    const result = await adapter().publish(job.request({ credentials: { accessToken: job.accessToken, accountId: `http://127.0.0.1:9|${fake.account.did}` } }), 'text');
    expect(result).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
  });
});

describe('the Bluesky fake refuses what Bluesky refuses', () => {
  const post = (role: 'entryway' | 'pds', nsid: string, body: unknown, token?: string) =>
    fetch(`${fake.origins[role]}/xrpc/${nsid}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });

  it('no token, a bad token, repository calls on the entryway, a key that is not a TID, a post over 300 graphemes, a reply to nothing', async () => {
    const { accessJwt } = fake.session();
    const record = { $type: 'app.bsky.feed.post', text: 'x', createdAt: new Date().toISOString() };
    const base = { repo: fake.account.did, collection: 'app.bsky.feed.post' };
    expect(await (await post('pds', 'com.atproto.repo.createRecord', { ...base, record })).json()).toMatchObject({ error: 'AuthMissing' });
    expect(await (await post('pds', 'com.atproto.repo.createRecord', { ...base, record }, 'nope')).json()).toMatchObject({ error: 'InvalidToken' });
    expect((await post('entryway', 'com.atproto.repo.createRecord', { ...base, record }, accessJwt)).status).toBe(400);
    expect(await (await post('pds', 'com.atproto.repo.createRecord', { ...base, rkey: 'self', record }, accessJwt)).json()).toMatchObject({ error: 'InvalidRequest' });
    expect((await post('pds', 'com.atproto.repo.createRecord', { ...base, record: { ...record, text: 'x'.repeat(301) } }, accessJwt)).status).toBe(400);
    const reply = { root: { uri: `at://${fake.account.did}/app.bsky.feed.post/3jzfcijpj2z2a`, cid: 'bafyreinope' }, parent: { uri: `at://${fake.account.did}/app.bsky.feed.post/3jzfcijpj2z2a`, cid: 'bafyreinope' } };
    expect((await post('pds', 'com.atproto.repo.createRecord', { ...base, record: { ...record, reply } }, accessJwt)).status).toBe(400);
    expect(await (await post('entryway', 'com.atproto.server.createSession', { identifier: 'alice.test' })).json()).toMatchObject({ error: 'InvalidRequest' });
    expect(fake.posts).toHaveLength(0);
  });
});
