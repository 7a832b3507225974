import type { Confirmation, NetworkAdapter, NetworkFailure, PublishRequest, Published, Submitted } from '../adapter.js';
import { failure } from '../kit/failure.js';
import { type Json, str } from '../kit/json.js';
import type { NetworkDeps, NetworkSettings } from '../network-deps.js';
import { classifyContainerError } from './errors.js';
import { instagramGraph } from './graph.js';

/** Instagram API with Instagram Login (graph.instagram.com): content publishing in three steps. */

/** Short in-call polls of a container before handing back `pending` (the worker asks again later). */
const QUICK_POLLS = 3;
const QUICK_POLL_MS = 2_000;
/** After a media_publish with no answer, give that call this long to land before sending another one. */
const SETTLE_MS = 30_000;
/** Listing lookups that may miss (the listing can lag) before we give up naming the published post. */
const MAX_LOOKUP_MISSES = 5;
/** Clock skew allowed between our clock and Instagram's media timestamps. */
const SKEW_MS = 10 * 60_000;

type Shape = { kind: 'image'; url: string } | { kind: 'reel'; url: string } | { kind: 'carousel'; urls: string[] };

const normalizeCaption = (s: string | null | undefined) => (s ?? '').replace(/\r\n/g, '\n').trim();

/** What a content becomes on Instagram; a failure when Instagram cannot carry it. */
function shapeOf(req: PublishRequest): Shape | NetworkFailure {
  // Instagram downloads each file itself: an upload goes by its signed public address.
  const urls = req.media.map((m) => m.publicUrl ?? m.url);
  if (urls.length === 0 || urls.some((u) => !/^https?:\/\//i.test(u))) {
    return failure('upstream_unknown', false, 'Instagram fetches media from a public http(s) address, and this media has none.');
  }
  if (req.contentType === 'photo') return urls.length === 1 ? { kind: 'image', url: urls[0]! } : { kind: 'carousel', urls: urls.slice(0, 10) };
  if (req.contentType === 'video' || req.contentType === 'reel') {
    // Videos are published as reels (Meta, July 2023); a reel holds exactly one video.
    return urls.length === 1 ? { kind: 'reel', url: urls[0]! } : failure('media_unsupported_format', false, 'An Instagram reel holds exactly one video. Send a single video.');
  }
  return failure('media_unsupported_format', false, 'Instagram publishes photos, carousels and reels only.');
}

/** The Graph `media_type` of the published media for each shape (reels list as VIDEO). */
const LISTED_TYPE: Record<Shape['kind'], string> = { image: 'IMAGE', reel: 'VIDEO', carousel: 'CAROUSEL_ALBUM' };

/** This adapter's part of `req.progress`, valid only for the container it was saved for. */
interface Progress {
  publishStartedAt: number | null;
  mediaId: string | null;
  lookupMisses: number;
}

function readProgress(p: Record<string, unknown> | null, containerId: string): Progress {
  if (p?.ig_container_id !== containerId) return { publishStartedAt: null, mediaId: null, lookupMisses: 0 };
  return {
    publishStartedAt: typeof p.ig_publish_started_at === 'number' ? p.ig_publish_started_at : null,
    mediaId: typeof p.ig_media_id === 'string' ? p.ig_media_id : null,
    lookupMisses: typeof p.ig_lookup_misses === 'number' ? p.ig_lookup_misses : 0,
  };
}

/**
 * The Instagram adapter. `submit` reads the publishing quota and creates the container (children first for a
 * carousel); nothing is public. `publish` looks the container up before anything else, records the attempt
 * before `media_publish` and, when an earlier attempt's outcome is unknown, finds the post it made instead of
 * publishing again. `confirm` reads the media's permalink.
 */
export function createInstagramAdapter(settings: NetworkSettings, deps: NetworkDeps): NetworkAdapter {
  const graph = instagramGraph(settings, deps);
  const get = (path: string, token: string, query: Record<string, string> = {}) => graph.call({ method: 'GET', url: graph.url(path, query), token });
  const post = (path: string, token: string, form: Record<string, string>) => graph.call({ method: 'POST', url: graph.url(path), token, form });

  async function createContainer(userId: string, token: string, form: Record<string, string>): Promise<string | NetworkFailure> {
    const r = await post(`${encodeURIComponent(userId)}/media`, token, form);
    if (!r.ok) return r.failure;
    return str(r.data.id) ?? failure('upstream_unknown');
  }

  async function save(req: PublishRequest, containerId: string, p: Progress): Promise<boolean> {
    return req.saveProgress({ ...req.progress, ig_container_id: containerId, ig_publish_started_at: p.publishStartedAt, ig_media_id: p.mediaId, ig_lookup_misses: p.lookupMisses });
  }

  /** The post is live: the permalink is a nicety, never a reason to fail (and risk publishing again). */
  async function done(token: string, mediaId: string, url: string | null = null): Promise<Published> {
    if (url !== null) return { ok: true, postId: mediaId, url };
    const r = await get(encodeURIComponent(mediaId), token, { fields: 'permalink' });
    const permalink = r.ok ? str(r.data.permalink) : null;
    return permalink === null ? { ok: true, postId: mediaId } : { ok: true, postId: mediaId, url: permalink };
  }

  /** Container status with a few short polls; `IN_PROGRESS` after them is left to the worker's next call. */
  async function containerStatus(token: string, containerId: string): Promise<{ code: string; text: string | null } | NetworkFailure> {
    for (let i = 0; ; i++) {
      const r = await get(encodeURIComponent(containerId), token, { fields: 'status_code,status' });
      if (!r.ok) return r.failure;
      const code = str(r.data.status_code) ?? '';
      if (code !== 'IN_PROGRESS' || i + 1 >= QUICK_POLLS) return { code, text: str(r.data.status) };
      await deps.sleep(QUICK_POLL_MS);
    }
  }

  /**
   * The container says PUBLISHED but we hold no media id (the answer to media_publish was lost). Containers do
   * not name their media, so find it in the account's newest media: same caption and type, published no
   * earlier than our recorded attempt; the oldest such one is ours.
   */
  async function recover(req: PublishRequest, userId: string, token: string, containerId: string, p: Progress): Promise<Published> {
    const shape = shapeOf(req);
    if ('ok' in shape) return shape;
    const r = await get(`${encodeURIComponent(userId)}/media`, token, { fields: 'id,caption,media_type,timestamp,permalink', limit: '50' });
    if (!r.ok) return r.failure;
    const items = Array.isArray(r.data.data) ? (r.data.data as Json[]) : [];
    const since = p.publishStartedAt === null ? -Infinity : p.publishStartedAt - SKEW_MS;
    const mine = items
      .map((m) => ({ id: str(m.id), caption: str(m.caption), type: str(m.media_type), at: Date.parse(str(m.timestamp) ?? ''), url: str(m.permalink) }))
      .filter((m) => m.id !== null && m.type === LISTED_TYPE[shape.kind] && normalizeCaption(m.caption) === normalizeCaption(req.text) && !(m.at < since))
      .sort((a, b) => a.at - b.at)[0];
    if (mine && mine.id !== null) {
      await save(req, containerId, { ...p, mediaId: mine.id });
      return done(token, mine.id, mine.url);
    }
    const misses = p.lookupMisses + 1;
    await save(req, containerId, { ...p, lookupMisses: misses });
    deps.log('instagram: published container not found in the media listing', { container: containerId, misses });
    if (misses >= MAX_LOOKUP_MISSES) {
      return failure('confirmacao_esgotada', false, 'Instagram reports the post as published, but it could not be found on the account. Check the account before publishing again.');
    }
    return { ok: 'pending', retryAfterMs: 15_000 };
  }

  return {
    async submit(req): Promise<Submitted> {
      const cred = req.credentials;
      if (!cred) return failure('upstream_unknown');
      const shape = shapeOf(req);
      if ('ok' in shape) return shape;
      const userId = encodeURIComponent(cred.accountId);
      // The account's own rolling 24 h cap (a carousel counts once); read it rather than hard-coding it.
      const quota = await get(`${userId}/content_publishing_limit`, cred.accessToken, { fields: 'quota_usage,config' });
      if (!quota.ok) return quota.failure;
      const row = (Array.isArray(quota.data.data) ? quota.data.data[0] : undefined) as Json | undefined;
      const used = Number(row?.quota_usage ?? 0);
      const total = Number((row?.config as Json | undefined)?.quota_total ?? Infinity);
      if (used >= total) return failure('quota_exceeded');

      const caption = req.text ?? '';
      let containerId: string | NetworkFailure;
      if (shape.kind === 'image') containerId = await createContainer(cred.accountId, cred.accessToken, { image_url: shape.url, caption });
      else if (shape.kind === 'reel') containerId = await createContainer(cred.accountId, cred.accessToken, { video_url: shape.url, media_type: 'REELS', caption });
      else {
        const children: string[] = [];
        for (const url of shape.urls) {
          const child = await createContainer(cred.accountId, cred.accessToken, { image_url: url, is_carousel_item: 'true' });
          if (typeof child !== 'string') return child;
          children.push(child);
        }
        containerId = await createContainer(cred.accountId, cred.accessToken, { media_type: 'CAROUSEL', children: children.join(','), caption });
      }
      return typeof containerId === 'string' ? { ok: true, containerId } : containerId;
    },

    async publish(req, containerId): Promise<Published> {
      const cred = req.credentials;
      if (!cred) return failure('upstream_unknown');
      const token = cred.accessToken;
      const p = readProgress(req.progress, containerId);
      if (p.mediaId !== null) return done(token, p.mediaId);

      const status = await containerStatus(token, containerId);
      if ('ok' in status) return status;
      switch (status.code) {
        case 'IN_PROGRESS':
          return { ok: 'pending', retryAfterMs: req.contentType === 'photo' ? 5_000 : 30_000 };
        case 'ERROR':
          deps.log('instagram: container error', { container: containerId, status: status.text });
          return classifyContainerError(status.text);
        case 'EXPIRED':
          return failure('upstream_unknown', false, 'The media prepared on Instagram expired (after 24 h) before it was published. Publish the content again.');
        case 'PUBLISHED':
          return recover(req, cred.accountId, token, containerId, p);
        case 'FINISHED':
          break;
        default:
          deps.log('instagram: unknown container status', { container: containerId, status: status.code });
          return failure('upstream_unknown');
      }

      // An earlier media_publish got no answer and the container is not PUBLISHED yet: that call may still
      // land. Wait it out before sending another one (Instagram also refuses a second publish of a container).
      const now = deps.now();
      if (p.publishStartedAt !== null && now - p.publishStartedAt < SETTLE_MS) {
        return { ok: 'pending', retryAfterMs: SETTLE_MS - (now - p.publishStartedAt) };
      }
      const attempt: Progress = { ...p, publishStartedAt: now };
      // Recorded before the step that makes the post public, so a run cut off here looks the post up.
      if (!(await save(req, containerId, attempt))) return { ok: 'pending', retryAfterMs: SETTLE_MS };
      const r = await post(`${encodeURIComponent(cred.accountId)}/media_publish`, token, { creation_id: containerId });
      if (r.ok) {
        const mediaId = str(r.data.id);
        if (mediaId === null) return failure('upstream_unknown');
        await save(req, containerId, { ...attempt, mediaId });
        return done(token, mediaId);
      }
      if (r.failure.code === 'token_expired' || r.failure.code === 'permission_revoked') return r.failure;
      // No answer, or an error that may hide a publish that happened (a container publishes once): look again.
      const again = await get(encodeURIComponent(containerId), token, { fields: 'status_code' });
      if (again.ok && str(again.data.status_code) === 'PUBLISHED') return recover(req, cred.accountId, token, containerId, attempt);
      return r.failure;
    },

    async confirm(req, postId): Promise<Confirmation> {
      if (!req.credentials) return { state: 'unavailable' };
      const r = await get(encodeURIComponent(postId), req.credentials.accessToken, { fields: 'id,permalink' });
      if (r.ok) {
        const url = str(r.data.permalink);
        return url === null ? { state: 'pending' } : { state: 'found', url };
      }
      // 100/33: "object does not exist" (deleted, or never made); a 404 says the same.
      if ((r.error.code === 100 && r.error.subcode === 33) || r.error.status === 404) return { state: 'not_found' };
      return { state: 'unavailable' };
    },
  };
}
