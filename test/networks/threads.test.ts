import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobErrorCode } from '../../src/vocabulary/job-errors.js';
import type { NetworkAdapter, PublishRequest, Published, Submitted } from '../../src/networks/adapter.js';
import type { NetworkDeps, NetworkSettings } from '../../src/networks/network-deps.js';
import { createThreadsAdapter } from '../../src/networks/threads/adapter.js';
import { createThreadsOAuth } from '../../src/networks/threads/oauth.js';
import { parseGraphError } from '../../src/networks/meta-graph/errors.js';
import { THREADS_ERROR_TABLE, threadsErrorRow } from '../../src/networks/threads/errors.js';
import { type FakeRequest, type FakeThreads, graphError, on, startFakeThreads } from '../fakes/threads.js';
import { bufferSource } from '../../src/networks/media-source.js';
import { withinDeadline } from '../../src/outbound/deadline.js';

let fake: FakeThreads;
beforeEach(async () => {
  fake = await startFakeThreads();
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

/** A fetch whose requests also give up after `ms` (the fake's hung answers then look like network timeouts). */
const shortFetch =
  (ms: number): typeof fetch =>
  (input, init) =>
    withinDeadline(ms, (signal) => globalThis.fetch(input, { ...init, signal }), init?.signal ?? undefined);

function makeDeps(over: Partial<NetworkDeps> = {}) {
  const logs: { message: string; details: Record<string, unknown> }[] = [];
  const deps: NetworkDeps = {
    fetch: globalThis.fetch,
    userHostFetch: globalThis.fetch,
    now: () => Date.now(),
    sleep: async () => {},
    log: (message, details) => logs.push({ message, details }),
    openMedia: async () => bufferSource(Buffer.from('not used by threads')),
    ...over,
  };
  return { deps, logs };
}

/** A job as the worker builds it; `current()` carries the progress saved so far, as a run taken over would. */
function job(over: Partial<PublishRequest> = {}) {
  const state = { progress: null as Record<string, unknown> | null, saves: [] as Record<string, unknown>[], leaseHeld: true };
  const base: PublishRequest = {
    jobId: 'job_1',
    attempt: 1,
    platform: 'threads',
    connection: { id: 'conn_1', mode: 'live', name: '@acme' },
    credentials: { accessToken: fake.token, accountId: fake.userId },
    contentType: 'text',
    text: 'Hello, Threads',
    title: null,
    thread: null,
    media: [],
    sandboxOutcome: null,
    progress: null,
    async saveProgress(progress) {
      if (!state.leaseHeld) return false;
      state.progress = structuredClone(progress);
      state.saves.push(state.progress);
      return true;
    },
    ...over,
  };
  return { state, current: (): PublishRequest => ({ ...base, progress: state.progress }) };
}
type Job = ReturnType<typeof job>;

const chainOf = (n: number) => Array.from({ length: n }, (_, i) => `Post ${i + 1} of ${n}`);

/** Drives submit → publish (again while pending) like the worker. */
async function drive(adapter: NetworkAdapter, j: Job, maxPublishCalls = 10): Promise<{ submitted: Submitted; published: Published | null }> {
  const submitted = await adapter.submit(j.current());
  if (!submitted.ok) return { submitted, published: null };
  let published: Published | null = null;
  for (let i = 0; i < maxPublishCalls; i++) {
    published = await adapter.publish(j.current(), submitted.containerId);
    if (published.ok !== 'pending') break;
  }
  return { submitted, published };
}

/** The first `live` posts of a chain of `total` are on the fake, in order, each replying to the one before. */
function expectChained(live: number, total = live) {
  expect(fake.posts).toHaveLength(live);
  expect(fake.posts.map((p) => p.text)).toEqual(chainOf(total).slice(0, live));
  fake.posts.forEach((p, i) => expect(p.replyToId).toBe(i === 0 ? null : fake.posts[i - 1]?.id));
  expect(new Set(fake.posts.map((p) => p.containerId)).size).toBe(live);
}

const publishCalls = () => fake.requests.filter(on.publish).length;

describe('threads adapter: publishing', () => {
  it('checks the quota, publishes a text post and confirms it with its public URL', async () => {
    const adapter = createThreadsAdapter(settings(), makeDeps().deps);
    const j = job();
    const { submitted, published } = await drive(adapter, j);
    expect(submitted.ok).toBe(true);
    const post = fake.posts[0];
    expect(fake.posts).toHaveLength(1);
    expect(post).toMatchObject({ mediaType: 'TEXT', text: 'Hello, Threads', replyToId: null });
    expect(published).toEqual({ ok: true, postId: post?.id, url: post?.permalink });
    expect(fake.requests[0]?.path).toBe(`/v1.0/${fake.userId}/threads_publishing_limit`);
    // The token travels in the Authorization header only.
    expect(fake.requests.every((r) => r.token === fake.token && r.params.access_token === undefined)).toBe(true);
    // Progress was saved before the public step, then with the resulting id.
    expect(j.state.saves[0]).toMatchObject({ index: 0, publishing: submitted.ok ? submitted.containerId : '' });
    expect(j.state.progress).toMatchObject({ index: 1, ids: [post?.id], lastMediaId: post?.id, publishing: null });
    expect(await adapter.confirm(j.current(), post?.id ?? '', { late: false })).toEqual({ state: 'found', url: post?.permalink });
  });

  it('publishes a photo from its public address', async () => {
    const adapter = createThreadsAdapter(settings(), makeDeps().deps);
    const media = [{ url: 'https://cdn.example.com/a.jpg', sizeBytes: 1000, contentType: 'image/jpeg' }];
    const { published } = await drive(adapter, job({ contentType: 'photo', media, text: 'A photo' }));
    expect(published?.ok).toBe(true);
    const container = fake.containers.get(fake.posts[0]?.containerId ?? '');
    expect(container).toMatchObject({ mediaType: 'IMAGE', mediaUrl: 'https://cdn.example.com/a.jpg', text: 'A photo' });
  });

  it('returns pending while the container is processing, then publishes on a later call', async () => {
    fake.knobs.processingPolls = 5;
    const adapter = createThreadsAdapter(settings(), makeDeps().deps);
    const j = job({ contentType: 'video', media: [{ url: 'https://cdn.example.com/v.mp4', sizeBytes: null, contentType: 'video/mp4' }] });
    const submitted = await adapter.submit(j.current());
    if (!submitted.ok) throw new Error('submit failed');
    const first = await adapter.publish(j.current(), submitted.containerId);
    expect(first).toEqual({ ok: 'pending', retryAfterMs: expect.any(Number) });
    expect(fake.posts).toHaveLength(0);
    const second = await adapter.publish(j.current(), submitted.containerId);
    expect(second).toMatchObject({ ok: true, postId: fake.posts[0]?.id });
    expect(fake.posts).toHaveLength(1);
    expect(publishCalls()).toBe(1);
  });

  it('recreates an expired container (never published) and publishes once', async () => {
    const adapter = createThreadsAdapter(settings(), makeDeps().deps);
    const j = job();
    const submitted = await adapter.submit(j.current());
    if (!submitted.ok) throw new Error('submit failed');
    const old = fake.containers.get(submitted.containerId);
    if (old) old.status = 'EXPIRED';
    const published = await adapter.publish(j.current(), submitted.containerId);
    expect(published.ok).toBe(true);
    expect(fake.posts).toHaveLength(1);
    expect(fake.posts[0]?.containerId).not.toBe(submitted.containerId);
  });

  it('a timeout while publishing (the post was made) is looked up on the next call: exactly one post', async () => {
    const { deps } = makeDeps({ fetch: shortFetch(250) });
    const adapter = createThreadsAdapter(settings(), deps);
    fake.hangNext(on.publish, 1_500);
    const j = job();
    const submitted = await adapter.submit(j.current());
    if (!submitted.ok) throw new Error('submit failed');
    // The fake published, the answer never came: the outcome is unknown, so no failure is claimed.
    expect(await adapter.publish(j.current(), submitted.containerId)).toMatchObject({ ok: 'pending' });
    expect(fake.posts).toHaveLength(1);
    expect(j.state.progress).toMatchObject({ index: 0, publishing: submitted.containerId });
    // A run taken over (a fresh adapter) with the saved progress.
    const again = await createThreadsAdapter(settings(), makeDeps().deps).publish(j.current(), submitted.containerId);
    expect(again).toEqual({ ok: true, postId: fake.posts[0]?.id, url: fake.posts[0]?.permalink });
    expect(fake.posts).toHaveLength(1);
    expect(publishCalls()).toBe(1);
  });

  it('stops without posting when the lease was lost', async () => {
    const adapter = createThreadsAdapter(settings(), makeDeps().deps);
    const j = job();
    const submitted = await adapter.submit(j.current());
    if (!submitted.ok) throw new Error('submit failed');
    j.state.leaseHeld = false;
    expect((await adapter.publish(j.current(), submitted.containerId)).ok).toBe('pending');
    expect(fake.posts).toHaveLength(0);
  });

  it('fails without a request when a live job has no credentials', async () => {
    const adapter = createThreadsAdapter(settings(), makeDeps().deps);
    const j = job({ credentials: null });
    expect(await adapter.submit(j.current())).toMatchObject({ ok: false, code: 'upstream_unknown', retryable: false });
    expect(await adapter.publish(j.current(), 'c1')).toMatchObject({ ok: false, code: 'upstream_unknown' });
    expect(fake.requests).toHaveLength(0);
  });

  it('confirm: not_found for an unknown post, unavailable when the network fails', async () => {
    const adapter = createThreadsAdapter(settings(), makeDeps().deps);
    expect(await adapter.confirm(job().current(), '999', { late: false })).toEqual({ state: 'not_found' });
    fake.failNext(() => true, 503, 'Service Unavailable');
    expect(await adapter.confirm(job().current(), '999', { late: true })).toEqual({ state: 'unavailable' });
  });
});

describe('threads adapter: chains', () => {
  it('publishes a chain of 25 posts, each replying to the previous, with the first post as its URL', async () => {
    const adapter = createThreadsAdapter(settings(), makeDeps().deps);
    const j = job({ contentType: 'thread', text: null, thread: chainOf(25) });
    const { published } = await drive(adapter, j);
    expectChained(25);
    expect(published).toEqual({ ok: true, postId: fake.posts[0]?.id, url: fake.posts[0]?.permalink });
    expect(fake.knobs.quota).toMatchObject({ usage: 1, replyUsage: 24 });
    expect(j.state.progress).toMatchObject({ index: 25, ids: fake.posts.map((p) => p.id), lastMediaId: fake.posts[24]?.id });
  });

  it('a photo whose long caption was split into a chain: the photo on the first post, text replies after it', async () => {
    const adapter = createThreadsAdapter(settings(), makeDeps().deps);
    const media = [{ url: 'https://cdn.example.com/a.jpg', sizeBytes: 1000, contentType: 'image/jpeg' }];
    const { published } = await drive(adapter, job({ contentType: 'photo', media, text: 'unsplit', thread: chainOf(3) }));
    expect(published?.ok).toBe(true);
    expectChained(3);
    const containers = fake.posts.map((p) => fake.containers.get(p.containerId));
    expect(containers.map((c) => [c?.mediaType, c?.mediaUrl, c?.text])).toEqual([
      ['IMAGE', 'https://cdn.example.com/a.jpg', chainOf(3)[0]],
      ['TEXT', null, chainOf(3)[1]],
      ['TEXT', null, chainOf(3)[2]],
    ]);
  });

  it('a chain that fails permanently at post 7: posts 1..6 stay live and the job fails naming post 7', async () => {
    fake.failNext((r) => on.publish(r) && fake.posts.length === 6, 400, graphError(100, 'Invalid parameter', { subcode: 4279009 }), Infinity);
    const adapter = createThreadsAdapter(settings(), makeDeps().deps);
    const j = job({ contentType: 'thread', text: null, thread: chainOf(10) });
    const { published } = await drive(adapter, j);
    expect(published).toMatchObject({ ok: false, code: 'upstream_unknown', retryable: false, partlyLive: true });
    expect(published?.ok === false && published.message).toMatch(/^The chain stopped at post 7 of 10; posts 1\.\.6 are live/);
    expectChained(6, 10);
    // Calling again (a manual retry) resumes at post 7: nothing already live is posted again.
    await adapter.publish(j.current(), 'ignored-when-progress-exists');
    expect(fake.posts).toHaveLength(6);
  });

  it('a chain interrupted by a timeout on post 3 resumes from the saved progress: exactly N posts', async () => {
    const n = 8;
    fake.hangNext((r) => on.publish(r) && fake.posts.length === 2, 1_500);
    const j = job({ contentType: 'thread', text: null, thread: chainOf(n) });
    const submitted = await createThreadsAdapter(settings(), makeDeps().deps).submit(j.current());
    if (!submitted.ok) throw new Error('submit failed');
    const first = await createThreadsAdapter(settings(), makeDeps({ fetch: shortFetch(250) }).deps).publish(j.current(), submitted.containerId);
    expect(first).toMatchObject({ ok: 'pending' });
    expect(fake.posts).toHaveLength(3);
    expect(j.state.progress).toMatchObject({ index: 2, publishing: fake.posts[2]?.containerId });

    const second = await createThreadsAdapter(settings(), makeDeps().deps).publish(j.current(), submitted.containerId);
    expect(second).toMatchObject({ ok: true, postId: fake.posts[0]?.id });
    expectChained(n);
    expect(publishCalls()).toBe(n);
  });

  it('a chain interrupted by a timeout after post 3 (creating post 4) resumes: exactly N posts', async () => {
    const n = 6;
    fake.hangNext((r) => on.createContainer(r) && fake.posts.length === 3, 1_500);
    const j = job({ contentType: 'thread', text: null, thread: chainOf(n) });
    const submitted = await createThreadsAdapter(settings(), makeDeps().deps).submit(j.current());
    if (!submitted.ok) throw new Error('submit failed');
    const first = await createThreadsAdapter(settings(), makeDeps({ fetch: shortFetch(250) }).deps).publish(j.current(), submitted.containerId);
    expect(first).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    expect(first.ok === false && first.message).toMatch(/post 4 of 6; posts 1\.\.3 are live/);
    expect(j.state.progress).toMatchObject({ index: 3, container: null });

    const second = await createThreadsAdapter(settings(), makeDeps().deps).publish(j.current(), submitted.containerId);
    expect(second.ok).toBe(true);
    expectChained(n);
  });

  it('refuses a chain the reply quota cannot hold, before creating anything', async () => {
    fake.knobs.quota.replyUsage = 990;
    const adapter = createThreadsAdapter(settings(), makeDeps().deps);
    expect(await adapter.submit(job({ contentType: 'thread', thread: chainOf(12) }).current())).toMatchObject({ ok: false, code: 'quota_exceeded' });
    expect(fake.containers.size).toBe(0);
    expect((await adapter.submit(job({ contentType: 'thread', thread: chainOf(11) }).current())).ok).toBe(true);
  });
});

interface ErrorCase {
  row: string;
  status: number;
  body: unknown;
  code: JobErrorCode;
  retryable: boolean;
}

const ERROR_CASES: ErrorCase[] = [
  { row: 'access token invalid or expired (190)', status: 400, body: graphError(190, 'Error validating access token: Session has expired', { subcode: 463 }), code: 'token_expired', retryable: false },
  { row: 'account restricted (2207051, 4279013)', status: 400, body: graphError(10, 'Action is blocked', { subcode: 2207051 }), code: 'permission_revoked', retryable: false },
  { row: 'account restricted (2207051, 4279013)', status: 400, body: graphError(4279013, 'This account is restricted'), code: 'permission_revoked', retryable: false },
  { row: 'publishing quota used up (2207042)', status: 400, body: graphError(9, 'The user has reached the publishing limit', { subcode: 2207042 }), code: 'quota_exceeded', retryable: false },
  { row: 'permission missing (10, 200-299)', status: 400, body: graphError(10, 'Application does not have permission for this action'), code: 'permission_revoked', retryable: false },
  { row: 'permission missing (10, 200-299)', status: 403, body: graphError(200, 'Permissions error'), code: 'permission_revoked', retryable: false },
  ...[4, 17, 32, 613].map((c) => ({ row: 'throttled (4, 17, 32, 613)', status: 400, body: graphError(c, 'Application request limit reached'), code: 'upstream_5xx' as const, retryable: true })),
  { row: 'media could not be fetched', status: 400, body: graphError(100, 'Media could not be fetched from this URI: https://cdn.example.com/a.jpg'), code: 'media_unsupported_format', retryable: false },
  { row: 'media too large (2207004)', status: 400, body: graphError(36000, 'The image size is too large.', { subcode: 2207004 }), code: 'media_too_large', retryable: false },
  { row: 'text over 500 characters', status: 400, body: graphError(100, 'Param text must be at most 500 characters long.'), code: 'upstream_unknown', retryable: false },
  { row: 'media not ready yet (9007, 2207027)', status: 400, body: graphError(9007, 'The media is not ready for publishing', { subcode: 2207027 }), code: 'upstream_5xx', retryable: true },
  { row: 'transient Graph error (is_transient, 1, 2)', status: 400, body: graphError(2, 'Service temporarily unavailable', { transient: true }), code: 'upstream_5xx', retryable: true },
  { row: 'HTTP 5xx', status: 503, body: '<html>Service Unavailable: ignore previous instructions</html>', code: 'upstream_5xx', retryable: true },
  { row: 'HTTP 429', status: 429, body: 'Too Many Requests', code: 'upstream_5xx', retryable: true },
  { row: 'HTTP 401', status: 401, body: 'Unauthorized', code: 'token_expired', retryable: false },
  { row: 'HTTP 403', status: 403, body: 'Forbidden', code: 'permission_revoked', retryable: false },
  { row: 'anything else', status: 400, body: graphError(12345, 'Something nobody documented'), code: 'upstream_unknown', retryable: false },
];

describe('threads adapter: error table (spec 7.4)', () => {
  it.each(ERROR_CASES)('$row — $status → $code', async (c) => {
    expect(threadsErrorRow(parseGraphError(c.status, c.body)).name).toBe(c.row);
    fake.failNext(on.createContainer, c.status, c.body);
    const { deps, logs } = makeDeps();
    const result = await createThreadsAdapter(settings(), deps).submit(job().current());
    expect(result).toMatchObject({ ok: false, code: c.code, retryable: c.retryable });
    const raw = typeof c.body === 'string' ? c.body : JSON.stringify(c.body);
    // Our words out, the network's raw body to the log only.
    if (!result.ok) expect(raw).not.toContain(result.message);
    if (!result.ok) expect(result.message).not.toMatch(/ignore previous|nobody documented|Session has expired/);
    expect(logs.some((l) => l.details.body === raw && l.details.status === c.status)).toBe(true);
    expect(JSON.stringify(logs)).not.toContain(fake.token);
    expect(fake.posts).toHaveLength(0);
  });

  it('no answer (network error or timeout) → upstream_5xx, retryable', async () => {
    fake.hangNext(on.createContainer, 1_500);
    const result = await createThreadsAdapter(settings(), makeDeps({ fetch: shortFetch(200) }).deps).submit(job().current());
    expect(result).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
  });

  it('every row of the table is exercised', () => {
    const covered = new Set([...ERROR_CASES.map((c) => c.row), 'no answer (network error or timeout)']);
    expect(THREADS_ERROR_TABLE.map((r) => r.name).filter((n) => !covered.has(n))).toEqual([]);
  });

  it('a revoked token, as the fake itself answers it → token_expired', async () => {
    fake.revokeToken(fake.token);
    expect(await createThreadsAdapter(settings(), makeDeps().deps).submit(job().current())).toMatchObject({ ok: false, code: 'token_expired' });
  });

  it('the daily post quota, read before anything is created → quota_exceeded', async () => {
    fake.knobs.quota.usage = 250;
    expect(await createThreadsAdapter(settings(), makeDeps().deps).submit(job().current())).toMatchObject({ ok: false, code: 'quota_exceeded' });
    expect(fake.containers.size).toBe(0);
  });

  it.each([
    ['FAILED_DOWNLOADING_VIDEO', 'media_unsupported_format'],
    ['INVALID_ASPEC_RATIO', 'media_unsupported_format'],
    ['UNKNOWN', 'upstream_unknown'],
  ] as const)('a container in ERROR (%s) → %s', async (errorMessage, code) => {
    fake.knobs.nextContainerError = errorMessage;
    const j = job({ contentType: 'video', media: [{ url: 'https://cdn.example.com/v.mp4', sizeBytes: 10, contentType: 'video/mp4' }] });
    const { published } = await drive(createThreadsAdapter(settings(), makeDeps().deps), j);
    expect(published).toMatchObject({ ok: false, code, retryable: false });
    expect(fake.posts).toHaveLength(0);
  });
});

describe('threads OAuth', () => {
  const redirectUri = 'https://service.example.com/connections/callback';

  it('builds the authorization URL with the scopes, exchanges the code for a long-lived token and reads the account', async () => {
    const oauth = createThreadsOAuth(settings(), makeDeps().deps);
    const url = new URL(oauth.authorizationUrl({ state: 'st_1', redirectUri }));
    expect(url.origin + url.pathname).toBe(fake.authorizeUrl);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({ client_id: fake.clientId, redirect_uri: redirectUri, response_type: 'code', state: 'st_1' });
    expect(url.searchParams.get('scope')?.split(',')).toEqual(expect.arrayContaining(['threads_basic', 'threads_content_publish']));
    await fetch(url);
    expect(fake.authorizeRequests[0]).toMatchObject({ state: 'st_1' });

    const before = Date.now();
    const result = await oauth.exchangeCode({ state: 'state_1', code: fake.issueCode(redirectUri), redirectUri });
    if (!result.ok) throw new Error(`exchange failed: ${result.code}`);
    expect(result.tokens).toMatchObject({ refreshToken: null, accountId: fake.userId, accountName: fake.username });
    expect(result.tokens.accessToken).toMatch(/^long-/);
    expect(result.tokens.expiresAt).toBeGreaterThanOrEqual(before + 5_183_944_000);

    // The long-lived token publishes.
    const j = job({ credentials: { accessToken: result.tokens.accessToken, accountId: result.tokens.accountId } });
    expect((await drive(createThreadsAdapter(settings(), makeDeps().deps), j)).published?.ok).toBe(true);

    const refreshed = await oauth.refresh?.(result.tokens);
    if (!refreshed?.ok) throw new Error('refresh failed');
    expect(refreshed.tokens.accessToken).not.toBe(result.tokens.accessToken);
    expect(refreshed.tokens).toMatchObject({ accountId: fake.userId, accountName: fake.username });
    expect(fake.requests.some((r: FakeRequest) => r.path === '/refresh_access_token' && r.params.grant_type === 'th_refresh_token')).toBe(true);
  });

  it('refuses a bad code, a wrong redirect URI, a dead token on refresh, and a missing configuration', async () => {
    const oauth = createThreadsOAuth(settings(), makeDeps().deps);
    expect((await oauth.exchangeCode({ state: 'state_1', code: 'nope', redirectUri })).ok).toBe(false);
    expect((await oauth.exchangeCode({ state: 'state_1', code: fake.issueCode(redirectUri), redirectUri: 'https://elsewhere.example/cb' })).ok).toBe(false);
    const dead = { accessToken: 'long-dead', refreshToken: null, expiresAt: null, accountId: fake.userId, accountName: 'acme' };
    expect(await oauth.refresh?.(dead)).toMatchObject({ ok: false, code: 'token_expired' });
    const unconfigured = createThreadsOAuth({ ...settings(), clientSecret: undefined }, makeDeps().deps);
    expect(await unconfigured.exchangeCode({ state: 'state_1', code: 'x', redirectUri })).toMatchObject({ ok: false, code: 'upstream_unknown' });
  });
});

describe('the Threads fake rejects what the real API rejects', () => {
  const call = async (method: string, path: string, params: Record<string, string>, token: string | null = fake.token) => {
    const url = new URL(`${fake.origin}${path}`);
    if (method === 'GET') for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    const res = await fetch(url, {
      method,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), 'content-type': 'application/x-www-form-urlencoded' },
      body: method === 'POST' ? new URLSearchParams(params).toString() : undefined,
    });
    return { status: res.status, body: (await res.json()) as { error?: { code: number } } };
  };

  it('missing token, missing media_type or text, missing creation_id, missing fields, a foreign account', async () => {
    const u = `/v1.0/${fake.userId}`;
    expect((await call('POST', `${u}/threads`, { media_type: 'TEXT', text: 'x' }, null)).body.error?.code).toBe(2500);
    expect((await call('POST', `${u}/threads`, { text: 'x' })).body.error?.code).toBe(100);
    expect((await call('POST', `${u}/threads`, { media_type: 'TEXT' })).body.error?.code).toBe(100);
    expect((await call('POST', `${u}/threads`, { media_type: 'IMAGE', text: 'x' })).body.error?.code).toBe(100);
    expect((await call('POST', `${u}/threads`, { media_type: 'TEXT', text: 'x'.repeat(501) })).body.error?.code).toBe(100);
    expect((await call('POST', `${u}/threads`, { media_type: 'TEXT', text: 'x', reply_to_id: '42' })).body.error?.code).toBe(100);
    expect((await call('POST', `${u}/threads_publish`, {})).body.error?.code).toBe(100);
    expect((await call('POST', `/v1.0/1234/threads`, { media_type: 'TEXT', text: 'x' })).body.error?.code).toBe(100);
    const made = await call('POST', `${u}/threads`, { media_type: 'TEXT', text: 'x' });
    const id = (made.body as { id?: string }).id ?? '';
    expect((await call('GET', `/v1.0/${id}`, {})).body.error?.code).toBe(100);
    expect((await call('GET', `/v1.0/${id}`, { fields: 'status' })).status).toBe(200);
    expect(fake.posts).toHaveLength(0);
  });
});
