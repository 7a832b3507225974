import type { Confirmation, NetworkAdapter, NetworkFailure, NotReady, PublishRequest, Published, Submitted } from '../adapter.js';
import { failure } from '../kit/failure.js';
import { postTexts } from '../kit/post-texts.js';
import type { Json } from '../kit/json.js';
import type { NetworkDeps, NetworkSettings } from '../network-deps.js';
import { mediaKindOf, PLATFORMS } from '../../vocabulary/platforms.js';
import { measureText } from '../../vocabulary/text-length.js';
import { parseAccountId } from './account.js';
import { processedVideo, uploadImages, uploadVideo } from './media.js';
import { recordKey } from './record-key.js';
import {
  type BlobRef,
  type Container,
  createPost,
  type Ctx,
  decodeContainer,
  encodeContainer,
  getPost,
  parseAtUri,
  type PostRef,
  postUrl,
  readProgress,
  resolveHandles,
  save,
} from './repo.js';
import { facetsOf, findSpans } from './rich-text.js';
import { unexpected } from './xrpc.js';

/** Bluesky's video service (docs.bsky.app "Uploading Video"); configurable so tests run against a fake. */
export const DEFAULT_VIDEO_SERVICE = 'https://video.bsky.app';

export interface BlueskyOptions {
  /** The video service's origin; https://video.bsky.app unless told. */
  videoServiceUrl?: string;
}

const LIMITS = PLATFORMS.bluesky.limits;
/** app.bsky.feed.post's `text`: at most 300 graphemes and 3,000 bytes. */
const TEXT_MAX_BYTES = 3000;
/** A run that lost its job's lease stops; the job's new owner carries on from the saved progress. */
const LEASE_LOST: NotReady = { ok: 'pending', retryAfterMs: 30_000 };
const NO_CREDENTIALS = failure('upstream_unknown', false, 'This Bluesky connection has no credentials. Reconnect it.');
const NO_ACCOUNT = failure('token_expired', false, 'This Bluesky connection does not name its data server. Sign in again with an app password.');
const KEY_TAKEN = failure('upstream_unknown', false, "Another Bluesky post already uses this job's record key, so nothing was posted. Publish it again.");

/** The limits the post record enforces, checked before anything is uploaded or posted (spec 8). */
function overLimit(texts: string[]): NetworkFailure | null {
  if (LIMITS.threadMaxPosts !== null && texts.length > LIMITS.threadMaxPosts) {
    return failure('upstream_unknown', false, `A Bluesky chain is limited to ${LIMITS.threadMaxPosts} posts here.`);
  }
  const k = texts.findIndex((t) => measureText('graphemes', t) > LIMITS.textMaxChars || Buffer.byteLength(t, 'utf8') > TEXT_MAX_BYTES);
  if (k < 0) return null;
  const which = texts.length > 1 ? `Post ${k + 1} is` : 'The text is';
  return failure('upstream_unknown', false, `${which} over Bluesky's limit of ${LIMITS.textMaxChars} characters (graphemes) per post.`);
}

/** A failure after some posts of a chain went live says so: they stay live, the rest was never posted. */
function chainFailure(f: NetworkFailure, k: number, n: number): NetworkFailure {
  if (n <= 1 || k === 0) return f;
  const live = k === 1 ? 'post 1 is live' : `posts 1..${k} are live`;
  return { ...f, partlyLive: true, message: `The chain stopped at post ${k + 1} of ${n}; ${live} on Bluesky. ${f.message}` };
}

/**
 * The embed of a chain's first post (lexicons app.bsky.embed.images / app.bsky.embed.video). The images lexicon
 * requires `alt` on every image, as a string with no minimum length: an image without a description carries
 * `alt: ""`, which the PDS accepts, where leaving the property out would fail record validation.
 */
function embedOf(images: BlobRef[] | null, video: BlobRef | null): Json | null {
  if (images) return { $type: 'app.bsky.embed.images', images: images.map((image) => ({ image, alt: '' })) };
  if (video) return { $type: 'app.bsky.embed.video', video };
  return null;
}

/**
 * Bluesky (AT Protocol). `submit` uploads the media (image blobs to the account's PDS, or a video to the video
 * service) — nothing public yet; `publish` waits for the video to be processed, then creates the post(s) with
 * com.atproto.repo.createRecord, each at a record key computed from the job (record-key.ts) so no run can make a
 * post twice; a chain's posts reply to the first and the previous one, and progress is saved before and after
 * each. `confirm` reads the post back with com.atproto.repo.getRecord.
 */
export function createBlueskyAdapter(settings: NetworkSettings, deps: NetworkDeps, options: BlueskyOptions = {}): NetworkAdapter {
  const videoService = (options.videoServiceUrl ?? DEFAULT_VIDEO_SERVICE).replace(/\/+$/, '');

  function context(req: PublishRequest): Ctx | NetworkFailure {
    if (!req.credentials) return NO_CREDENTIALS;
    const account = parseAccountId(req.credentials.accountId);
    if (!account) return NO_ACCOUNT;
    return { deps, account, token: req.credentials.accessToken, videoService, req, state: readProgress(req.progress) };
  }

  /** Builds post `k`'s record: its facets (mentions resolved now), the media on the first post, the reply refs. */
  async function recordOf(ctx: Ctx, text: string, k: number, embed: Json | null): Promise<Json> {
    const spans = findSpans(text);
    const dids = await resolveHandles(
      ctx,
      spans.filter((s) => s.kind === 'mention').map((s) => s.value),
    );
    const facets = facetsOf(text, spans, dids);
    const [root, parent] = [ctx.state.posts[0], ctx.state.posts[k - 1]];
    return {
      $type: 'app.bsky.feed.post',
      text,
      createdAt: new Date(deps.now()).toISOString(),
      ...(facets.length > 0 ? { facets } : {}),
      ...(k === 0 && embed ? { embed } : {}),
      ...(k > 0 && root && parent ? { reply: { root, parent } } : {}),
    };
  }

  /** The video's processed blob: saved, from the container, or asked of the video service. */
  async function videoBlob(ctx: Ctx, container: Extract<Container, { kind: 'video' }>): Promise<{ ok: true; blob: BlobRef } | NotReady | NetworkFailure> {
    const known = ctx.state.videoBlob ?? container.blob;
    if (known) return { ok: true, blob: known };
    if (!container.jobId) return unexpected(deps, 'video container without a job');
    const done = await processedVideo(ctx, container.jobId);
    if (done.ok !== true) return done;
    return (await save(ctx, { videoBlob: done.blob })) ? done : LEASE_LOST;
  }

  return {
    async submit(req): Promise<Submitted> {
      const ctx = context(req);
      if ('ok' in ctx) return ctx;
      const refused = overLimit(postTexts(req));
      if (refused) return refused;
      const kind = mediaKindOf(req.contentType);
      if (kind === null || req.media.length === 0) return { ok: true, containerId: encodeContainer({ kind: 'text' }) };
      if (kind === 'photo') {
        const up = await uploadImages(ctx, req.media);
        return up.ok ? { ok: true, containerId: encodeContainer({ kind: 'images', blobs: up.blobs }) } : up;
      }
      const [first] = req.media;
      if (!first) return { ok: true, containerId: encodeContainer({ kind: 'text' }) };
      const job = await uploadVideo(ctx, first);
      return job.ok ? { ok: true, containerId: encodeContainer({ kind: 'video', jobId: job.jobId, blob: job.blob }) } : job;
    },

    async publish(req, containerId): Promise<Published> {
      const ctx = context(req);
      if ('ok' in ctx) return ctx;
      const container = decodeContainer(containerId);
      if (!container) return unexpected(deps, 'unreadable container id');
      const texts = postTexts(req);
      const n = texts.length;

      // The first post's media, needed only while it is not live.
      let images = container.kind === 'images' ? container.blobs : null;
      let video: BlobRef | null = null;
      if (ctx.state.posts.length === 0 && container.kind === 'video') {
        const ready = await videoBlob(ctx, container);
        if (ready.ok !== true) return ready;
        video = ready.blob;
      }
      let reuploaded = false;

      while (ctx.state.posts.length < n) {
        const k = ctx.state.posts.length;
        const text = texts[k] ?? '';
        const rkey = recordKey(req.jobId, k);
        const stop = (f: NetworkFailure) => chainFailure(f, k, n);
        const advance = async (ref: PostRef) => save(ctx, { posts: [...ctx.state.posts, ref], sending: null });

        // An earlier run sent this post and may not have heard back: look it up before sending anything.
        if (ctx.state.sending === k) {
          const seen = await getPost(deps, ctx.account, rkey);
          if (seen.state === 'failed') return stop(seen.failure);
          if (seen.state === 'found') {
            if (seen.text !== text) return stop(KEY_TAKEN);
            if (!(await advance(seen.ref))) return LEASE_LOST;
            continue;
          }
        }

        const record = await recordOf(ctx, text, k, embedOf(images, video));
        // Saved before the one step whose outcome can be unknown (the answer may be lost).
        if (!(await save(ctx, { sending: k }))) return LEASE_LOST;
        const res = await createPost(ctx, rkey, record);
        if (res.ok) {
          const uri = typeof res.data.uri === 'string' ? res.data.uri : null;
          const cid = typeof res.data.cid === 'string' ? res.data.cid : null;
          if (!uri || !cid) return stop(unexpected(deps, 'createRecord without uri or cid'));
          // Even if this save fails (lease lost), the record key lets the next run find the post.
          if (!(await advance({ uri, cid }))) return LEASE_LOST;
          continue;
        }
        // The create may have landed (a lost answer), or been refused because the key is already taken: the
        // record at our key, if there is one, is the post.
        const seen = await getPost(deps, ctx.account, rkey);
        if (seen.state === 'found') {
          if (seen.text !== text) return stop(KEY_TAKEN);
          if (!(await advance(seen.ref))) return LEASE_LOST;
          continue;
        }
        // Unreferenced blobs are deleted after a while: upload the images again (same bytes, same blobs) once.
        if (res.info.error === 'BlobNotFound' && k === 0 && images && !reuploaded) {
          reuploaded = true;
          const again = await uploadImages(ctx, req.media);
          if (!again.ok) return again;
          images = again.blobs;
          continue;
        }
        return stop(res.failure);
      }

      const root = ctx.state.posts[0];
      const at = root ? parseAtUri(root.uri) : null;
      if (!root || !at) return unexpected(deps, 'chain without a readable first post');
      return { ok: true, postId: root.uri, url: postUrl(at.did, at.rkey) };
    },

    async confirm(req, postId): Promise<Confirmation> {
      const ctx = context(req);
      const at = parseAtUri(postId);
      if ('ok' in ctx || !at) return { state: 'unavailable' };
      const seen = await getPost(deps, { pds: ctx.account.pds, did: at.did }, at.rkey);
      if (seen.state === 'found') return { state: 'found', url: postUrl(at.did, at.rkey) };
      return seen.state === 'absent' ? { state: 'not_found' } : { state: 'unavailable' };
    },
  };
}
