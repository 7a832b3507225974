import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobErrorCode } from '../../src/vocabulary/job-errors.js';
import type { NetworkAdapter, PublishRequest, Published, Submitted } from '../../src/networks/adapter.js';
import { createLinkedinAdapter } from '../../src/networks/linkedin/adapter.js';
import { createLinkedinOAuth } from '../../src/networks/linkedin/oauth.js';
import { LINKEDIN_ERROR_TABLE, LINKEDIN_OAUTH_ERROR_TABLE } from '../../src/networks/linkedin/errors.js';
import type { NetworkDeps, NetworkSettings } from '../../src/networks/network-deps.js';
import { startFakeLinkedin, type FakeLinkedin } from '../fakes/linkedin.js';
import { bufferSource } from '../../src/networks/media-source.js';
import { withinDeadline } from '../../src/outbound/deadline.js';

let fake: FakeLinkedin;
let clock: number;
let logs: { message: string; details: Record<string, unknown> }[];

beforeEach(async () => {
  fake = await startFakeLinkedin();
  clock = Date.now();
  logs = [];
});
afterEach(async () => {
  await fake.close();
});

function settings(over: Partial<NetworkSettings> = {}): NetworkSettings {
  return { clientId: fake.clientId, clientSecret: fake.clientSecret, apiBaseUrl: fake.baseUrl, authorizeUrl: fake.authorizeUrl, tokenUrl: fake.tokenUrl, apiVersion: '202510', ...over };
}

function deps(over: Partial<NetworkDeps> = {}): NetworkDeps {
  return {
    fetch: globalThis.fetch,
    userHostFetch: globalThis.fetch,
    now: () => clock,
    sleep: async () => {},
    log: (message, details) => void logs.push({ message, details }),
    openMedia: async () => bufferSource(Buffer.from('0123456789')),
    ...over,
  };
}

/** A fetch whose every request gives up after 300 ms (the fake hangs on purpose). */
const impatientFetch: typeof fetch = (input, init) => withinDeadline(300, (signal) => globalThis.fetch(input, { ...init, signal }), init?.signal ?? undefined);

/** One job as the worker keeps it: progress saved durably between calls. */
class Job {
  progress: Record<string, unknown> | null = null;
  constructor(private readonly base: Partial<PublishRequest> = {}) {}
  request(over: Partial<PublishRequest> = {}): PublishRequest {
    return {
      jobId: 'job_1',
      attempt: 1,
      platform: 'linkedin',
      connection: { id: 'conn_1', mode: 'live', name: 'Ada' },
      credentials: { accessToken: fake.token, accountId: fake.member.urn },
      contentType: 'text',
      text: 'Hello LinkedIn',
      title: null,
      thread: null,
      media: [],
      sandboxOutcome: null,
      progress: this.progress,
      saveProgress: async (p) => {
        this.progress = structuredClone(p);
        return true;
      },
      ...this.base,
      ...over,
    };
  }
}

const photo = { url: 'https://media.example/p.jpg', sizeBytes: 10, contentType: 'image/jpeg' };
const video = { url: 'https://media.example/v.mp4', sizeBytes: 10, contentType: 'video/mp4' };

async function submitOk(adapter: NetworkAdapter, job: Job): Promise<string> {
  const s: Submitted = await adapter.submit(job.request());
  if (!s.ok) throw new Error(`submit failed: ${s.code}`);
  return s.containerId;
}

/** Submit, then publish until it is no longer pending (as the worker would, later each time). */
async function drive(adapter: NetworkAdapter, job: Job): Promise<{ result: Published; pendings: number }> {
  const containerId = await submitOk(adapter, job);
  let pendings = 0;
  for (;;) {
    const result = await adapter.publish(job.request(), containerId);
    if (result.ok !== 'pending') return { result, pendings };
    pendings++;
    if (pendings > 10) throw new Error('still pending');
  }
}

const unescape = (s: string) => s.replace(/\\(.)/gsu, '$1');

describe('LinkedIn OAuth', () => {
  it('sends the member to the authorization page with our scopes and state', async () => {
    const oauth = createLinkedinOAuth(settings(), deps());
    const url = oauth.authorizationUrl({ state: 'st_1', redirectUri: 'https://svc.example/cb' });
    expect(url.startsWith(`${fake.authorizeUrl}?`)).toBe(true);
    const res = await fetch(url, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const q = fake.authorizeRequests[0];
    expect(q?.get('response_type')).toBe('code');
    expect(q?.get('client_id')).toBe(fake.clientId);
    expect(q?.get('scope')).toBe('openid profile w_member_social');
    expect(q?.get('state')).toBe('st_1');
    expect(new URL(res.headers.get('location') ?? '').searchParams.get('state')).toBe('st_1');
  });

  it('exchanges the code for a 60-day token and reads the member with /v2/userinfo; there is no refresh', async () => {
    const oauth = createLinkedinOAuth(settings(), deps());
    const res = await fetch(oauth.authorizationUrl({ state: 's', redirectUri: 'https://svc.example/cb' }), { redirect: 'manual' });
    const code = new URL(res.headers.get('location') ?? '').searchParams.get('code') ?? '';
    const result = await oauth.exchangeCode({ state: 'state_1', code, redirectUri: 'https://svc.example/cb' });
    expect(result).toEqual({
      ok: true,
      tokens: { accessToken: expect.stringMatching(/^AQV-issued-/), refreshToken: null, expiresAt: clock + 5_183_999_000, accountId: fake.member.urn, accountName: 'Ada Lovelace' },
    });
    expect(oauth.refresh).toBeUndefined();
    // The same code twice: the member must consent again.
    const again = await oauth.exchangeCode({ state: 'state_1', code, redirectUri: 'https://svc.example/cb' });
    expect(again).toMatchObject({ ok: false, code: 'token_expired', retryable: false });
  });

  const OAUTH_CASES: { why: string; arrange: () => void; settings?: Partial<NetworkSettings>; code: JobErrorCode; retryable: boolean }[] = [
    { why: 'invalid_grant or expired/used authorization code', arrange: () => {}, code: 'token_expired', retryable: false },
    { why: 'access_denied by the member', arrange: () => fake.failNext({ method: 'POST', path: '/oauth/v2/accessToken', status: 400, body: { error: 'access_denied', error_description: 'The member refused' } }), code: 'permission_revoked', retryable: false },
    { why: '429 throttled', arrange: () => fake.failNext({ method: 'POST', path: '/oauth/v2/accessToken', status: 429, body: { error: 'too_many_requests' } }), code: 'quota_exceeded', retryable: false },
    { why: '5xx server side', arrange: () => fake.failNext({ method: 'POST', path: '/oauth/v2/accessToken', status: 503, body: { error: 'temporarily_unavailable' } }), code: 'upstream_5xx', retryable: true },
    { why: 'invalid_client, invalid_request and anything else', arrange: () => {}, settings: { clientSecret: 'wrong' }, code: 'upstream_unknown', retryable: false },
  ];
  it('covers every row of the token endpoint table', () => {
    expect(OAUTH_CASES.map((c) => c.why).sort()).toEqual(LINKEDIN_OAUTH_ERROR_TABLE.map((r) => r.name).sort());
  });
  for (const c of OAUTH_CASES) {
    it(`token endpoint: ${c.why} → ${c.code}`, async () => {
      c.arrange();
      const oauth = createLinkedinOAuth(settings(c.settings), deps());
      const result = await oauth.exchangeCode({ state: 'state_1', code: 'AQT-never-issued', redirectUri: 'https://svc.example/cb' });
      expect(result).toMatchObject({ ok: false, code: c.code, retryable: c.retryable });
    });
  }

  it('maps a refused /v2/userinfo with the API table and fails without configuration', async () => {
    const oauth = createLinkedinOAuth(settings(), deps());
    const res = await fetch(oauth.authorizationUrl({ state: 's', redirectUri: 'https://svc.example/cb' }), { redirect: 'manual' });
    const code = new URL(res.headers.get('location') ?? '').searchParams.get('code') ?? '';
    fake.failNext({ method: 'GET', path: '/v2/userinfo', status: 403, body: { status: 403, code: 'ACCESS_DENIED', message: 'Not enough permissions to access: userinfo' } });
    expect(await oauth.exchangeCode({ state: 'state_1', code, redirectUri: 'https://svc.example/cb' })).toMatchObject({ ok: false, code: 'permission_revoked' });
    const unconfigured = createLinkedinOAuth(settings({ clientSecret: undefined }), deps());
    expect(await unconfigured.exchangeCode({ state: 'state_1', code: 'x', redirectUri: 'https://svc.example/cb' })).toMatchObject({ ok: false, code: 'upstream_unknown' });
  });
});

describe('the fake refuses what LinkedIn refuses', () => {
  const get = (path: string, headers: Record<string, string>) => fetch(`${fake.baseUrl}${path}`, { headers });
  const full = () => ({ Authorization: `Bearer ${fake.token}`, 'LinkedIn-Version': '202510', 'X-Restli-Protocol-Version': '2.0.0' });

  it('without LinkedIn-Version, with a sunset one, without the Rest.li 2.0.0 header, a bad token or an unencoded URN', async () => {
    const without = (name: string) => Object.fromEntries(Object.entries(full()).filter(([k]) => k !== name));
    const noVersion = without('LinkedIn-Version');
    let res = await get('/rest/posts/urn%3Ali%3Ashare%3A1', noVersion);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ status: 400, code: 'VERSION_MISSING' });
    res = await get('/rest/posts/urn%3Ali%3Ashare%3A1', { ...full(), 'LinkedIn-Version': '202401' });
    expect(await res.json()).toMatchObject({ status: 426, code: 'NONEXISTENT_VERSION' });
    const noProtocol = without('X-Restli-Protocol-Version');
    res = await get('/rest/posts/urn%3Ali%3Ashare%3A1', noProtocol);
    expect(res.status).toBe(400);
    res = await get('/rest/posts/urn%3Ali%3Ashare%3A1', { ...full(), Authorization: 'Bearer nope' });
    expect(await res.json()).toMatchObject({ status: 401, code: 'INVALID_ACCESS_TOKEN', serviceErrorCode: 65600 });
    res = await get('/rest/posts/urn:li:share:1', full());
    expect(res.status).toBe(400);
    expect(fake.postAttempts).toBe(0);
  });
});

describe('LinkedIn publishing', () => {
  it('publishes a text post with escaped commentary, answers its public URL and confirms it', async () => {
    const adapter = createLinkedinAdapter(settings(), deps());
    const text = 'Launch day (finally) — thanks @team! #launch a_b [1] <3> ~ * | {x} \\ C# done';
    const job = new Job({ text });
    const { result } = await drive(adapter, job);
    expect(result).toMatchObject({ ok: true, postId: expect.stringMatching(/^urn:li:share:\d+$/) });
    if (result.ok !== true) throw new Error('not published');
    expect(result.url).toBe(`https://www.linkedin.com/feed/update/${result.postId}/`);
    expect(fake.posts).toHaveLength(1);
    const post = fake.posts[0];
    // The fake cuts at the first unescaped reserved character, as LinkedIn does: nothing was cut.
    expect(unescape(post?.commentary ?? '')).toBe(text);
    expect(post?.commentary).toContain(' #launch ');
    expect(post).toMatchObject({ author: fake.member.urn, visibility: 'PUBLIC', lifecycleState: 'PUBLISHED' });
    expect(post?.content).toBeUndefined();
    expect(await adapter.confirm(job.request(), result.postId, { late: false })).toEqual({ state: 'found', url: result.url });
  });

  it('uploads a photo (initializeUpload, PUT) and posts it as content.media', async () => {
    const adapter = createLinkedinAdapter(settings(), deps());
    const { result } = await drive(adapter, new Job({ contentType: 'photo', media: [photo] }));
    expect(result.ok).toBe(true);
    const [urn] = [...fake.images.keys()];
    expect(fake.images.get(urn ?? '')).toMatchObject({ status: 'AVAILABLE', bytes: 10 });
    expect(fake.posts[0]?.content).toEqual({ media: { id: urn } });
  });

  it('posts several photos as content.multiImage', async () => {
    const adapter = createLinkedinAdapter(settings(), deps());
    const { result } = await drive(adapter, new Job({ contentType: 'photo', media: [photo, photo] }));
    expect(result.ok).toBe(true);
    expect(fake.posts[0]?.content).toEqual({ multiImage: { images: [...fake.images.keys()].map((id) => ({ id })) } });
  });

  it('answers pending while an image is processing, then publishes', async () => {
    fake.imageProcessingPolls = 4;
    const adapter = createLinkedinAdapter(settings(), deps());
    const { result, pendings } = await drive(adapter, new Job({ contentType: 'photo', media: [photo] }));
    expect(pendings).toBe(1);
    expect(result.ok).toBe(true);
    expect(fake.posts).toHaveLength(1);
  });

  it('uploads a video in parts with their ETags, finalizes, waits for AVAILABLE, then posts once', async () => {
    fake.partSize = 4;
    fake.videoProcessingPolls = 5;
    const adapter = createLinkedinAdapter(settings(), deps());
    const job = new Job({ contentType: 'video', media: [video] });
    const containerId = await submitOk(adapter, job);
    const asset = fake.videos.get(containerId);
    expect(asset?.parts).toHaveLength(3);
    expect(asset?.finalizedWith).toEqual(asset?.parts.map((p) => p.etag));
    expect(await adapter.publish(job.request(), containerId)).toEqual({ ok: 'pending', retryAfterMs: expect.any(Number) });
    expect(fake.posts).toHaveLength(0);
    const result = await adapter.publish(job.request(), containerId);
    expect(result).toMatchObject({ ok: true });
    expect(fake.posts).toHaveLength(1);
    expect(fake.posts[0]?.content).toEqual({ media: { id: containerId } });
  });

  it('resumes a video upload where it stopped: only the missing part is sent again', async () => {
    fake.partSize = 4;
    let puts = 0;
    const flaky: typeof fetch = (input, init) => {
      if (init?.method === 'PUT' && ++puts === 3) return Promise.reject(new TypeError('fetch failed'));
      return globalThis.fetch(input, init);
    };
    const job = new Job({ contentType: 'video', media: [video] });
    expect(await createLinkedinAdapter(settings(), deps({ fetch: flaky })).submit(job.request())).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    expect(fake.partUploads).toBe(2);
    const again = await createLinkedinAdapter(settings(), deps()).submit(job.request());
    expect(again.ok).toBe(true);
    expect(fake.initializeCalls.videos).toBe(1);
    expect(fake.partUploads).toBe(3);
  });

  it('does not finalize twice when the finalize answer was lost', async () => {
    const job = new Job({ contentType: 'video', media: [video] });
    fake.hangNext('POST', '/rest/videos?action=finalizeUpload');
    expect(await createLinkedinAdapter(settings(), deps({ fetch: impatientFetch })).submit(job.request())).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    const again = await createLinkedinAdapter(settings(), deps()).submit(job.request());
    expect(again).toMatchObject({ ok: true });
    expect(fake.requests.filter((r) => r.method === 'POST' && r.path === '/rest/videos')).toHaveLength(2); // initialize + one finalize
  });

  it('fails a video LinkedIn cannot process with media_unsupported_format', async () => {
    fake.videoProcessingFails = true;
    const { result } = await drive(createLinkedinAdapter(settings(), deps()), new Job({ contentType: 'video', media: [video] }));
    expect(result).toMatchObject({ ok: false, code: 'media_unsupported_format', retryable: false });
    expect(fake.posts).toHaveLength(0);
  });

  it('a timeout on POST /rest/posts (created, answer lost) then a second publish: exactly one post', async () => {
    const job = new Job();
    const containerId = await submitOk(createLinkedinAdapter(settings(), deps()), job);
    fake.hangNext('POST', '/rest/posts');
    const first = await createLinkedinAdapter(settings(), deps({ fetch: impatientFetch })).publish(job.request(), containerId);
    expect(first).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    expect(fake.posts).toHaveLength(1);
    const second = await createLinkedinAdapter(settings(), deps()).publish(job.request(), containerId);
    expect(second).toEqual({ ok: true, postId: fake.posts[0]?.id, url: `https://www.linkedin.com/feed/update/${fake.posts[0]?.id ?? ''}/` });
    expect(fake.posts).toHaveLength(1);
    expect(fake.postAttempts).toBe(1);
    // And once more (a crash after publish): the recorded URN answers without asking LinkedIn.
    expect(await createLinkedinAdapter(settings(), deps()).publish(job.request(), containerId)).toMatchObject({ ok: true, postId: fake.posts[0]?.id });
    expect(fake.postAttempts).toBe(1);
  });

  it('after a 5xx on POST, waits for the finder to settle, then posts once', async () => {
    const adapter = createLinkedinAdapter(settings(), deps());
    const job = new Job();
    const containerId = await submitOk(adapter, job);
    fake.failNext({ method: 'POST', path: '/rest/posts', status: 504, body: { status: 504, message: 'Gateway Timeout' } });
    expect(await adapter.publish(job.request(), containerId)).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    expect(await adapter.publish(job.request(), containerId)).toMatchObject({ ok: 'pending' });
    clock += 61_000;
    expect(await adapter.publish(job.request(), containerId)).toMatchObject({ ok: true });
    expect(fake.posts).toHaveLength(1);
  });

  it('when the finder lags and the post is sent again, takes the URN from LinkedIn\'s duplicate refusal', async () => {
    const job = new Job();
    const containerId = await submitOk(createLinkedinAdapter(settings(), deps()), job);
    fake.hangNext('POST', '/rest/posts');
    await createLinkedinAdapter(settings(), deps({ fetch: impatientFetch })).publish(job.request(), containerId);
    fake.finderLags = true;
    clock += 61_000;
    const result = await createLinkedinAdapter(settings(), deps()).publish(job.request(), containerId);
    expect(result).toMatchObject({ ok: true, postId: fake.posts[0]?.id });
    expect(fake.posts).toHaveLength(1);
    expect(fake.postAttempts).toBe(2);
  });

  it('when LinkedIn refuses the lookup (no r_member_social), stops instead of risking a second post', async () => {
    const job = new Job();
    const containerId = await submitOk(createLinkedinAdapter(settings(), deps()), job);
    fake.hangNext('POST', '/rest/posts');
    await createLinkedinAdapter(settings(), deps({ fetch: impatientFetch })).publish(job.request(), containerId);
    fake.finderForbidden = true;
    const result = await createLinkedinAdapter(settings(), deps()).publish(job.request(), containerId);
    expect(result).toMatchObject({ ok: false, code: 'upstream_unknown', retryable: false });
    expect(fake.posts).toHaveLength(1);
    expect(fake.postAttempts).toBe(1);
  });

  it('after a 4xx refusal (nothing created), the next attempt posts without a lookup', async () => {
    const adapter = createLinkedinAdapter(settings(), deps());
    const job = new Job();
    const containerId = await submitOk(adapter, job);
    fake.failNext({ method: 'POST', path: '/rest/posts', status: 429, body: { status: 429, code: 'TOO_MANY_REQUESTS', message: 'Resource level throttle MEMBER DAY limit reached' } });
    expect(await adapter.publish(job.request(), containerId)).toMatchObject({ ok: false, code: 'quota_exceeded' });
    expect(await adapter.publish(job.request(), containerId)).toMatchObject({ ok: true });
    expect(fake.requests.some((r) => r.method === 'GET' && r.path === '/rest/posts')).toBe(false);
  });

  it('fails without credentials, and on a sunset API version', async () => {
    const adapter = createLinkedinAdapter(settings(), deps());
    expect(await adapter.submit(new Job().request({ credentials: null }))).toMatchObject({ ok: false, code: 'upstream_unknown' });
    const old = createLinkedinAdapter(settings({ apiVersion: '202401' }), deps());
    const job = new Job();
    expect(await old.publish(job.request(), await submitOk(old, job))).toMatchObject({ ok: false, code: 'upstream_unknown', retryable: false });
    expect(fake.posts).toHaveLength(0);
  });
});

describe('LinkedIn confirmation', () => {
  it('found, pending while PUBLISH_REQUESTED, not_found, unavailable', async () => {
    const adapter = createLinkedinAdapter(settings(), deps());
    const job = new Job();
    fake.newPostLifecycle = 'PUBLISH_REQUESTED';
    const { result } = await drive(adapter, job);
    if (result.ok !== true) throw new Error('not published');
    expect(await adapter.confirm(job.request(), result.postId, { late: false })).toEqual({ state: 'pending' });
    const post = fake.posts[0];
    if (post) post.lifecycleState = 'PUBLISHED';
    expect(await adapter.confirm(job.request(), result.postId, { late: false })).toMatchObject({ state: 'found' });
    expect(await adapter.confirm(job.request(), 'urn:li:share:1', { late: true })).toEqual({ state: 'not_found' });
    fake.failNext({ method: 'GET', path: '/rest/posts/', status: 500, body: { status: 500, message: 'Internal Server Error' } });
    expect(await adapter.confirm(job.request(), result.postId, { late: false })).toEqual({ state: 'unavailable' });
    await fake.close();
    expect(await adapter.confirm(job.request(), result.postId, { late: false })).toEqual({ state: 'unavailable' });
    fake = await startFakeLinkedin(); // for afterEach
  });
});

describe('LinkedIn error table (spec 7.4)', () => {
  const body = (status: number, message: string, code?: string) => ({ status, message, ...(code ? { code } : {}) });
  const CASES: { why: string; status: number; body: unknown; code: JobErrorCode; retryable: boolean }[] = [
    { why: '401 token expired, revoked or invalid', status: 401, body: { ...body(401, 'The token used in the request has been revoked by the user', 'REVOKED_ACCESS_TOKEN'), serviceErrorCode: 65601 }, code: 'token_expired', retryable: false },
    { why: '403 "resource is forbidden" / "Service Unavailable" (transient, Postiz retries)', status: 403, body: body(403, 'resource is forbidden'), code: 'upstream_5xx', retryable: true },
    { why: '"Unable to obtain activity" (transient, Postiz retries)', status: 400, body: body(400, 'Unable to obtain activity'), code: 'upstream_5xx', retryable: true },
    { why: '403 scope (w_member_social) or page role missing', status: 403, body: { ...body(403, 'Not enough permissions to access: partnerApiPostsExternal.CREATE.20251001', 'ACCESS_DENIED'), serviceErrorCode: 100 }, code: 'permission_revoked', retryable: false },
    { why: '429 daily app or member limit', status: 429, body: body(429, 'Resource level throttle APPLICATION DAY limit for calls to this resource is reached.', 'TOO_MANY_REQUESTS'), code: 'quota_exceeded', retryable: false },
    { why: '413 payload too large (upload URL)', status: 413, body: 'Request Entity Too Large', code: 'media_too_large', retryable: false },
    { why: '415 unsupported media type (upload URL)', status: 415, body: 'Unsupported Media Type', code: 'media_unsupported_format', retryable: false },
    { why: '400/422 file size over the limit', status: 400, body: body(400, 'The file size 6442450944 exceeds the maximum allowed'), code: 'media_too_large', retryable: false },
    { why: '400/422 unsupported media type or format', status: 422, body: body(422, 'Unsupported media type: image/bmp'), code: 'media_unsupported_format', retryable: false },
    { why: '426 NONEXISTENT_VERSION (configured API version sunset)', status: 426, body: body(426, 'Requested version 202401 is not active', 'NONEXISTENT_VERSION'), code: 'upstream_unknown', retryable: false },
    { why: '408 / 5xx server side', status: 502, body: body(502, 'Bad Gateway'), code: 'upstream_5xx', retryable: true },
    { why: 'anything else (undocumented)', status: 400, body: body(400, 'Something new', 'ILLEGAL_ARGUMENT'), code: 'upstream_unknown', retryable: false },
  ];

  it('has a case for every row', () => {
    expect(CASES.map((c) => c.why).sort()).toEqual(LINKEDIN_ERROR_TABLE.map((r) => r.name).sort());
  });

  for (const c of CASES) {
    it(`${c.why} → ${c.code}${c.retryable ? ' (retryable)' : ''}`, async () => {
      const adapter = createLinkedinAdapter(settings(), deps());
      const job = new Job({ contentType: 'photo', media: [photo] });
      // Upload-URL rows fail the PUT of the bytes; the others fail POST /rest/posts.
      const onUpload = c.status === 413 || c.status === 415;
      fake.failNext(onUpload ? { method: 'PUT', path: '/dms-uploads/image', status: c.status, body: c.body } : { method: 'POST', path: '/rest/posts', status: c.status, body: c.body });
      const result = onUpload ? await adapter.submit(job.request()) : (await drive(adapter, job)).result;
      expect(result).toMatchObject({ ok: false, code: c.code, retryable: c.retryable });
      // The network's text is logged, never returned.
      const text = typeof c.body === 'string' ? c.body : (c.body as { message: string }).message;
      if (result.ok === false) expect(result.message).not.toContain(text);
      expect(logs.some((l) => String(l.details.body).includes(text))).toBe(true);
      expect(fake.posts).toHaveLength(0);
    });
  }

  it('no answer at all (refused connection) → upstream_5xx, retryable', async () => {
    const adapter = createLinkedinAdapter(settings({ apiBaseUrl: 'http://127.0.0.1:9' }), deps());
    expect(await adapter.publish(new Job().request(), 'text')).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
  });

  it('an expired token from the fake → token_expired', async () => {
    fake.expiredTokens.add(fake.token);
    const adapter = createLinkedinAdapter(settings(), deps());
    expect(await adapter.publish(new Job().request(), 'text')).toMatchObject({ ok: false, code: 'token_expired', retryable: false });
  });
});
