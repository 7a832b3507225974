import type { Confirmation, NetworkAdapter, NetworkFailure, NotReady, PublishRequest, Published, Submitted } from '../adapter.js';
import { failure } from '../kit/failure.js';
import { postTexts } from '../kit/post-texts.js';
import { list, obj, str } from '../kit/json.js';
import type { NetworkDeps, NetworkSettings } from '../network-deps.js';
import { mediaKindOf, PLATFORMS, textLengthOn } from '../../vocabulary/platforms.js';
import { api, type Ctx, LEASE_LOST, progressOf, save } from './api.js';
import { isDuplicate } from './errors.js';
import { findEarlierPost, type Wanted } from './lookup.js';
import { mediaReady, uploadImage, uploadVideo } from './media.js';

/** Container id of a post without media (X has no container: publish posts directly). */
const TEXT_ONLY = 'text';
/** `media.media_ids` takes 1 to 4 ids; a post carries up to 4 photos or 1 video (media best practices). */
const MAX_IMAGES = 4;
/** How long after an unanswered POST the timeline may still not list the post. */
const LOOKUP_SETTLE_MS = 30_000;
/** Duplicate refusals (X says it is posted) without finding the post, before giving up on it. */
const MAX_LOOKUPS = 5;
const enc = encodeURIComponent;

const NO_CREDENTIALS = failure('upstream_unknown', false, 'This X connection has no credentials. Reconnect it.');
const later = (retryAfterMs: number): NotReady => ({ ok: 'pending', retryAfterMs });
const postUrl = (id: string): string => `${PLATFORMS.x.postUrlBase}${id}`;

/** X's limits (platform row, spec 8), checked before anything is sent: a refusal costs no upload and no post. */
function outsideLimits(req: PublishRequest): NetworkFailure | null {
  const { limits } = PLATFORMS.x;
  const texts = postTexts(req);
  const kind = mediaKindOf(req.contentType);
  const refuse = (message: string) => failure('upstream_unknown', false, message);
  if (texts.length === 0) return refuse('A thread needs at least one post.');
  if (limits.threadMaxPosts !== null && texts.length > limits.threadMaxPosts) return refuse(`X threads here hold at most ${limits.threadMaxPosts} posts.`);
  const long = texts.findIndex((t) => textLengthOn('x', t) > limits.textMaxChars);
  if (long >= 0) return refuse(`Post ${long + 1} is over X's ${limits.textMaxChars}-character limit (links count 23, most non-Latin characters and emojis count 2).`);
  if (kind === 'photo' && req.media.length > MAX_IMAGES) return refuse(`An X post carries at most ${MAX_IMAGES} photos.`);
  if (kind === 'video' && req.media.length > 1) return refuse('An X post carries one video.');
  if ((kind === null || req.media.length === 0) && texts.some((t) => t.trim() === '')) return refuse('An X post needs text or media.');
  return null;
}

/** A failure after some posts of a chain went live says so: they stay live, the rest was never posted. */
function chainFailure(f: NetworkFailure, k: number, n: number): NetworkFailure {
  if (n <= 1 || k === 0) return f;
  const live = k === 1 ? 'post 1 is live' : `posts 1..${k} are live`;
  return { ...f, partlyLive: true, message: `The chain stopped at post ${k + 1} of ${n}; ${live} on X. ${f.message}` };
}

/** Post k is live as `id`: the chain moves on (what the next post replies to is saved with it). */
function advance(ctx: Ctx, id: string): Promise<boolean> {
  const ids = [...ctx.state.ids, id];
  return save(ctx, { index: ids.length, ids, lastTweetId: id, attempt: null });
}

/**
 * Publishes post k of the chain, never twice: the attempt is recorded before POST /2/tweets; a run that finds it
 * recorded (the answer was lost) looks the post up first, and posts again only once the timeline has had time
 * to list it. X's own duplicate refusal is the second net: after an unknown outcome it means "maybe already
 * posted", so the post is looked up again rather than reported as failed. Null when the post is live.
 */
async function publishPost(ctx: Ctx, k: number, wanted: Wanted): Promise<Published | null> {
  const { deps } = ctx;
  const earlier = ctx.state.attempt?.index === k ? ctx.state.attempt : null;
  if (earlier) {
    const seen = await findEarlierPost(ctx, wanted, earlier.startedAt);
    if (seen.state === 'failed') return seen.failure;
    if (seen.state === 'found') return (await advance(ctx, seen.id)) ? null : LEASE_LOST;
    const waited = deps.now() - earlier.startedAt;
    if (waited < LOOKUP_SETTLE_MS) return later(Math.max(5_000, LOOKUP_SETTLE_MS - waited));
  }

  const body = {
    text: wanted.text,
    ...(wanted.mediaIds.length > 0 ? { media: { media_ids: wanted.mediaIds } } : {}),
    ...(wanted.replyTo ? { reply: { in_reply_to_tweet_id: wanted.replyTo } } : {}),
  };
  // The first attempt's instant is kept, so every later lookup covers it.
  const attempt = { index: k, startedAt: earlier?.startedAt ?? deps.now(), lookups: earlier?.lookups ?? 0 };
  if (!(await save(ctx, { attempt }))) return LEASE_LOST;
  const res = await api(ctx, 'POST', '/2/tweets', { json: body });
  if (res.ok) {
    const id = str(obj(res.body.data).id);
    if (!id) {
      // Created but unnamed: keep the marker and retry, so the next run finds the post by lookup.
      deps.log('x: unexpected answer', { call: 'POST /2/tweets without data.id' });
      return failure('upstream_5xx', true, 'X accepted the post without naming it; it is looked up on the next attempt.');
    }
    // Even if this save fails (lease lost), the attempt marker lets the next run find the post.
    return (await advance(ctx, id)) ? null : LEASE_LOST;
  }
  if (isDuplicate(res.info)) {
    // Never sent before by this job: the same text was published by someone else's hand, not ours.
    if (!earlier) return (await save(ctx, { attempt: null })) ? res.failure : LEASE_LOST;
    const seen = await findEarlierPost(ctx, wanted, earlier.startedAt);
    if (seen.state === 'failed') return seen.failure;
    if (seen.state === 'found') return (await advance(ctx, seen.id)) ? null : LEASE_LOST;
    if (attempt.lookups + 1 >= MAX_LOOKUPS) {
      return failure('upstream_unknown', false, 'X reports this post as already published, but it could not be found. It may be live: check the profile before republishing.');
    }
    return (await save(ctx, { attempt: { ...attempt, lookups: attempt.lookups + 1 } })) ? later(LOOKUP_SETTLE_MS) : LEASE_LOST;
  }
  // No answer, a timeout or a 5xx leave the outcome unknown: the marker stays and the next run looks first.
  if (res.status === null || res.status >= 500 || res.status === 408) return res.failure;
  // Any other refusal created nothing: the next attempt may post without looking up.
  return (await save(ctx, { attempt: null })) ? res.failure : LEASE_LOST;
}

/**
 * X (API v2). `submit` checks the limits and uploads the media (photos whole, a video in segments) — nothing
 * public yet — and returns their ids as the container id; `publish` waits for the media to be processed, then
 * posts the chain post after post (each replying to the previous one), saving the chain index and the last post
 * id after each; `confirm` reads the first post back with GET /2/tweets/{id}.
 */
export function createXAdapter(settings: NetworkSettings, deps: NetworkDeps): NetworkAdapter {
  function context(req: PublishRequest): Ctx | NetworkFailure {
    if (!req.credentials) return NO_CREDENTIALS;
    return { deps, base: settings.apiBaseUrl.replace(/\/+$/, ''), token: req.credentials.accessToken, userId: req.credentials.accountId, req, state: progressOf(req.progress) };
  }

  return {
    async submit(req): Promise<Submitted> {
      const ctx = context(req);
      if ('ok' in ctx) return ctx;
      const refused = outsideLimits(req);
      if (refused) return refused;
      const kind = mediaKindOf(req.contentType);
      if (kind === null || req.media.length === 0) return { ok: true, containerId: TEXT_ONLY };
      const ids: string[] = [];
      for (const [i, item] of req.media.entries()) {
        const up = kind === 'video' ? await uploadVideo(ctx, i, item) : await uploadImage(ctx, i, item);
        if (!up.ok) return up;
        ids.push(up.id);
      }
      return { ok: true, containerId: ids.join(',') };
    },

    async publish(req, containerId): Promise<Published> {
      const ctx = context(req);
      if ('ok' in ctx) return ctx;
      const refused = outsideLimits(req);
      if (refused) return refused;
      const texts = postTexts(req);
      const n = texts.length;
      const mediaIds = containerId === TEXT_ONLY ? [] : containerId.split(',').filter((id) => id !== '');
      if (ctx.state.index === 0) {
        const notReady = await mediaReady(ctx);
        if (notReady) return notReady;
      }
      while (ctx.state.index < n) {
        const k = ctx.state.index;
        const wanted: Wanted = { text: texts[k] ?? '', replyTo: k === 0 ? null : ctx.state.lastTweetId, mediaIds: k === 0 ? mediaIds : [] };
        const result = await publishPost(ctx, k, wanted);
        if (result === null) continue;
        return result.ok === false ? chainFailure(result, k, n) : result;
      }
      const first = ctx.state.ids[0];
      if (first === undefined) return failure('upstream_unknown');
      return { ok: true, postId: first, url: postUrl(first) };
    },

    async confirm(req, postId): Promise<Confirmation> {
      const ctx = context(req);
      if ('ok' in ctx) return { state: 'unavailable' };
      const res = await api(ctx, 'GET', `/2/tweets/${enc(postId)}`);
      if (!res.ok) return res.status === 404 ? { state: 'not_found' } : { state: 'unavailable' };
      if (str(obj(res.body.data).id) === postId) return { state: 'found', url: postUrl(postId) };
      // A missing post answers 200 with a `resource-not-found` problem in `errors` (partial errors, docs.x.com).
      const gone = list(res.body.errors).some((e) => /\/resource-not-found$/.test(str(obj(e).type) ?? ''));
      return gone ? { state: 'not_found' } : { state: 'unavailable' };
    },
  };
}
