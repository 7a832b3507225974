import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NetworkAdapter, Published, PublishRequest } from '../../src/networks/adapter.js';
import { INSTAGRAM_ERROR_TABLE } from '../../src/networks/instagram/errors.js';
import { createInstagramAdapter } from '../../src/networks/instagram/adapter.js';
import { createInstagramOAuth } from '../../src/networks/instagram/oauth.js';
import type { NetworkDeps, NetworkSettings } from '../../src/networks/network-deps.js';
import { type FakeEndpoint, type FakeInstagram, type FakeReply, graphError, startFakeInstagram } from '../fakes/instagram.js';
import { bufferSource } from '../../src/networks/media-source.js';
import { withinDeadline } from '../../src/outbound/deadline.js';

let fake: FakeInstagram;
let clock: number;
let logs: { message: string; details: Record<string, unknown> }[];

beforeEach(async () => {
  fake = await startFakeInstagram();
  clock = Date.now();
  logs = [];
});
afterEach(async () => {
  await fake.close();
});

const settings = (): NetworkSettings => ({
  clientId: fake.clientId,
  clientSecret: fake.clientSecret,
  apiBaseUrl: fake.apiBaseUrl,
  authorizeUrl: fake.authorizeUrl,
  tokenUrl: fake.tokenUrl,
  apiVersion: undefined,
});

function deps(fetchImpl: typeof globalThis.fetch = globalThis.fetch): NetworkDeps {
  return {
    fetch: fetchImpl,
    userHostFetch: fetchImpl,
    now: () => clock,
    sleep: async () => {},
    log: (message, details) => logs.push({ message, details }),
    openMedia: async () => bufferSource(Buffer.from('not used: Instagram fetches media by URL')),
  };
}

const adapter = (fetchImpl?: typeof globalThis.fetch): NetworkAdapter => createInstagramAdapter(settings(), deps(fetchImpl));

/** A job as the worker builds it; `progress` survives between calls like the job row's saved state. */
function job(over: Partial<PublishRequest> = {}) {
  const store = { progress: null as Record<string, unknown> | null, saves: 0, leaseHeld: true };
  const req = (): PublishRequest => ({
    jobId: 'job_1',
    attempt: 1,
    platform: 'instagram',
    connection: { id: 'conn_1', mode: 'live', name: '@acme.studio' },
    credentials: { accessToken: fake.accessToken, accountId: fake.state.account.userId },
    contentType: 'photo',
    text: 'Launch day ✨ #acme',
    title: null,
    thread: null,
    media: [{ url: 'https://cdn.example.com/a.jpg', sizeBytes: 1000, contentType: 'image/jpeg' }],
    sandboxOutcome: null,
    ...over,
    progress: store.progress,
    saveProgress: async (p) => {
      if (!store.leaseHeld) return false;
      store.progress = p;
      store.saves += 1;
      return true;
    },
  });
  return { req, store };
}

/** Drives submit → publish (again while pending, as the worker would) and returns the last answer. */
async function publishAll(a: NetworkAdapter, j: ReturnType<typeof job>, maxCalls = 5): Promise<Published> {
  const submitted = await a.submit(j.req());
  if (!submitted.ok) return submitted;
  let out: Published = { ok: 'pending', retryAfterMs: 0 };
  for (let i = 0; i < maxCalls && out.ok === 'pending'; i++) out = await a.publish(j.req(), submitted.containerId);
  return out;
}

/**
 * A fetch whose calls to one endpoint time out after `ms` (the adapter's 30 s, shortened). With
 * `offlineAfterTimeout` the network then stays down until the test sets `offline` back to false.
 */
function flakyFetch(path: RegExp, ms: number) {
  const ctl = { offline: false, offlineAfterTimeout: false };
  const f: typeof globalThis.fetch = async (input, init) => {
    if (ctl.offline) throw new TypeError('fetch failed');
    if (!path.test(String(input))) return globalThis.fetch(input, init);
    try {
      return await withinDeadline(ms, (signal) => globalThis.fetch(input, { ...init, signal }), init?.signal ?? undefined);
    } catch (err) {
      if (ctl.offlineAfterTimeout) ctl.offline = true;
      throw err;
    }
  };
  return { fetch: f, ctl };
}

describe('instagram adapter: publishing', () => {
  it('publishes a photo and confirms it with the public URL, after reading the quota', async () => {
    const a = adapter();
    const j = job();
    const out = await publishAll(a, j);
    expect(out).toMatchObject({ ok: true, postId: fake.posts[0]!.id, url: fake.posts[0]!.permalink });
    expect(fake.posts).toHaveLength(1);
    expect(fake.posts[0]).toMatchObject({ caption: 'Launch day ✨ #acme', mediaType: 'IMAGE' });
    const order = fake.state.requests.map((r) => r.endpoint);
    expect(order.indexOf('publishing_limit')).toBeLessThan(order.indexOf('create_container'));
    const confirmed = await a.confirm(j.req(), fake.posts[0]!.id, { late: false });
    expect(confirmed).toEqual({ state: 'found', url: fake.posts[0]!.permalink });
  });

  it('keeps a reel pending while the container processes, then publishes it', async () => {
    fake.state.processingPolls = 4;
    const a = adapter();
    const j = job({ contentType: 'reel', media: [{ url: 'https://cdn.example.com/r.mp4', sizeBytes: 10, contentType: 'video/mp4' }] });
    const submitted = await a.submit(j.req());
    if (!submitted.ok) throw new Error('submit failed');
    const create = fake.state.requests.find((r) => r.endpoint === 'create_container');
    expect(create?.params).toMatchObject({ media_type: 'REELS', video_url: 'https://cdn.example.com/r.mp4' });
    expect(await a.publish(j.req(), submitted.containerId)).toEqual({ ok: 'pending', retryAfterMs: 30_000 });
    expect(fake.count('media_publish')).toBe(0);
    const out = await a.publish(j.req(), submitted.containerId);
    expect(out).toMatchObject({ ok: true, url: expect.stringContaining('/reel/') });
    expect(fake.posts).toHaveLength(1);
  });

  it('publishes several photos as one carousel', async () => {
    const media = ['a', 'b', 'c'].map((n) => ({ url: `https://cdn.example.com/${n}.jpg`, sizeBytes: 1, contentType: 'image/jpeg' }));
    const out = await publishAll(adapter(), job({ media }));
    expect(out.ok).toBe(true);
    const creates = fake.state.requests.filter((r) => r.endpoint === 'create_container');
    expect(creates.slice(0, 3).every((r) => r.params.is_carousel_item === 'true' && r.params.caption === undefined)).toBe(true);
    expect(creates[3]?.params).toMatchObject({ media_type: 'CAROUSEL', caption: 'Launch day ✨ #acme' });
    expect(creates[3]?.params.children?.split(',')).toHaveLength(3);
    expect(fake.posts.map((p) => p.mediaType)).toEqual(['CAROUSEL_ALBUM']);
  });

  it('stops before creating anything when the daily publishing quota is used up', async () => {
    fake.state.quota.usage = 100;
    const out = await adapter().submit(job().req());
    expect(out).toMatchObject({ ok: false, code: 'quota_exceeded', retryable: false });
    expect(fake.count('create_container')).toBe(0);
  });

  it('fails live requests without credentials, and media Instagram cannot fetch, without calling Instagram', async () => {
    const a = adapter();
    expect(await a.submit(job({ credentials: null }).req())).toMatchObject({ ok: false, code: 'upstream_unknown' });
    expect(await a.publish(job({ credentials: null }).req(), '1')).toMatchObject({ ok: false, code: 'upstream_unknown' });
    const local = job({ media: [{ url: 'file:///data/media/x.jpg', sizeBytes: 1, contentType: 'image/jpeg' }] });
    expect(await a.submit(local.req())).toMatchObject({ ok: false, code: 'upstream_unknown', retryable: false });
    expect(fake.state.requests).toHaveLength(0);
  });

  it('an upload kept by the service goes to Instagram as its signed public address', async () => {
    const signed = 'https://publisher.example/media/media_1?exp=1&sig=abc';
    const upload = job({ media: [{ url: 'file:///data/media/x.jpg', publicUrl: signed, sizeBytes: 1, contentType: 'image/jpeg' }] });
    expect(await adapter().submit(upload.req())).toMatchObject({ ok: true });
    expect(fake.state.requests.find((r) => r.endpoint === 'create_container')?.params.image_url).toBe(signed);
  });

  it.each([
    ['ERROR', 'Error: Media upload has failed with error code 2207026', 'media_unsupported_format'],
    ['ERROR', 'Error: Media upload has failed with error code 2207004', 'media_too_large'],
    ['ERROR', 'Error: something nobody documented', 'media_unsupported_format'],
    ['EXPIRED', '', 'upstream_unknown'],
  ] as const)('maps a container in %s (%s) to %s', async (outcome, text, code) => {
    fake.state.containerOutcome = outcome;
    fake.state.containerErrorText = text;
    const out = await publishAll(adapter(), job());
    expect(out).toMatchObject({ ok: false, code, retryable: false });
    expect(fake.posts).toHaveLength(0);
  });
});

describe('instagram adapter: a container that fails without a known code', () => {
  it('tells the user what Instagram takes today: JPEG photos, reels from 3 seconds to 15 minutes', async () => {
    fake.state.containerOutcome = 'ERROR';
    fake.state.containerErrorText = 'Error: something nobody documented';
    const out = await publishAll(adapter(), job({ contentType: 'reel', media: [{ url: 'https://cdn.example.com/r.mp4', sizeBytes: 10, contentType: 'video/mp4' }] }));
    expect(out).toMatchObject({ ok: false, code: 'media_unsupported_format', message: expect.stringContaining('3 seconds to 15 minutes') });
  });
});

describe('instagram adapter: error table (spec 7.4)', () => {
  // One case per row of INSTAGRAM_ERROR_TABLE at least; `row` names the row expected to decide.
  const cases: { name: string; at: FakeEndpoint; reply: FakeReply; code: string; retryable: boolean; row: string | null }[] = [
    ...[458, 459, 460, 463, 467].map((s) => ({ name: `190/${s}`, at: 'create_container' as const, reply: graphError(190, s), code: 'token_expired', retryable: false, row: '190 OAuthException (458/459/460/463/467)' })),
    { name: '102 session', at: 'create_container', reply: graphError(102), code: 'token_expired', retryable: false, row: '102 API session invalid' },
    { name: 'revoked text', at: 'create_container', reply: graphError(100, undefined, { message: 'REVOKED_ACCESS_TOKEN' }), code: 'token_expired', retryable: false, row: 'revoked or invalidated session (text)' },
    { name: '10', at: 'publishing_limit', reply: graphError(10, undefined, { status: 403 }), code: 'permission_revoked', retryable: false, row: '10 permission denied' },
    { name: '200', at: 'create_container', reply: graphError(200), code: 'permission_revoked', retryable: false, row: '200-299 permission missing' },
    { name: '299', at: 'create_container', reply: graphError(299), code: 'permission_revoked', retryable: false, row: '200-299 permission missing' },
    { name: '368', at: 'media_publish', reply: graphError(368), code: 'permission_revoked', retryable: false, row: '368 temporarily blocked for policy' },
    { name: '9/2207042', at: 'media_publish', reply: graphError(9, 2207042), code: 'quota_exceeded', retryable: false, row: '9/2207042 daily publishing cap' },
    ...[4, 17, 32, 613, 9].map((c) => ({ name: `throttling ${c}`, at: 'create_container' as const, reply: graphError(c), code: 'upstream_5xx', retryable: true, row: '4/17/32/613/9 throttling' })),
    { name: '352/2207026', at: 'create_container', reply: graphError(352, 2207026), code: 'media_unsupported_format', retryable: false, row: '2207026 unsupported video' },
    { name: '36003/2207009', at: 'create_container', reply: graphError(36003, 2207009), code: 'media_unsupported_format', retryable: false, row: '2207009/36003 aspect ratio' },
    { name: '2207005', at: 'create_container', reply: graphError(100, 2207005), code: 'media_unsupported_format', retryable: false, row: '2207005/2207023/36001 image format, media type, resolution' },
    { name: '2207004', at: 'create_container', reply: graphError(100, 2207004), code: 'media_too_large', retryable: false, row: '2207004 image too large' },
    { name: '2207010', at: 'create_container', reply: graphError(100, 2207010), code: 'upstream_unknown', retryable: false, row: '2207010 caption too long' },
    { name: '2207003', at: 'create_container', reply: graphError(100, 2207003), code: 'upstream_5xx', retryable: true, row: '2207003/2207032/2207053/2207082 media fetch or upload hiccup' },
    { name: '2207020', at: 'create_container', reply: graphError(100, 2207020), code: 'upstream_unknown', retryable: false, row: '2207008/2207020 container or media expired' },
    { name: '9007/2207027', at: 'media_publish', reply: graphError(9007, 2207027), code: 'upstream_5xx', retryable: true, row: '9007/2207027 container not ready for publishing' },
    { name: 'transient', at: 'create_container', reply: graphError(1, undefined, { status: 500, transient: true }), code: 'upstream_5xx', retryable: true, row: 'Graph says transient, or 1/2 unknown/service errors' },
    { name: 'HTTP 502 HTML', at: 'create_container', reply: { status: 502, body: '<html>Bad Gateway</html>' }, code: 'upstream_5xx', retryable: true, row: 'HTTP 5xx' },
    { name: 'HTTP 429', at: 'create_container', reply: { status: 429, body: 'slow down' }, code: 'upstream_5xx', retryable: true, row: 'HTTP 429' },
    { name: 'HTTP 401', at: 'create_container', reply: { status: 401, body: 'no' }, code: 'token_expired', retryable: false, row: 'HTTP 401 without a Graph code' },
    { name: 'HTTP 403', at: 'create_container', reply: { status: 403, body: 'no' }, code: 'permission_revoked', retryable: false, row: 'HTTP 403 without a Graph code' },
    { name: 'undocumented', at: 'create_container', reply: graphError(100, 1234567), code: 'upstream_unknown', retryable: false, row: null },
  ];

  it.each(cases)('$name at $at → $code', async (c) => {
    fake.failNext(c.at, c.reply);
    const out = await publishAll(adapter(), job());
    expect(out).toMatchObject({ ok: false, code: c.code, retryable: c.retryable });
    if (out.ok === false) expect(out.message).not.toMatch(/fake|Bad Gateway|slow down|REVOKED/);
    expect(logs.some((l) => l.message === 'instagram: error answer')).toBe(true);
    expect(JSON.stringify(logs)).not.toContain(fake.accessToken);
    expect(fake.posts).toHaveLength(0);
  });

  it('maps no answer at all (connection refused) to a retryable upstream_5xx', async () => {
    const a = adapter();
    await fake.close();
    expect(await a.submit(job().req())).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    fake = await startFakeInstagram();
  });

  it('has a test case for every row of the table', () => {
    const tested = new Set([...cases.map((c) => c.row), 'no answer (network error, timeout)']);
    expect(INSTAGRAM_ERROR_TABLE.map((r) => r.name).filter((w) => !tested.has(w))).toEqual([]);
  });
});

describe('instagram adapter: never twice', () => {
  async function submitted(a: NetworkAdapter, j: ReturnType<typeof job>): Promise<string> {
    const s = await a.submit(j.req());
    if (!s.ok) throw new Error(`submit failed: ${s.code}`);
    return s.containerId;
  }

  it('media_publish times out after Instagram published; the next publish finds the post instead of publishing again', async () => {
    const { fetch, ctl } = flakyFetch(/\/media_publish$/, 150);
    const a = adapter(fetch);
    const j = job();
    const container = await submitted(a, j);
    fake.delayNext('media_publish', 1_000, 'respond-late');
    // The immediate re-check of the container fails too (the network is down right after the timeout).
    ctl.offlineAfterTimeout = true;
    expect(await a.publish(j.req(), container)).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    expect(fake.posts).toHaveLength(1);
    expect(j.store.progress).toMatchObject({ ig_container_id: container, ig_publish_started_at: clock, ig_media_id: null });

    ctl.offline = false;
    ctl.offlineAfterTimeout = false;
    clock += 60_000;
    const second = await a.publish(j.req(), container);
    expect(second).toEqual({ ok: true, postId: fake.posts[0]!.id, url: fake.posts[0]!.permalink });
    expect(fake.posts).toHaveLength(1);
    expect(fake.count('media_publish')).toBe(1);
    // A third call (say the worker crashed before recording the post id) answers from the saved progress.
    expect(await a.publish(j.req(), container)).toMatchObject({ ok: true, postId: fake.posts[0]!.id });
    expect(fake.count('media_publish')).toBe(1);
  });

  it('recovers within the same call when the container already says PUBLISHED after the timeout', async () => {
    const { fetch } = flakyFetch(/\/media_publish$/, 150);
    const a = adapter(fetch);
    const j = job();
    const container = await submitted(a, j);
    fake.delayNext('media_publish', 1_000, 'respond-late');
    expect(await a.publish(j.req(), container)).toEqual({ ok: true, postId: fake.posts[0]!.id, url: fake.posts[0]!.permalink });
    expect(fake.posts).toHaveLength(1);
  });

  it('a media_publish that arrives late is given time to land before anything is sent again', async () => {
    const { fetch } = flakyFetch(/\/media_publish$/, 150);
    const a = adapter(fetch);
    const j = job();
    const container = await submitted(a, j);
    fake.delayNext('media_publish', 400, 'arrive-late');
    expect(await a.publish(j.req(), container)).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    expect(fake.posts).toHaveLength(0);
    clock += 5_000;
    expect(await a.publish(j.req(), container)).toEqual({ ok: 'pending', retryAfterMs: 25_000 });
    await new Promise((r) => setTimeout(r, 600)); // the lost request lands on Instagram
    clock += 30_000;
    expect(await a.publish(j.req(), container)).toMatchObject({ ok: true, postId: fake.posts[0]!.id });
    expect(fake.posts).toHaveLength(1);
    expect(fake.count('media_publish')).toBe(1);
  });

  it('a media_publish that never reached Instagram is sent again once the settle time has passed', async () => {
    const { fetch } = flakyFetch(/\/media_publish$/, 150);
    const a = adapter(fetch);
    const j = job();
    const container = await submitted(a, j);
    fake.delayNext('media_publish', 300, 'drop');
    expect(await a.publish(j.req(), container)).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    clock += SETTLE;
    expect(await a.publish(j.req(), container)).toMatchObject({ ok: true, postId: fake.posts[0]!.id });
    expect(fake.posts).toHaveLength(1);
    expect(fake.count('media_publish')).toBe(2);
  });

  it('waits for a lagging media listing, then names the post', async () => {
    const { fetch } = flakyFetch(/\/media_publish$/, 150);
    const a = adapter(fetch);
    const j = job();
    const container = await submitted(a, j);
    fake.delayNext('media_publish', 1_000, 'respond-late');
    fake.state.listingLagCalls = 1;
    expect(await a.publish(j.req(), container)).toEqual({ ok: 'pending', retryAfterMs: 15_000 });
    expect(await a.publish(j.req(), container)).toMatchObject({ ok: true, postId: fake.posts[0]!.id });
    expect(fake.count('media_publish')).toBe(1);
  });

  it('does not publish when the job lease is lost before media_publish', async () => {
    const a = adapter();
    const j = job();
    const container = await submitted(a, j);
    j.store.leaseHeld = false;
    expect((await a.publish(j.req(), container)).ok).toBe('pending');
    expect(fake.count('media_publish')).toBe(0);
  });
});

const SETTLE = 30_000;

describe('instagram adapter: confirm', () => {
  it('answers not_found for a media id Instagram does not know, unavailable when it cannot be asked', async () => {
    const a = adapter();
    expect(await a.confirm(job().req(), '18000000000000', { late: false })).toEqual({ state: 'not_found' });
    fake.failNext('media_get', graphError(2, undefined, { status: 503, transient: true }));
    expect(await a.confirm(job().req(), '18000000000000', { late: true })).toEqual({ state: 'unavailable' });
  });
});

describe('instagram OAuth', () => {
  const redirectUri = 'https://publisher.example.com/oauth/instagram/callback';

  it('builds the authorization URL with the Instagram Login scopes', async () => {
    const url = new URL(createInstagramOAuth(settings(), deps()).authorizationUrl({ state: 'st_1', redirectUri }));
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: fake.clientId,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: 'instagram_business_basic,instagram_business_content_publish',
      state: 'st_1',
    });
    await fetch(url);
    expect(fake.state.authorizations[0]?.get('state')).toBe('st_1');
  });

  it('exchanges the code for a long-lived token and reads the account; the token publishes', async () => {
    const oauth = createInstagramOAuth(settings(), deps());
    const result = await oauth.exchangeCode({ state: 'state_1', code: fake.issueCode(redirectUri), redirectUri });
    if (!result.ok) throw new Error(result.code);
    expect(result.tokens).toMatchObject({ refreshToken: null, accountId: fake.state.account.userId, accountName: 'acme.studio', expiresAt: clock + 5_184_000_000 });
    expect(result.tokens.accessToken).toMatch(/^IGlong-/);
    const out = await publishAll(adapter(), job({ credentials: { accessToken: result.tokens.accessToken, accountId: result.tokens.accountId } }));
    expect(out.ok).toBe(true);

    const refreshed = await oauth.refresh!(result.tokens);
    if (!refreshed.ok) throw new Error(refreshed.code);
    expect(refreshed.tokens.accessToken).not.toBe(result.tokens.accessToken);
    expect(refreshed.tokens).toMatchObject({ accountId: result.tokens.accountId, accountName: 'acme.studio' });
  });

  it('refuses a reused code, a missing publishing permission and an expired token on refresh', async () => {
    const oauth = createInstagramOAuth(settings(), deps());
    const code = fake.issueCode(redirectUri);
    expect((await oauth.exchangeCode({ state: 'state_1', code, redirectUri })).ok).toBe(true);
    expect(await oauth.exchangeCode({ state: 'state_1', code, redirectUri })).toMatchObject({ ok: false, code: 'upstream_unknown' });
    fake.state.grantedPermissions = 'instagram_business_basic';
    expect(await oauth.exchangeCode({ state: 'state_1', code: fake.issueCode(redirectUri), redirectUri })).toMatchObject({ ok: false, code: 'permission_revoked' });
    fake.expireToken(fake.accessToken);
    const stale = { accessToken: fake.accessToken, refreshToken: null, expiresAt: null, accountId: '1', accountName: 'x' };
    expect(await oauth.refresh!(stale)).toMatchObject({ ok: false, code: 'token_expired' });
  });
});

describe('the fake itself', () => {
  it('rejects Graph calls without a bearer token and containers without their media', async () => {
    const path = `${fake.apiBaseUrl}/${fake.state.account.userId}/media`;
    const noAuth = await fetch(path, { method: 'POST', body: new URLSearchParams({ image_url: 'https://x/y.jpg' }) });
    expect(((await noAuth.json()) as { error: { code: number } }).error.code).toBe(190);
    const noMedia = await fetch(path, { method: 'POST', headers: { authorization: `Bearer ${fake.accessToken}` }, body: new URLSearchParams({ caption: 'x' }) });
    expect(((await noMedia.json()) as { error: { code: number } }).error.code).toBe(100);
    const unversioned = await fetch(`${fake.baseUrl}/me`, { headers: { authorization: `Bearer ${fake.accessToken}` } });
    expect(unversioned.status).toBe(400);
  });
});
