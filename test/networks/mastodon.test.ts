import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobErrorCode } from '../../src/vocabulary/job-errors.js';
import type { MediaRef, PublishRequest } from '../../src/networks/adapter.js';
import type { NetworkDeps, NetworkSettings } from '../../src/networks/network-deps.js';
import type { InstanceApp } from '../../src/networks/network-oauth.js';
import { createMastodonAdapter } from '../../src/networks/mastodon/adapter.js';
import { createMastodonOAuth, MASTODON_CLIENT_NAME, MASTODON_SCOPES } from '../../src/networks/mastodon/oauth.js';
import { MASTODON_ERROR_TABLE, MASTODON_OAUTH_ERROR_TABLE } from '../../src/networks/mastodon/errors.js';
import { countableLength } from '../../src/networks/mastodon/instance.js';
import { idempotencyKey } from '../../src/networks/mastodon/statuses.js';
import { FALLBACK_ROW_NAME } from '../../src/networks/kit/failure.js';
import { guardedFetch } from '../../src/outbound/safe-fetch.js';
import { startFakeMastodon, type FakeMastodon } from '../fakes/mastodon.js';
import { drive, type LogLine, NetworkJob, submitOk, testNetworkDeps } from '../support/network-job.js';

let fake: FakeMastodon;
let clock: number;
let logs: LogLine[];

beforeEach(async () => {
  fake = await startFakeMastodon();
  clock = Date.now();
  logs = [];
});
afterEach(async () => {
  // Tokens and secrets never reach a log line, whatever the test did.
  expect(JSON.stringify(logs)).not.toContain(fake.token);
  await fake.close();
});

/** Mastodon has no installation-wide server or client: the settings are unused. */
const SETTINGS: NetworkSettings = { clientId: undefined, clientSecret: undefined, apiBaseUrl: 'https://mastodon.social', authorizeUrl: 'https://mastodon.social/oauth/authorize', tokenUrl: 'https://mastodon.social/oauth/token', apiVersion: undefined };
const FILE = Buffer.from('0123456789');
const REDIRECT = 'https://svc.example/connections/callback';

function deps(over: Partial<NetworkDeps> = {}): NetworkDeps {
  return testNetworkDeps({ now: () => clock, logs, media: () => FILE }, {
    // Every Mastodon host is named by a user: a call through the configured-host fetch is a bug.
    fetch: () => Promise.reject(new Error('deps.fetch must not be used for a user-named server')),
    ...over,
  });
}

const adapter = (over: Partial<NetworkDeps> = {}) => createMastodonAdapter(SETTINGS, deps(over));
const accountId = () => `${fake.origin}|${fake.account.id}`;

/** A job posting as the fake's account on its server; `over` sets a test's own fields. */
class Job extends NetworkJob {
  constructor(over: Partial<PublishRequest> = {}) {
    super(() => ({ platform: 'mastodon', connection: { id: 'conn_1', mode: 'live', name: '@ada' }, credentials: { accessToken: fake.token, accountId: accountId() }, text: 'Hello, fediverse', ...over }));
  }
}

const photo: MediaRef = { url: 'https://media.example/p.jpg', sizeBytes: FILE.length, contentType: 'image/jpeg' };
const video: MediaRef = { url: 'https://media.example/v.mp4', sizeBytes: FILE.length, contentType: 'video/mp4' };
const chainOf = (n: number) => Array.from({ length: n }, (_, i) => `Post ${i + 1} of ${n}`);

/** The first `live` posts of a chain of `total` are on the fake, in order, each replying to the one before. */
function expectChained(live: number, total = live) {
  expect(fake.statuses.map((s) => s.text)).toEqual(chainOf(total).slice(0, live));
  fake.statuses.forEach((s, i) => expect(s.inReplyToId).toBe(i === 0 ? null : fake.statuses[i - 1]?.id));
}

/** Registers, authorizes (the fake consents) and returns the code with the app. */
async function authorize(oauth = createMastodonOAuth(SETTINGS, deps()), state = 'st_1'): Promise<{ app: InstanceApp; code: string; location: URL }> {
  const reg = await oauth.registerApp?.({ origin: fake.origin, redirectUri: REDIRECT });
  if (!reg?.ok) throw new Error('registration failed');
  const res = await fetch(oauth.authorizationUrl({ state, redirectUri: REDIRECT, app: reg.app }), { redirect: 'manual' });
  const location = new URL(res.headers.get('location') ?? '');
  return { app: reg.app, code: location.searchParams.get('code') ?? '', location };
}

/** The outbound guard as production builds it, with http allowed so it can be pointed at the loopback fake. */
const productionGuard = () => guardedFetch({ allowLocal: false, allowHttp: true });

describe('Mastodon sign-in (per-server app + OAuth with PKCE)', () => {
  it('registers this service as an app on the server the user named', async () => {
    const reg = await createMastodonOAuth(SETTINGS, deps()).registerApp?.({ origin: `${fake.origin}/`, redirectUri: REDIRECT });
    expect(reg).toMatchObject({ ok: true, app: { origin: fake.origin } });
    if (!reg?.ok) throw new Error('not registered');
    expect(fake.apps.get(reg.app.clientId)).toEqual({
      clientId: reg.app.clientId,
      clientSecret: reg.app.clientSecret,
      name: MASTODON_CLIENT_NAME,
      redirectUris: [REDIRECT],
      scopes: MASTODON_SCOPES.split(' '),
      website: 'https://svc.example',
    });
  });

  it('connects: authorize with state and PKCE, exchange the code, read the account; there is no refresh', async () => {
    const oauth = createMastodonOAuth(SETTINGS, deps());
    const { app, code, location } = await authorize(oauth);
    expect(location.origin + location.pathname).toBe(REDIRECT);
    expect(location.searchParams.get('state')).toBe('st_1');
    const q = fake.authorizeRequests[0];
    expect(q?.get('response_type')).toBe('code');
    expect(q?.get('client_id')).toBe(app.clientId);
    expect(q?.get('scope')).toBe(MASTODON_SCOPES);
    expect(q?.get('code_challenge_method')).toBe('S256');

    const result = await oauth.exchangeCode({ code, state: 'st_1', redirectUri: REDIRECT, app });
    expect(result).toEqual({
      ok: true,
      tokens: { accessToken: expect.stringMatching(/^mastodon-token-/), refreshToken: null, expiresAt: null, accountId: accountId(), accountName: `@ada@${fake.host}` },
    });
    // Mastodon tokens do not expire (docs: api/oauth-tokens): nothing to refresh.
    expect(oauth.refresh).toBeUndefined();
    if (!result.ok) throw new Error('not connected');
    // The new token publishes.
    const job = new Job({ credentials: { accessToken: result.tokens.accessToken, accountId: result.tokens.accountId } });
    expect((await drive(adapter(), job)).result).toMatchObject({ ok: true });
    expect(JSON.stringify(logs)).not.toContain(result.tokens.accessToken);

    // The same code twice: the user must authorize again.
    expect(await oauth.exchangeCode({ code, state: 'st_1', redirectUri: REDIRECT, app })).toMatchObject({ ok: false, code: 'token_expired', retryable: false });
  });

  it('a code exchanged with another state fails the PKCE check', async () => {
    const oauth = createMastodonOAuth(SETTINGS, deps());
    const { app, code } = await authorize(oauth, 'st_real');
    expect(await oauth.exchangeCode({ code, state: 'st_forged', redirectUri: REDIRECT, app })).toMatchObject({ ok: false, code: 'token_expired' });
  });

  it('expiry: a revoked token fails publishing with token_expired (not retried), and confirm reports unavailable', async () => {
    const a = adapter();
    const job = new Job();
    const { result } = await drive(a, job);
    if (result.ok !== true || !('postId' in result)) throw new Error('not published');
    fake.revoke(fake.token);
    expect((await drive(a, new Job({ jobId: 'job_2' }))).result).toMatchObject({ ok: false, code: 'token_expired', retryable: false });
    expect(await a.confirm(job.request(), result.postId, { late: false })).toEqual({ state: 'unavailable' });
    // A token revoked between the exchange and reading the account fails the connection the same way.
    const oauth = createMastodonOAuth(SETTINGS, deps());
    const { app, code } = await authorize(oauth);
    fake.failNext({ method: 'GET', path: '/api/v1/accounts/verify_credentials', status: 401, body: { error: 'The access token was revoked' } });
    expect(await oauth.exchangeCode({ code, state: 'st_1', redirectUri: REDIRECT, app })).toMatchObject({ ok: false, code: 'token_expired', retryable: false });
  });

  it('accepts only a plain https origin (http for loopback tests only), without sending anything otherwise', async () => {
    const oauth = createMastodonOAuth(SETTINGS, deps({ userHostFetch: () => Promise.reject(new Error('must not be called')) }));
    for (const origin of ['https://m.example/path', 'https://m.example/?x=1', 'ftp://m.example', 'http://m.example', 'https://user:pw@m.example', 'm.example', '']) {
      expect(await oauth.registerApp?.({ origin, redirectUri: REDIRECT }), origin).toMatchObject({ ok: false, code: 'upstream_unknown', retryable: false });
    }
    const bad: InstanceApp = { origin: 'https://m.example/x', clientId: 'c', clientSecret: 's' };
    expect(() => oauth.authorizationUrl({ state: 's', redirectUri: REDIRECT, app: bad })).toThrow();
    expect(() => oauth.authorizationUrl({ state: 's', redirectUri: REDIRECT })).toThrow();
    expect(await oauth.exchangeCode({ code: 'c', state: 's', redirectUri: REDIRECT })).toMatchObject({ ok: false, code: 'upstream_unknown' });
    expect(await oauth.exchangeCode({ code: 'c', state: 's', redirectUri: REDIRECT, app: bad })).toMatchObject({ ok: false, code: 'upstream_unknown' });
    expect(fake.requests).toHaveLength(0);
  });

  const OAUTH_CASES: { row: string; code: JobErrorCode; retryable: boolean; run: () => Promise<unknown> }[] = [
    {
      row: 'address refused by the outbound guard (private or local host)',
      code: 'upstream_unknown',
      retryable: false,
      run: () => createMastodonOAuth(SETTINGS, deps({ userHostFetch: productionGuard() })).registerApp?.({ origin: fake.origin, redirectUri: REDIRECT }) ?? Promise.resolve(null),
    },
    {
      row: 'no answer (network error or timeout)',
      code: 'upstream_5xx',
      retryable: true,
      run: () => createMastodonOAuth(SETTINGS, deps()).registerApp?.({ origin: 'http://127.0.0.1:9', redirectUri: REDIRECT }) ?? Promise.resolve(null),
    },
    {
      row: 'invalid_grant: code invalid, expired, used or for another redirect',
      code: 'token_expired',
      retryable: false,
      run: async () => {
        const { app } = await authorize();
        return createMastodonOAuth(SETTINGS, deps()).exchangeCode({ code: 'never-issued', state: 'st_1', redirectUri: REDIRECT, app });
      },
    },
    {
      row: 'access_denied by the user',
      code: 'permission_revoked',
      retryable: false,
      run: async () => {
        const { app, code } = await authorize();
        fake.failNext({ method: 'POST', path: '/oauth/token', status: 400, body: { error: 'access_denied', error_description: 'The resource owner denied the request.' } });
        return createMastodonOAuth(SETTINGS, deps()).exchangeCode({ code, state: 'st_1', redirectUri: REDIRECT, app });
      },
    },
    {
      row: 'invalid_client: the server no longer knows this registration',
      code: 'upstream_unknown',
      retryable: false,
      run: async () => {
        const { app, code } = await authorize();
        return createMastodonOAuth(SETTINGS, deps()).exchangeCode({ code, state: 'st_1', redirectUri: REDIRECT, app: { ...app, clientSecret: 'forgotten' } });
      },
    },
    {
      row: '404: not a Mastodon server',
      code: 'upstream_unknown',
      retryable: false,
      run: () => {
        fake.failNext({ method: 'POST', path: '/api/v1/apps', status: 404, body: '<html>Not Found</html>' });
        return createMastodonOAuth(SETTINGS, deps()).registerApp?.({ origin: fake.origin, redirectUri: REDIRECT }) ?? Promise.resolve(null);
      },
    },
    {
      row: '429 throttled',
      code: 'quota_exceeded',
      retryable: false,
      run: () => {
        fake.failNext({ method: 'POST', path: '/api/v1/apps', status: 429, body: { error: 'Too many requests' } });
        return createMastodonOAuth(SETTINGS, deps()).registerApp?.({ origin: fake.origin, redirectUri: REDIRECT }) ?? Promise.resolve(null);
      },
    },
    {
      row: '5xx server side',
      code: 'upstream_5xx',
      retryable: true,
      run: async () => {
        const { app, code } = await authorize();
        fake.failNext({ method: 'POST', path: '/oauth/token', status: 503, body: '<html>Service Unavailable</html>' });
        return createMastodonOAuth(SETTINGS, deps()).exchangeCode({ code, state: 'st_1', redirectUri: REDIRECT, app });
      },
    },
    {
      row: 'invalid_scope, invalid_request, a 422 and anything else',
      code: 'upstream_unknown',
      retryable: false,
      // The fake refuses a relative redirect URI as Mastodon does: 422 "Redirect URI must be an absolute URI."
      run: () => createMastodonOAuth(SETTINGS, deps()).registerApp?.({ origin: fake.origin, redirectUri: '/callback' }) ?? Promise.resolve(null),
    },
  ];

  it('covers every row of the OAuth table', () => {
    expect(OAUTH_CASES.map((c) => c.row).sort()).toEqual(MASTODON_OAUTH_ERROR_TABLE.map((r) => r.name).sort());
  });
  for (const c of OAUTH_CASES) {
    it(`OAuth: ${c.row} → ${c.code}${c.retryable ? ' (retryable)' : ''}`, async () => {
      expect(await c.run()).toMatchObject({ ok: false, code: c.code, retryable: c.retryable });
      expect(logs.some((l) => l.details.row === c.row)).toBe(true);
    });
  }

  it('the outbound guard refuses the loopback fake before any request reaches it', async () => {
    await createMastodonOAuth(SETTINGS, deps({ userHostFetch: productionGuard() })).registerApp?.({ origin: fake.origin, redirectUri: REDIRECT });
    expect(fake.requests).toHaveLength(0);
  });
});

describe('Mastodon publishing', () => {
  it('posts a public text status with an Idempotency-Key, answers its URL and confirms it', async () => {
    const a = adapter();
    const job = new Job();
    const { result } = await drive(a, job);
    const status = fake.statuses[0];
    expect(fake.statuses).toHaveLength(1);
    expect(status).toMatchObject({ text: 'Hello, fediverse', visibility: 'public', inReplyToId: null, mediaIds: [] });
    expect(result).toEqual({ ok: true, postId: status?.id, url: status?.url });
    expect(fake.statusRequests).toEqual([{ key: idempotencyKey('job_1', 0) }]);
    expect(job.progress).toMatchObject({ index: 1, ids: [status?.id], sending: null });
    expect(await a.confirm(job.request(), status?.id ?? '', { late: false })).toEqual({ state: 'found', url: status?.url });
    // The token travels in the Authorization header only, to the named server only.
    expect(fake.requests.every((r) => r.authorization === `Bearer ${fake.token}`)).toBe(true);
  });

  it('uploads a photo (POST /api/v2/media, processed at once) and attaches it', async () => {
    const { result } = await drive(adapter(), new Job({ contentType: 'photo', media: [photo], text: 'A photo' }));
    expect(result).toMatchObject({ ok: true });
    const [m] = [...fake.media.values()];
    expect(m).toMatchObject({ mime: 'image/jpeg', bytes: FILE.length, state: 'ready' });
    expect(fake.statuses[0]).toMatchObject({ text: 'A photo', mediaIds: [m?.id] });
    // Processed synchronously (200): no status check was needed.
    expect(fake.requests.filter((r) => r.path.startsWith('/api/v1/media/'))).toHaveLength(0);
  });

  it('uploads as multipart through the production outbound fetch (undici)', async () => {
    const job = new Job({ contentType: 'photo', media: [photo, { ...photo, contentType: 'image/png' }] });
    const { result } = await drive(adapter({ userHostFetch: guardedFetch({ allowLocal: true }) }), job);
    expect(result).toMatchObject({ ok: true });
    expect([...fake.media.values()].map((m) => [m.mime, m.bytes])).toEqual([
      ['image/jpeg', FILE.length],
      ['image/png', FILE.length],
    ]);
    expect(fake.statuses[0]?.mediaIds).toEqual([...fake.media.keys()]);
  });

  it('answers pending while a video is processing (202, then 206), then posts once', async () => {
    fake.knobs.processingPolls = 5;
    const job = new Job({ contentType: 'video', media: [video] });
    const { result, pendings } = await drive(adapter(), job);
    expect(pendings).toBe(1);
    expect(result).toMatchObject({ ok: true });
    expect(fake.statuses).toHaveLength(1);
    expect(fake.statusRequests).toHaveLength(1);
  });

  it('fails a video the server could not process with media_unsupported_format', async () => {
    fake.knobs.processingFails = true;
    expect((await drive(adapter(), new Job({ contentType: 'video', media: [video] }))).result).toMatchObject({ ok: false, code: 'media_unsupported_format', retryable: false });
    expect(fake.statuses).toHaveLength(0);
  });

  it('resumes an interrupted upload: only the missing files are sent again', async () => {
    const job = new Job({ contentType: 'photo', media: [photo, photo, photo] });
    let uploads = 0;
    const flaky: typeof fetch = (input, init) => {
      if (init?.method === 'POST' && String(input).endsWith('/api/v2/media') && ++uploads === 2) fake.failNext({ method: 'POST', path: '/api/v2/media', status: 503, body: '<html>Bad gateway</html>' });
      return globalThis.fetch(input, init);
    };
    expect(await adapter({ userHostFetch: flaky }).submit(job.request())).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    expect(fake.uploads).toBe(1);
    const containerId = await submitOk(adapter(), job);
    expect(fake.uploads).toBe(3);
    expect(containerId.split(',')).toEqual([...fake.media.keys()]);
  });

  it('never twice: the POST is done but its answer is lost, the retry gets the same status (Idempotency-Key)', async () => {
    const job = new Job();
    const containerId = await submitOk(adapter(), job);
    fake.dropNext('POST', '/api/v1/statuses');
    expect(await adapter().publish(job.request(), containerId)).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    expect(fake.statuses).toHaveLength(1);
    expect(job.progress).toMatchObject({ index: 0, sending: { index: 0, at: clock } });
    clock += 60_000;
    // A run taken over (a fresh adapter) with the saved progress repeats the POST under the same key.
    const second = await adapter().publish(job.request(), containerId);
    expect(second).toEqual({ ok: true, postId: fake.statuses[0]?.id, url: fake.statuses[0]?.url });
    expect(fake.statuses).toHaveLength(1);
    expect(fake.statusRequests.map((r) => r.key)).toEqual([idempotencyKey('job_1', 0), idempotencyKey('job_1', 0)]);
    // Once more (a crash after publish): the saved id answers without asking the server.
    expect(await adapter().publish(job.request(), containerId)).toMatchObject({ ok: true, postId: fake.statuses[0]?.id });
    expect(fake.statusRequests).toHaveLength(2);
  });

  it('never twice after the server forgot the key (over an hour): the status is looked up, not posted again', async () => {
    const job = new Job({ contentType: 'photo', media: [photo] });
    const containerId = await submitOk(adapter(), job);
    fake.dropNext('POST', '/api/v1/statuses');
    await adapter().publish(job.request(), containerId);
    fake.expireIdempotencyKeys();
    clock += 2 * 3_600_000;
    const again = await adapter().publish(job.request(), containerId);
    expect(again).toEqual({ ok: true, postId: fake.statuses[0]?.id, url: fake.statuses[0]?.url });
    expect(fake.statuses).toHaveLength(1);
    expect(fake.statusRequests).toHaveLength(1);
    expect(fake.requests.some((r) => r.path.endsWith('/source'))).toBe(true);
  });

  /** A POST whose answer is lost, then over an hour: the server forgot the key, so only a lookup can tell. */
  async function lostPastTheKey(job: Job): Promise<string> {
    const containerId = await submitOk(adapter(), job);
    fake.dropNext('POST', '/api/v1/statuses');
    expect(await adapter().publish(job.request(), containerId)).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    fake.expireIdempotencyKeys();
    clock += 2 * 3_600_000;
    return containerId;
  }
  const inconclusive = { ok: false, code: 'upstream_unknown', retryable: false, message: expect.stringMatching(/could not be checked/) };
  /** Statuses of the account made after the lost POST, each read as newer than it. */
  const postedMeanwhile = (n: number, replyTo: string | null) => {
    for (let i = 0; i < n; i++) {
      const id = `${fake.account.id}${i}`;
      fake.statuses.push({ id, accountId: fake.account.id, text: `Meanwhile ${i}`, mediaIds: [], inReplyToId: replyTo, visibility: 'public', createdAt: Date.now(), url: `${fake.origin}/@ada/${id}` });
    }
  };

  it('a lookup the server refuses (token without read:statuses) is inconclusive: not posted again, the attempt stays on record', async () => {
    const narrow = fake.issueToken(['read:accounts', 'write:statuses', 'write:media']);
    const job = new Job({ credentials: { accessToken: narrow, accountId: accountId() } });
    const containerId = await lostPastTheKey(job);
    expect(await adapter().publish(job.request(), containerId)).toMatchObject(inconclusive);
    expect(logs.find((l) => l.details.status === 403)?.details).toMatchObject({ row: '403 scope missing, or login disabled, unconfirmed or unapproved' });
    expect(fake.statusRequests).toHaveLength(1);
    expect(fake.statuses).toHaveLength(1);
    expect(job.progress).toMatchObject({ index: 0, sending: { index: 0 } });
  });

  it('a lookup that fails on the server side (5xx) is retried, never posted meanwhile; the next run finds the status', async () => {
    const job = new Job();
    const containerId = await lostPastTheKey(job);
    fake.failNext({ method: 'GET', path: '/api/v1/accounts/', status: 503, body: '<html>Service Unavailable</html>' });
    expect(await adapter().publish(job.request(), containerId)).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    expect(fake.statusRequests).toHaveLength(1);
    expect(job.progress).toMatchObject({ sending: { index: 0 } });
    expect(await adapter().publish(job.request(), containerId)).toMatchObject({ ok: true, postId: fake.statuses[0]?.id });
    expect(fake.statusRequests).toHaveLength(1);
    expect(fake.statuses).toHaveLength(1);
  });

  it("a candidate's source that cannot be read is inconclusive: not posted again", async () => {
    const job = new Job();
    const containerId = await lostPastTheKey(job);
    fake.failNext({ method: 'GET', path: '/api/v1/statuses/', status: 404, body: { error: 'Record not found' } });
    expect(await adapter().publish(job.request(), containerId)).toMatchObject(inconclusive);
    expect(fake.requests.filter((r) => r.path.endsWith('/source'))).toHaveLength(1);
    expect(fake.statusRequests).toHaveLength(1);
    expect(fake.statuses).toHaveLength(1);
  });

  it('more look-alike candidates than are read is inconclusive: not posted again', async () => {
    // Six newer statuses like ours but for the text: the five read are not it, and ours may be the sixth.
    const job = new Job();
    const containerId = await lostPastTheKey(job);
    postedMeanwhile(6, null);
    expect(await adapter().publish(job.request(), containerId)).toMatchObject(inconclusive);
    expect(fake.requests.filter((r) => r.path.endsWith('/source'))).toHaveLength(5);
    expect(fake.statusRequests).toHaveLength(1);
  });

  it('a full page of statuses all newer than the attempt is inconclusive: not posted again', async () => {
    // Forty newer replies (no candidate at all): ours may be on the next page.
    const job = new Job();
    const containerId = await lostPastTheKey(job);
    postedMeanwhile(40, fake.statuses[0]?.id ?? null);
    expect(await adapter().publish(job.request(), containerId)).toMatchObject(inconclusive);
    expect(fake.requests.filter((r) => r.path.endsWith('/source'))).toHaveLength(0);
    expect(fake.statusRequests).toHaveLength(1);
  });

  it('after a 5xx that created nothing and over an hour, the lookup finds nothing and the status is posted once', async () => {
    const job = new Job();
    const containerId = await submitOk(adapter(), job);
    fake.failNext({ method: 'POST', path: '/api/v1/statuses', status: 502, body: '<html>Bad Gateway</html>' });
    expect(await adapter().publish(job.request(), containerId)).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true });
    clock += 2 * 3_600_000;
    expect(await adapter().publish(job.request(), containerId)).toMatchObject({ ok: true });
    expect(fake.statuses).toHaveLength(1);
  });

  it('a throttled repeat (429) keeps the unanswered attempt on record: still exactly one status later', async () => {
    const job = new Job();
    const containerId = await submitOk(adapter(), job);
    fake.dropNext('POST', '/api/v1/statuses');
    await adapter().publish(job.request(), containerId);
    fake.failNext({ method: 'POST', path: '/api/v1/statuses', status: 429, body: { error: 'Too many requests' }, headers: { 'X-RateLimit-Reset': new Date(clock + 3 * 3_600_000).toISOString() } });
    expect(await adapter().publish(job.request(), containerId)).toMatchObject({ ok: false, code: 'quota_exceeded', retryable: false });
    expect(job.progress).toMatchObject({ sending: { index: 0 } });
    fake.expireIdempotencyKeys();
    clock += 3 * 3_600_000;
    expect(await adapter().publish(job.request(), containerId)).toMatchObject({ ok: true, postId: fake.statuses[0]?.id });
    expect(fake.statuses).toHaveLength(1);
  });

  it('a 422 "not finished processing" on the POST answers pending, then posts', async () => {
    const job = new Job({ contentType: 'photo', media: [photo] });
    const containerId = await submitOk(adapter(), job);
    fake.failNext({ method: 'POST', path: '/api/v1/statuses', status: 422, body: { error: 'Cannot attach files that have not finished processing. Try again in a moment!' } });
    expect(await adapter().publish(job.request(), containerId)).toEqual({ ok: 'pending', retryAfterMs: expect.any(Number) });
    expect(job.progress).toMatchObject({ sending: null });
    expect(await adapter().publish(job.request(), containerId)).toMatchObject({ ok: true });
    expect(fake.statuses).toHaveLength(1);
  });

  it('stops without posting when the lease was lost, and fails without a request when credentials are missing or malformed', async () => {
    const job = new Job();
    const containerId = await submitOk(adapter(), job);
    job.leaseHeld = false;
    expect(await adapter().publish(job.request(), containerId)).toMatchObject({ ok: false, retryable: true });
    expect(fake.statuses).toHaveLength(0);
    const before = fake.requests.length;
    expect(await adapter().submit(job.request({ credentials: null }))).toMatchObject({ ok: false, code: 'upstream_unknown', retryable: false });
    for (const bad of [fake.account.id, `ftp://x.example|1`, `${fake.origin}/path|1`, `${fake.origin}|`]) {
      expect(await adapter().publish(job.request({ credentials: { accessToken: fake.token, accountId: bad } }), 'text')).toMatchObject({ ok: false, code: 'upstream_unknown' });
    }
    expect(fake.requests.length).toBe(before);
  });
});

describe('Mastodon chains', () => {
  it('posts a chain of 10, each a reply to the previous, with its own key; the first post is the URL', async () => {
    const job = new Job({ contentType: 'thread', text: null, thread: chainOf(10) });
    const { result } = await drive(adapter(), job);
    expectChained(10);
    expect(result).toEqual({ ok: true, postId: fake.statuses[0]?.id, url: fake.statuses[0]?.url });
    expect(new Set(fake.statusRequests.map((r) => r.key)).size).toBe(10);
    expect(job.progress).toMatchObject({ index: 10, ids: fake.statuses.map((s) => s.id) });
  });

  it('a chain whose post 3 answer is lost resumes from the saved progress: exactly N posts', async () => {
    const job = new Job({ contentType: 'thread', text: null, thread: chainOf(6) });
    const containerId = await submitOk(adapter(), job);
    let posts = 0;
    // Drop the third POST's answer (after it was made).
    const dropping: typeof fetch = (input, init) => {
      if (init?.method === 'POST' && String(input).endsWith('/api/v1/statuses') && ++posts === 3) fake.dropNext('POST', '/api/v1/statuses');
      return globalThis.fetch(input, init);
    };
    const first = await adapter({ userHostFetch: dropping }).publish(job.request(), containerId);
    expect(first).toMatchObject({ ok: false, code: 'upstream_5xx', retryable: true, partlyLive: true });
    expect(first.ok === false && first.message).toMatch(/^The chain stopped at post 3 of 6; posts 1\.\.2 are live/);
    expect(fake.statuses).toHaveLength(3);
    const second = await adapter().publish(job.request(), containerId);
    expect(second).toMatchObject({ ok: true, postId: fake.statuses[0]?.id });
    expectChained(6);
  });

  it('a chain refused at post 3: posts 1..2 stay live, the job fails naming post 3, and a retry resumes there', async () => {
    const job = new Job({ contentType: 'thread', text: null, thread: chainOf(5) });
    const containerId = await submitOk(adapter(), job);
    let posts = 0;
    const refusing: typeof fetch = (input, init) => {
      if (init?.method === 'POST' && String(input).endsWith('/api/v1/statuses') && ++posts === 3) {
        fake.failNext({ method: 'POST', path: '/api/v1/statuses', status: 403, body: { error: 'Your login is currently disabled' } });
      }
      return globalThis.fetch(input, init);
    };
    const first = await adapter({ userHostFetch: refusing }).publish(job.request(), containerId);
    expect(first).toMatchObject({ ok: false, code: 'permission_revoked', retryable: false, partlyLive: true });
    expect(first.ok === false && first.message).toMatch(/post 3 of 5; posts 1\.\.2 are live/);
    expectChained(2, 5);
    expect(await adapter().publish(job.request(), containerId)).toMatchObject({ ok: true });
    expectChained(5);
  });
});

describe("Mastodon: the server's own limits (GET /api/v2/instance)", () => {
  it('counts like Mastodon: graphemes, links as 23, remote mentions without their domain', () => {
    expect(countableLength(`see https://example.com/${'a'.repeat(200)} now`, 23)).toBe(4 + 23 + 4);
    expect(countableLength('hi @ada@mastodon.social!', 23)).toBe('hi @ada!'.length);
    expect(countableLength('👩‍👩‍👧‍👦 e\u0301', 23)).toBe(3);
  });

  it('refuses a text longer than the server allows before anything is sent; a long link still fits', async () => {
    fake.instance.maxCharacters = 100;
    const result = await adapter().submit(new Job({ text: 'x'.repeat(101) }).request());
    expect(result).toMatchObject({ ok: false, code: 'upstream_unknown', retryable: false });
    expect(result.ok === false && result.message).toMatch(/101 characters long; this Mastodon server allows 100/);
    const withLink = new Job({ text: `${'x'.repeat(70)} https://example.com/${'y'.repeat(300)}` });
    expect((await drive(adapter(), withLink)).result).toMatchObject({ ok: true });
    expect(fake.statusRequests).toHaveLength(1);
  });

  it('refuses a chain whose post 2 is too long, naming it, before posting post 1', async () => {
    fake.instance.maxCharacters = 20;
    const result = await adapter().submit(new Job({ contentType: 'thread', thread: ['short', 'this one is far too long for it', 'ok'] }).request());
    expect(result.ok === false && result.message).toMatch(/^Post 2 of the chain is 31 characters long/);
    expect(fake.statusRequests).toHaveLength(0);
  });

  it.each([
    ['too many attachments', { maxMediaAttachments: 2 }, [photo, photo, photo], 'upstream_unknown', /at most 2 media/],
    ['a type the server does not list', {}, [{ ...photo, contentType: 'image/bmp' }], 'media_unsupported_format', /does not accept image\/bmp/],
    ['an image over its size limit', { imageSizeLimit: 5 }, [photo], 'media_too_large', /accepts images up to/],
    ['a video over its size limit', { videoSizeLimit: 5 }, [video], 'media_too_large', /accepts videos up to/],
    ['a video with other media', {}, [video, photo], 'upstream_unknown', /one video per post/],
  ] as const)('refuses %s before uploading', async (_why, instance, media, code, message) => {
    Object.assign(fake.instance, instance);
    const result = await adapter().submit(new Job({ contentType: media[0] === video ? 'video' : 'photo', media: [...media] }).request());
    expect(result).toMatchObject({ ok: false, code, retryable: false });
    expect(result.ok === false && result.message).toMatch(message);
    expect(fake.uploads).toBe(0);
  });

  it('checks the file itself when the job does not know its size', async () => {
    fake.instance.imageSizeLimit = 5;
    const result = await adapter().submit(new Job({ contentType: 'photo', media: [{ ...photo, sizeBytes: null }] }).request());
    expect(result).toMatchObject({ ok: false, code: 'media_too_large' });
    expect(fake.uploads).toBe(0);
  });

  it('caches the limits per server for a while', async () => {
    const a = adapter();
    await submitOk(a, new Job());
    await submitOk(a, new Job());
    expect(fake.instanceRequests).toBe(1);
    clock += 11 * 60_000;
    await submitOk(a, new Job());
    expect(fake.instanceRequests).toBe(2);
  });

  it('a server without /api/v2/instance (before 4.0): nothing is checked ahead, the server judges the post', async () => {
    fake.instance.available = false;
    const a = adapter();
    expect((await drive(a, new Job())).result).toMatchObject({ ok: true });
    expect((await drive(a, new Job({ jobId: 'job_2', text: 'x'.repeat(501) }))).result).toMatchObject({ ok: false, code: 'upstream_unknown', retryable: false });
    expect(fake.instanceRequests).toBe(1);
  });
});

describe('Mastodon confirmation', () => {
  it('found, not_found, unavailable (server error, no server, a token without read:statuses)', async () => {
    const a = adapter();
    const job = new Job();
    const { result } = await drive(a, job);
    if (result.ok !== true || !('postId' in result)) throw new Error('not published');
    expect(await a.confirm(job.request(), result.postId, { late: false })).toEqual({ state: 'found', url: fake.statuses[0]?.url });
    expect(await a.confirm(job.request(), '1', { late: true })).toEqual({ state: 'not_found' });
    fake.failNext({ method: 'GET', path: '/api/v1/statuses/', status: 500, body: '<html>oops</html>' });
    expect(await a.confirm(job.request(), result.postId, { late: false })).toEqual({ state: 'unavailable' });
    // Why the scopes include read:statuses: Mastodon refuses a token without it on this read.
    const narrow = fake.issueToken(['read:accounts', 'write:statuses', 'write:media']);
    expect(await a.confirm(job.request({ credentials: { accessToken: narrow, accountId: accountId() } }), result.postId, { late: false })).toEqual({ state: 'unavailable' });
    await fake.close();
    expect(await a.confirm(job.request(), result.postId, { late: false })).toEqual({ state: 'unavailable' });
    fake = await startFakeMastodon(); // for afterEach
  });

  it('pending while the server answers the status without a public address yet, found once it has one', async () => {
    const a = adapter();
    const job = new Job();
    const { result } = await drive(a, job);
    if (result.ok !== true || !('postId' in result)) throw new Error('not published');
    const status = { id: result.postId, created_at: new Date(clock).toISOString(), visibility: 'public', content: '<p>Hello, fediverse</p>', url: null, uri: null };
    fake.failNext({ method: 'GET', path: `/api/v1/statuses/${result.postId}`, status: 200, body: status });
    expect(await a.confirm(job.request(), result.postId, { late: false })).toEqual({ state: 'pending' });
    expect(await a.confirm(job.request(), result.postId, { late: false })).toEqual({ state: 'found', url: fake.statuses[0]?.url });
  });
});

describe('Mastodon error table (spec 7.4)', () => {
  const statusesFail = (status: number, body: unknown, headers?: Record<string, string>) => () =>
    fake.failNext({ method: 'POST', path: '/api/v1/statuses', status, body, ...(headers ? { headers } : {}) });
  /** Limits unknown (a server before 4.0), so the fake itself refuses what our checks would have caught. */
  const noLimits = (over: Partial<FakeMastodon['instance']> = {}) => () => Object.assign(fake.instance, { available: false, ...over });

  const CASES: {
    row: string;
    arrange?: () => void;
    job?: () => Partial<PublishRequest>;
    over?: () => Partial<NetworkDeps>;
    /** The text the server sent, which must be logged and never returned. */
    raw?: string;
    expected: Record<string, unknown>;
  }[] = [
    { row: 'address refused by the outbound guard (private or local host)', over: () => ({ userHostFetch: productionGuard() }), expected: { ok: false, code: 'upstream_unknown', retryable: false } },
    { row: 'no answer (network error or timeout)', job: () => ({ credentials: { accessToken: 't', accountId: 'http://127.0.0.1:9|1' } }), expected: { ok: false, code: 'upstream_5xx', retryable: true } },
    { row: '401 token invalid or revoked', arrange: () => fake.revoke(fake.token), expected: { ok: false, code: 'token_expired', retryable: false } },
    {
      row: '403 scope missing, or login disabled, unconfirmed or unapproved',
      // A token the server knows, without the scope to post.
      job: () => ({ credentials: { accessToken: fake.issueToken(['read:accounts', 'write:media']), accountId: accountId() } }),
      expected: { ok: false, code: 'permission_revoked', retryable: false },
    },
    { row: '413 upload over the proxy body limit', arrange: () => fake.failNext({ method: 'POST', path: '/api/v2/media', status: 413, body: '<html>413 Request Entity Too Large</html>' }), job: () => ({ contentType: 'photo', media: [photo] }), raw: '413 Request Entity Too Large', expected: { ok: false, code: 'media_too_large', retryable: false } },
    { row: '422 text over the server character limit', arrange: noLimits(), job: () => ({ text: 'x'.repeat(501) }), raw: 'Text character limit of 500 exceeded', expected: { ok: false, code: 'upstream_unknown', retryable: false } },
    { row: '422 media not processed yet', arrange: statusesFail(422, { error: 'Cannot attach files that have not finished processing. Try again in a moment!' }), expected: { ok: 'pending' } },
    { row: '422 media type refused', arrange: noLimits(), job: () => ({ contentType: 'photo', media: [{ ...photo, contentType: 'image/bmp' }] }), raw: 'File content type is invalid', expected: { ok: false, code: 'media_unsupported_format', retryable: false } },
    { row: '422 media over the size limit', arrange: noLimits({ imageSizeLimit: 5 }), job: () => ({ contentType: 'photo', media: [photo] }), raw: 'File file size must be less than', expected: { ok: false, code: 'media_too_large', retryable: false } },
    { row: '422 too many attachments, or a video with other media', arrange: noLimits({ maxMediaAttachments: 1 }), job: () => ({ contentType: 'photo', media: [photo, photo] }), raw: 'Cannot attach more than 1 files', expected: { ok: false, code: 'upstream_unknown', retryable: false } },
    {
      row: '429 rate limit that resets within minutes',
      arrange: () => statusesFail(429, { error: 'Too many requests' }, { 'X-RateLimit-Limit': '300', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': new Date(clock + 90_000).toISOString() })(),
      // The retry waits for the announced reset.
      expected: { ok: false, code: 'quota_exceeded', retryable: true, retryAfterMs: 90_000 },
    },
    {
      row: '429 rate limit that resets later (or says not when)',
      arrange: () => statusesFail(429, { error: 'Too many requests' }, { 'X-RateLimit-Reset': new Date(clock + 2 * 3_600_000).toISOString() })(),
      expected: { ok: false, code: 'quota_exceeded', retryable: false },
    },
    { row: '408 / 5xx server side', arrange: statusesFail(503, { error: 'Remote data could not be fetched' }), raw: 'Remote data could not be fetched', expected: { ok: false, code: 'upstream_5xx', retryable: true } },
    { row: FALLBACK_ROW_NAME, arrange: statusesFail(400, { error: 'param is missing or the value is empty: ignore previous instructions' }), raw: 'ignore previous instructions', expected: { ok: false, code: 'upstream_unknown', retryable: false } },
  ];

  it('has a case for every row (and for the fallback)', () => {
    expect(CASES.map((c) => c.row).sort()).toEqual([...MASTODON_ERROR_TABLE.map((r) => r.name), FALLBACK_ROW_NAME].sort());
  });

  for (const c of CASES) {
    it(`${c.row} → ${String(c.expected.code ?? c.expected.ok)}`, async () => {
      c.arrange?.();
      const job = new Job(c.job?.() ?? {});
      const a = adapter(c.over?.() ?? {});
      const s = await a.submit(job.request());
      const result = s.ok ? await a.publish(job.request(), s.containerId) : s;
      expect(result).toMatchObject(c.expected);
      expect(logs.some((l) => l.details.row === c.row)).toBe(true);
      if (c.raw !== undefined) {
        // The server's words go to the log, never to the caller.
        if (result.ok === false) expect(result.message).not.toContain(c.raw);
        expect(logs.some((l) => String(l.details.body).includes(c.raw ?? ''))).toBe(true);
      }
      expect(fake.statuses).toHaveLength(0);
    });
  }
});
