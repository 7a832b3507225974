import type { Confirmation, NetworkAdapter, NetworkFailure, NotReady, PublishRequest, Published, Submitted } from '../adapter.js';
import { failure } from '../kit/failure.js';
import { postTexts } from '../kit/post-texts.js';
import { obj, str } from '../kit/json.js';
import type { NetworkDeps, NetworkSettings } from '../network-deps.js';
import { call, parseAccountId } from './api.js';
import { type Ctx, LEASE_LOST, progressOf, save } from './context.js';
import { checkAgainstLimits, createLimitsCache } from './instance.js';
import { mediaReady, PROCESSING_RETRY_MS, uploadAll } from './media.js';
import { findEarlier, IDEMPOTENCY_TRUST_MS, idempotencyKey, postStatus, type StatusDraft, statusUrl } from './statuses.js';

/** Container id of a post without media (Mastodon has no container; the attachment ids stand in for one). */
const TEXT_ONLY = 'text';

const NO_CREDENTIALS = failure('upstream_unknown', false, 'This Mastodon connection has no credentials. Reconnect it.');
const UNNAMED = failure('upstream_5xx', true, 'Mastodon accepted the post without naming it; the next attempt asks again under the same key.');
const BAD_ACCOUNT = failure('upstream_unknown', false, 'This Mastodon connection does not name its server correctly. Reconnect it.');

/** A failure after some posts of a chain went live says so: they stay live, the rest was never posted. */
function chainFailure(f: NetworkFailure, k: number, n: number): NetworkFailure {
  if (n <= 1 || k === 0) return f;
  const live = k === 1 ? 'post 1 is live' : `posts 1..${k} are live`;
  return { ...f, partlyLive: true, message: `The chain stopped at post ${k + 1} of ${n}; ${live} on Mastodon. ${f.message}` };
}

/** Whether a failed POST may still have created the status (no answer, or the server failed mid-way). */
const outcomeUnknown = (status: number) => status === 0 || status === 408 || status >= 500;

/**
 * Mastodon, on the server each user named (the account id carries it: `{origin}|{id}`). `submit` checks the
 * server's own limits and uploads the media (nothing public yet); `publish` waits for the media to be processed,
 * then posts the status — or, for a chain, each post as a reply to the previous one — saving progress before and
 * after every post, each sent with an Idempotency-Key so a repeated POST returns the status already made;
 * `confirm` reads the status. `settings` are unused: there is no installation-wide server or client.
 */
export function createMastodonAdapter(_settings: NetworkSettings, deps: NetworkDeps): NetworkAdapter {
  const limitsOf = createLimitsCache(deps);

  function context(req: PublishRequest): Ctx | NetworkFailure {
    if (!req.credentials) return NO_CREDENTIALS;
    const who = parseAccountId(req.credentials.accountId);
    if (!who) return BAD_ACCOUNT;
    return { deps, origin: who.origin, account: who.id, token: req.credentials.accessToken, req, state: progressOf(req.progress) };
  }

  /** Post `k` of the chain from the saved progress: looked up, repeated under its key, or sent for the first time. */
  async function postNext(ctx: Ctx, draft: StatusDraft): Promise<{ ok: true } | NotReady | NetworkFailure> {
    const k = ctx.state.index;
    const earlier = ctx.state.sending;
    let attemptedAt = earlier?.at ?? ctx.deps.now();
    if (earlier && ctx.deps.now() - earlier.at >= IDEMPOTENCY_TRUST_MS) {
      // The server may have forgotten the key: find the status rather than risk a second one.
      const seen = await findEarlier(ctx, draft, earlier.at);
      if (seen.state === 'failed') return seen.failure;
      if (seen.state === 'found') return advance(ctx, seen.id, seen.url);
      attemptedAt = ctx.deps.now();
    }
    // Recorded before the POST: if its answer is lost, the next run repeats it under the same key.
    if (!(await save(ctx, { sending: { index: k, at: attemptedAt } }))) return LEASE_LOST;
    const res = await postStatus(ctx, draft, idempotencyKey(ctx.req.jobId, k));
    if (res.ok) {
      const id = str(obj(res.body).id);
      if (!id) {
        // Created but unnamed: the marker stays, and the next run's repeated key names it.
        ctx.deps.log('mastodon: unexpected answer', { call: 'POST /api/v1/statuses without id' });
        return UNNAMED;
      }
      return advance(ctx, id, statusUrl(res.body));
    }
    if (outcomeUnknown(res.status)) return res.failure;
    // A refusal created nothing. The marker goes only if no earlier attempt is unaccounted for: a throttled
    // repeat (429) says nothing about the first POST.
    if (!earlier && !(await save(ctx, { sending: null }))) return LEASE_LOST;
    if (/not finished processing/i.test(res.info.error)) return { ok: 'pending', retryAfterMs: PROCESSING_RETRY_MS };
    return res.failure;
  }

  async function advance(ctx: Ctx, id: string, url: string | null): Promise<{ ok: true } | NetworkFailure> {
    const s = ctx.state;
    const saved = await save(ctx, { index: s.index + 1, ids: [...s.ids, id], firstUrl: s.index === 0 ? url : s.firstUrl, sending: null });
    return saved ? { ok: true } : LEASE_LOST;
  }

  return {
    async submit(req): Promise<Submitted> {
      const ctx = context(req);
      if ('ok' in ctx) return ctx;
      const limits = await limitsOf(ctx.origin, ctx.token);
      if (limits) {
        const refused = checkAgainstLimits(limits, postTexts(req), req.media, req.contentType);
        if (refused) return refused;
      }
      if (req.media.length === 0) return { ok: true, containerId: TEXT_ONLY };
      const up = await uploadAll(ctx, req.media, req.contentType, limits);
      return up.ok ? { ok: true, containerId: up.ids.join(',') } : up;
    },

    async publish(req, containerId): Promise<Published> {
      const ctx = context(req);
      if ('ok' in ctx) return ctx;
      const texts = postTexts(req);
      const n = texts.length;
      const mediaIds = containerId === TEXT_ONLY ? [] : containerId.split(',');
      if (ctx.state.index === 0 && mediaIds.length > 0) {
        const waiting = await mediaReady(ctx, mediaIds);
        if (waiting) return waiting;
      }
      while (ctx.state.index < n) {
        const k = ctx.state.index;
        const draft: StatusDraft = { text: texts[k] ?? '', mediaIds: k === 0 ? mediaIds : [], replyTo: k === 0 ? null : (ctx.state.ids[k - 1] ?? null) };
        const step = await postNext(ctx, draft);
        if (step.ok === 'pending') return step;
        if (step.ok === false) return chainFailure(step, k, n);
      }
      const first = ctx.state.ids[0];
      if (first === undefined) return failure('upstream_unknown');
      // The chain's address is its first post's page.
      return ctx.state.firstUrl ? { ok: true, postId: first, url: ctx.state.firstUrl } : { ok: true, postId: first };
    },

    async confirm(req, postId): Promise<Confirmation> {
      const ctx = context(req);
      if ('ok' in ctx) return { state: 'unavailable' };
      const res = await call(deps, { origin: ctx.origin, method: 'GET', path: `/api/v1/statuses/${encodeURIComponent(postId)}`, token: ctx.token });
      if (!res.ok) return res.status === 404 ? { state: 'not_found' } : { state: 'unavailable' };
      const url = statusUrl(res.body);
      return url ? { state: 'found', url } : { state: 'pending' };
    },
  };
}
