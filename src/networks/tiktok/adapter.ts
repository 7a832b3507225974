import { mediaKindOf, PLATFORMS } from '../../vocabulary/platforms.js';
import type { Confirmation, NetworkAdapter, NetworkFailure, NotReady, PublishRequest, Published, Submitted } from '../adapter.js';
import { classify, failure } from '../kit/failure.js';
import type { NetworkDeps, NetworkSettings } from '../network-deps.js';
import { type Ctx, progressOf, save, unexpected } from './api.js';
import { failReasonInfo, LEASE_LOST, TIKTOK_ERROR_TABLE } from './errors.js';
import { ensureStarted, type PostPlan } from './init.js';
import { fetchStatus, type StatusView } from './status.js';
import { MAX_CHUNK_BYTES, MIN_CHUNK_BYTES, sendChunks } from './upload.js';

/** How the adapter publishes; the defaults suit an installation whose TikTok app is not audited yet. */
export interface TiktokAdapterOptions {
  /**
   * `direct` (default) posts to the profile (Direct Post, scope video.publish); `inbox` sends the video or photos
   * to the creator's TikTok inbox, where they finish and post it in the app (Upload, scope video.upload).
   */
  mode?: 'direct' | 'inbox';
  /**
   * The TikTok app passed TikTok's audit. Until then TikTok restricts everything the app posts to private viewing
   * and accepts posts to private accounts only, so posts ask for SELF_ONLY (default false).
   */
  audited?: boolean;
  /** Let TikTok download videos that have an https address (PULL_FROM_URL; the domain must be verified). Default false. */
  pullVideosFromUrl?: boolean;
  /** FILE_UPLOAD chunk size, 5 to 64 MB. Default 10 MB. */
  chunkSizeBytes?: number;
  /** Time one `publish` call may spend uploading before it answers pending, so an upload never outlives the lease. */
  publishBudgetMs?: number;
}

/** Status checks within one publish call while TikTok processes, and the pause between them (30 checks a minute allowed). */
const POLLS_PER_CALL = 3;
const POLL_GAP_MS = 1_000;
const PROCESSING_RETRY_MS = 10_000;
/** Fresh publications after TikTok dropped one (expired upload URL, failed pull) before giving up. */
const MAX_RESTARTS = 2;

const later = (retryAfterMs: number): NotReady => ({ ok: 'pending', retryAfterMs });
const NO_CREDENTIALS = failure('upstream_unknown', false, 'This TikTok connection has no credentials. Reconnect it.');

/** The handle for URLs: the one creator_info gave, else the connection's name when it reads as a handle. */
function handleOf(req: PublishRequest, username: string | null): string {
  if (username) return username;
  const name = req.connection.name.replace(/^@/, '');
  return /^[\w.]+$/.test(name) ? name : '';
}
// TikTok documents no permalink field; this is the form its share links take (the handle redirects if renamed).
const videoUrl = (handle: string, id: string) => `${PLATFORMS.tiktok.postUrlBase}${handle}/video/${id}`;
const profileUrl = (handle: string) => `${PLATFORMS.tiktok.postUrlBase}${handle}`;

/**
 * TikTok (Content Posting API v2, open.tiktokapis.com). `submit` reads the creator's options and starts the
 * publication (init → publish_id, nothing public yet for a file upload); `publish` sends the file in chunks, then
 * polls the status until TikTok has posted it (or, in inbox mode, handed it to the creator); `confirm` reads the
 * status again. Progress is saved before every step whose outcome could be lost, so nothing is posted twice.
 */
export function createTiktokAdapter(settings: NetworkSettings, deps: NetworkDeps, options: TiktokAdapterOptions = {}): NetworkAdapter {
  const chunkSizeBytes = options.chunkSizeBytes ?? 10 * 1024 * 1024;
  if (chunkSizeBytes < MIN_CHUNK_BYTES || chunkSizeBytes > MAX_CHUNK_BYTES) throw new Error('tiktok: chunkSizeBytes must be 5 to 64 MB');
  const budgetMs = options.publishBudgetMs ?? 20_000;
  const base = settings.apiBaseUrl.replace(/\/+$/, '');

  function context(req: PublishRequest): Ctx | NetworkFailure {
    if (!req.credentials) return NO_CREDENTIALS;
    return { deps, base, token: req.credentials.accessToken, req, state: progressOf(req.progress) };
  }
  function planOf(req: PublishRequest): PostPlan | NetworkFailure {
    const kind = mediaKindOf(req.contentType);
    if (kind === null || req.media.length === 0) return failure('upstream_unknown', false, 'A TikTok post needs a video or photos.');
    return { kind, mode: options.mode ?? 'direct', audited: options.audited ?? false, pullVideos: options.pullVideosFromUrl ?? false, chunkSizeBytes };
  }

  /** A publication TikTok gave up on is final: nothing of it is public, so a fresh one may start. */
  async function restart(ctx: Ctx, why: NetworkFailure): Promise<NetworkFailure | null> {
    if (ctx.state.restarts >= MAX_RESTARTS) return why;
    deps.log('tiktok: starting the publication again', { restarts: ctx.state.restarts + 1 });
    const fresh = { initStartedAt: null, publishId: null, uploadUrl: null, upload: null, restarts: ctx.state.restarts + 1 };
    return (await save(ctx, fresh)) ? null : LEASE_LOST;
  }

  /** What a status means for `publish`: done, still processing, or failed (restarting a failure TikTok says to retry). */
  async function outcome(ctx: Ctx, publishId: string, view: StatusView): Promise<Published | 'processing'> {
    const handle = handleOf(ctx.req, ctx.state.username);
    switch (view.status) {
      case 'PROCESSING_UPLOAD':
      case 'PROCESSING_DOWNLOAD':
        return 'processing';
      case 'SEND_TO_USER_INBOX':
        // Inbox mode: handed to the creator, who posts it in the app; confirm() waits for PUBLISH_COMPLETE.
        return { ok: true, postId: publishId };
      case 'PUBLISH_COMPLETE':
        // The video id comes only for public posts, after moderation (which may take hours): confirm() reads it then.
        return view.postId ? { ok: true, postId: view.postId, url: videoUrl(handle, view.postId) } : { ok: true, postId: publishId };
      case 'FAILED': {
        const sorted = classify(TIKTOK_ERROR_TABLE, failReasonInfo(view.failReason));
        deps.log('tiktok: publication failed', { row: sorted.row, fail_reason: view.failReason });
        if (!sorted.failure.retryable) return sorted.failure;
        return (await restart(ctx, { ...sorted.failure, retryable: false })) ?? sorted.failure;
      }
      default:
        return unexpected(deps, 'status/fetch with an unknown status');
    }
  }

  return {
    async submit(req): Promise<Submitted> {
      const ctx = context(req);
      if ('ok' in ctx) return ctx;
      const plan = planOf(req);
      if ('ok' in plan) return plan;
      const started = await ensureStarted(ctx, plan);
      return started.ok ? { ok: true, containerId: started.publishId } : started;
    },

    async publish(req, containerId): Promise<Published> {
      const ctx = context(req);
      if ('ok' in ctx) return ctx;
      // submit() saves progress before it names a container, so none at all means it was lost elsewhere: follow
      // the container by its status rather than start another publication.
      if (req.progress === null) ctx.state = { ...ctx.state, publishId: containerId };
      const plan = planOf(req);
      if ('ok' in plan) return plan;
      const deadline = deps.now() + budgetMs;
      // The saved progress names the publication (a restart replaces the one the worker recorded at submit).
      for (let step = 0; step <= MAX_RESTARTS + 1; step++) {
        const started = await ensureStarted(ctx, plan);
        if (!started.ok) return started;
        if (ctx.state.source === 'FILE_UPLOAD') {
          const media = req.media[0];
          const sent = await sendChunks(ctx, deadline, media?.contentType ?? null, media?.url ?? '');
          if (sent.state === 'later') return later(1_000);
          if (sent.state === 'failed') return sent.failure;
          if (sent.state === 'gone') {
            const stop = await restart(ctx, failure('upstream_unknown', false, 'TikTok kept closing the upload before it finished.'));
            if (stop) return stop;
            continue;
          }
        }
        for (let poll = 1; ; poll++) {
          const seen = await fetchStatus(ctx, started.publishId);
          if (!seen.ok) return seen.failure;
          const result = await outcome(ctx, started.publishId, seen.view);
          if (result !== 'processing') return result;
          if (poll >= POLLS_PER_CALL) return later(PROCESSING_RETRY_MS);
          await deps.sleep(POLL_GAP_MS);
        }
      }
      return failure('upstream_unknown');
    },

    /**
     * Reads the publication's status again. The docs do not say what it reads once a post is deleted (they offer
     * the post.publish.no_longer_publicaly_available webhook, not a lookup by post id, which needs video.list), so
     * `not_found` means only that TikTok failed the publication or does not know the publish_id.
     */
    async confirm(req, postId): Promise<Confirmation> {
      const ctx = context(req);
      if ('ok' in ctx) return { state: 'unavailable' };
      const publishId = ctx.state.publishId ?? (/^\d+$/.test(postId) ? null : postId);
      if (!publishId) return { state: 'unavailable' };
      const seen = await fetchStatus(ctx, publishId);
      if (!seen.ok) return seen.info.code === 'invalid_publish_id' ? { state: 'not_found' } : { state: 'unavailable' };
      const handle = handleOf(req, ctx.state.username);
      const { status, postId: videoId } = seen.view;
      if (status === 'FAILED') return { state: 'not_found' };
      if (status !== 'PUBLISH_COMPLETE') return status === null ? { state: 'unavailable' } : { state: 'pending' };
      if (videoId) return { state: 'found', url: videoUrl(handle, videoId) };
      // A public direct post gets its id after moderation; a private one (or one the creator posted from the
      // inbox with their own choice) never does: it is on the creator's profile.
      return ctx.state.privacy === 'PUBLIC_TO_EVERYONE' ? { state: 'pending' } : { state: 'found', url: profileUrl(handle) };
    },
  };
}
