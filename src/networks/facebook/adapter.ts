import type { Confirmation, MediaRef, NetworkAdapter, NetworkFailure, PublishRequest, Published, Submitted } from '../adapter.js';
import { PLATFORMS } from '../../vocabulary/platforms.js';
import { failure } from '../kit/failure.js';
import { type Json, list, num, obj, str } from '../kit/json.js';
import type { GraphCall } from '../meta-graph/client.js';
import type { NetworkDeps, NetworkSettings } from '../network-deps.js';
import { facebookGraph } from './graph.js';

/**
 * Facebook Pages (Graph API). Facebook publishes in one call, so the steps are split like this:
 * - `submit` does only what is not public: uploading unpublished photos for a multi-photo post
 *   (`fb-album:<fbid,…>`), starting and filling a reel upload session (`fb-reel:<video-id>`); a post made in
 *   one call gets the synthetic `fb-pending:<jobId>`.
 * - `publish` makes the one public call, with `publishing: true` saved before it. When an earlier run's
 *   outcome is unknown (timeout, 5xx), it first looks the post up among the Page's recent posts — same text,
 *   created since that attempt (Facebook has no field to carry our job id, so the marker is text + time
 *   window; trade-off: an identical post made by hand in those minutes would be taken as ours, which only
 *   means we do not add a second identical post). A post not visible yet is given a grace period (pending)
 *   before posting again. Reels need no search: the video id itself is the marker (its publishing phase).
 * - `confirm` reads `permalink_url` (and, for videos and reels, `status.video_status` until `ready`).
 * Media at a public address is fetched by Facebook (`url`, `file_url`); our own uploads (`file://`) are sent
 * as bytes. Every call goes to the configured `apiBaseUrl`, except the reel upload host Facebook names.
 */

/** Posts whose `created_time` is this much before our attempt still match (clock skew with Facebook). */
const LOOKUP_SKEW_MS = 2 * 60_000;
/** After an unknown outcome, how long a post may take to show in the Page's listings before we post again. */
const UNKNOWN_OUTCOME_GRACE_MS = 90_000;
const PENDING_RETRY_MS = 15_000;

const PENDING = 'fb-pending:';
const ALBUM = 'fb-album:';
const REEL = 'fb-reel:';

/** What a job did on Facebook, as saved with `saveProgress` (read defensively: it round-trips through JSON). */
interface Progress {
  /** Unpublished photo ids of a multi-photo post, by media index. */
  photoIds: string[];
  reel: { videoId: string; uploadUrl: string; uploaded: boolean } | null;
  /** A public call was started and its outcome is not known yet. */
  publishing: boolean;
  publishingAt: number | null;
  firstPublishingAt: number | null;
  postId: string | null;
}

function readProgress(p: Record<string, unknown> | null): Progress {
  const r = p ?? {};
  const reel = typeof r.reel === 'object' && r.reel !== null ? (r.reel as Record<string, unknown>) : null;
  return {
    photoIds: Array.isArray(r.photoIds) ? r.photoIds.filter((x): x is string => typeof x === 'string') : [],
    reel: reel && typeof reel.videoId === 'string' && typeof reel.uploadUrl === 'string' ? { videoId: reel.videoId, uploadUrl: reel.uploadUrl, uploaded: reel.uploaded === true } : null,
    publishing: r.publishing === true,
    publishingAt: num(r.publishingAt),
    firstPublishingAt: num(r.firstPublishingAt),
    postId: typeof r.postId === 'string' ? r.postId : null,
  };
}

const normalize = (s: unknown) => (typeof s === 'string' ? s.trim().replace(/\s+/g, ' ') : '');
const isHttp = (u: string) => /^https?:\/\//i.test(u);
/** Video permalinks come back relative (`/page/videos/1/`). */
const absolute = (u: string) => new URL(u, PLATFORMS.facebook.postUrlBase).toString();

const LEASE_LOST = failure('upstream_5xx', true, 'This run lost the job to another worker before posting; it posted nothing.');
const NO_CREDENTIALS = failure('upstream_unknown', false, 'The Facebook connection has no stored credentials. Reconnect it.');
const MEDIA_UNREADABLE = failure('upstream_unknown', false, 'The media file could not be read for the upload to Facebook.');

/** The one public call of a post made in one request, and how to find it again if its outcome is unknown. */
interface PublicCall {
  path: string;
  form: Record<string, string>;
  /** Which listing holds the post and which field holds our text. */
  lookup: { edge: 'published_posts' | 'videos'; field: 'message' | 'description' };
  postIdOf(d: Json): string | null;
  /** The media item, sent as `urlKey` (a public address) or as a `source` upload. */
  media?: { ref: MediaRef; urlKey: 'url' | 'file_url' };
}

function planPublicCall(req: PublishRequest, pageId: string, containerId: string): PublicCall | NetworkFailure {
  const text = req.text ?? '';
  const withText = (form: Record<string, string>, key: string) => (text ? { ...form, [key]: text } : form);
  const posts = { edge: 'published_posts', field: 'message' } as const;
  if (containerId.startsWith(ALBUM)) {
    const ids = containerId.slice(ALBUM.length).split(',');
    return { path: `/${pageId}/feed`, form: withText({ attached_media: JSON.stringify(ids.map((id) => ({ media_fbid: id }))) }, 'message'), lookup: posts, postIdOf: (d) => str(d.id) };
  }
  if (!containerId.startsWith(PENDING)) return failure('upstream_unknown', false);
  const media = req.media[0];
  if (req.contentType === 'text') return { path: `/${pageId}/feed`, form: { message: text }, lookup: posts, postIdOf: (d) => str(d.id) };
  if (req.contentType === 'photo' && media) {
    // `post_id` is the feed story; `id` is the photo object.
    return { path: `/${pageId}/photos`, form: withText({ published: 'true' }, 'message'), media: { ref: media, urlKey: 'url' }, lookup: posts, postIdOf: (d) => str(d.post_id) ?? str(d.id) };
  }
  if (req.contentType === 'video' && media) {
    const lookup = { edge: 'videos', field: 'description' } as const;
    return { path: `/${pageId}/videos`, form: withText({}, 'description'), media: { ref: media, urlKey: 'file_url' }, lookup, postIdOf: (d) => str(d.id) };
  }
  return failure('upstream_unknown', false);
}

/** Checks what Facebook needs before anything is sent; null when the request can go. */
function checkRequest(req: PublishRequest): NetworkFailure | null {
  const needed = req.contentType === 'text' ? 0 : 1;
  if (!PLATFORMS.facebook.contentTypes.includes(req.contentType)) return failure('upstream_unknown', false, 'Facebook Pages do not take this content type.');
  if (req.contentType === 'text' && !req.text?.trim()) return failure('upstream_unknown', false, 'A text post on Facebook needs some text.');
  if (req.media.length < needed) return failure('upstream_unknown', false, 'This Facebook post needs a media item.');
  return null;
}

/**
 * The media part of a Graph call, and the file's size (the reel upload host wants it). `close` releases the
 * file once the call that sends it has returned: a file-backed Blob reads its file only while the body is sent.
 */
type MediaPayload = Pick<GraphCall, 'form' | 'files'> & { size: number; close(): Promise<void> };

const NOTHING_TO_CLOSE = async (): Promise<void> => {};

/** Creates the Facebook Pages adapter (credentials: the Page access token and the page id). */
export function createFacebookAdapter(settings: NetworkSettings, deps: NetworkDeps): NetworkAdapter {
  const graph = facebookGraph(settings, deps);
  const apiOrigin = new URL(settings.apiBaseUrl).origin;

  /** Saves the whole state (saveProgress replaces what was saved); false when the lease was lost. */
  const save = (req: PublishRequest, p: Progress) => req.saveProgress({ ...p });

  /**
   * A public address goes as `urlKey` (Facebook fetches it); our own uploads (`file://`) go as the file, a
   * multipart `source` streamed from disk (simple, non-resumable upload).
   */
  async function mediaPayload(ref: MediaRef, urlKey: 'url' | 'file_url'): Promise<MediaPayload | NetworkFailure> {
    if (isHttp(ref.url)) return { form: { [urlKey]: ref.url }, size: ref.sizeBytes ?? 0, close: NOTHING_TO_CLOSE };
    try {
      // An upload kept by this service (on this disk, or a temporary copy from the media store).
      const source = await deps.openMedia(ref.url);
      try {
        const blob = await source.blob(ref.contentType ?? (urlKey === 'url' ? 'image/jpeg' : 'video/mp4'));
        return { form: {}, files: { source: blob }, size: source.size, close: () => source.close() };
      } catch (err) {
        await source.close();
        throw err;
      }
    } catch (err) {
      deps.log('facebook: media could not be read', { error: err instanceof Error ? err.message : 'unknown' });
      return MEDIA_UNREADABLE;
    }
  }

  async function uploadUnpublishedPhotos(req: PublishRequest, token: string, pageId: string): Promise<Submitted> {
    const p = readProgress(req.progress);
    const ids = p.photoIds.slice(0, req.media.length);
    for (let i = ids.length; i < req.media.length; i++) {
      const media = req.media[i];
      if (!media) break;
      const payload = await mediaPayload(media, 'url');
      if ('ok' in payload) return payload;
      // Unpublished: nothing is public until publish attaches them to one feed post.
      const r = await graph
        .call({ method: 'POST', url: graph.url(`/${pageId}/photos`), token, form: { ...payload.form, published: 'false' }, files: payload.files })
        .finally(payload.close);
      if (!r.ok) return r.failure;
      const id = str(r.data.id);
      if (!id) return failure('upstream_unknown', false);
      ids.push(id);
      if (!(await save(req, { ...p, photoIds: ids }))) return LEASE_LOST;
    }
    return { ok: true, containerId: ALBUM + ids.join(',') };
  }

  /** Reels API phase 1 and 2 (start, hosted upload): a session that is not public until `finish`. */
  async function startReel(req: PublishRequest, token: string, pageId: string, media: MediaRef): Promise<Submitted> {
    const p = readProgress(req.progress);
    let reel = p.reel;
    if (!reel) {
      const r = await graph.call({ method: 'POST', url: graph.url(`/${pageId}/video_reels`), token, form: { upload_phase: 'start' } });
      if (!r.ok) return r.failure;
      const videoId = str(r.data.video_id);
      const uploadUrl = str(r.data.upload_url);
      if (!videoId || !uploadUrl) return failure('upstream_unknown', false);
      reel = { videoId, uploadUrl, uploaded: false };
      if (!(await save(req, { ...p, reel }))) return LEASE_LOST;
    }
    if (!reel.uploaded) {
      // The upload host comes from Facebook's answer (rupload.facebook.com); the token only goes to https or to
      // the configured API's own origin (the local fake).
      const target = new URL(reel.uploadUrl);
      if (target.protocol !== 'https:' && target.origin !== apiOrigin) return failure('upstream_unknown', false);
      const upload: GraphCall = { method: 'POST', url: target, headers: { authorization: `OAuth ${token}`, file_url: media.url } };
      let close = NOTHING_TO_CLOSE;
      if (!isHttp(media.url)) {
        // Our own upload: the bytes in one piece from offset 0 (the host's local-file form).
        const payload = await mediaPayload(media, 'file_url');
        if ('ok' in payload) return payload;
        upload.headers = { authorization: `OAuth ${token}`, offset: '0', file_size: String(payload.size), 'content-type': 'application/octet-stream' };
        upload.body = payload.files?.source ?? new Blob([]);
        close = payload.close;
      }
      const r = await graph.call(upload).finally(close);
      if (!r.ok) return r.failure;
      reel = { ...reel, uploaded: true };
      if (!(await save(req, { ...p, reel }))) return LEASE_LOST;
    }
    return { ok: true, containerId: REEL + reel.videoId };
  }

  /** Looks for the post an earlier call may have made: same text, created since `sinceMs` (minus skew). */
  async function findExisting(token: string, pageId: string, call: PublicCall, text: string, sinceMs: number): Promise<{ ok: true; postId: string | null } | NetworkFailure> {
    const from = sinceMs - LOOKUP_SKEW_MS;
    const { edge, field } = call.lookup;
    const url = graph.url(`/${pageId}/${edge}`, { fields: `id,${field},created_time`, since: String(Math.floor(from / 1000)), limit: '25' });
    const r = await graph.call({ method: 'GET', url, token });
    if (!r.ok) return r.failure;
    const rows = list(r.data.data).map(obj);
    const match = rows
      .filter((row) => normalize(row[field]) === normalize(text) && Date.parse(String(row.created_time)) >= from)
      .sort((a, b) => Date.parse(String(a.created_time)) - Date.parse(String(b.created_time)))[0];
    return { ok: true, postId: match ? str(match.id) : null };
  }

  async function publishInOneCall(req: PublishRequest, token: string, pageId: string, containerId: string): Promise<Published> {
    const call = planPublicCall(req, pageId, containerId);
    if ('ok' in call) return call;
    const text = req.text ?? '';
    let p = readProgress(req.progress);
    if (p.publishing && p.publishingAt !== null) {
      const found = await findExisting(token, pageId, call, text, p.publishingAt);
      if (!found.ok) return found;
      if (found.postId) {
        await save(req, { ...p, publishing: false, postId: found.postId });
        return { ok: true, postId: found.postId };
      }
      if (deps.now() - p.publishingAt < UNKNOWN_OUTCOME_GRACE_MS) return { ok: 'pending', retryAfterMs: PENDING_RETRY_MS };
      // Not there after the grace period: that attempt did not post. Post now.
    }
    const payload: MediaPayload | NetworkFailure = call.media ? await mediaPayload(call.media.ref, call.media.urlKey) : { form: {}, size: 0, close: NOTHING_TO_CLOSE };
    if ('ok' in payload) return payload;
    const now = deps.now();
    p = { ...p, publishing: true, publishingAt: now, firstPublishingAt: p.firstPublishingAt ?? now };
    if (!(await save(req, p))) {
      await payload.close();
      return LEASE_LOST;
    }
    const r = await graph.call({ method: 'POST', url: graph.url(call.path), token, form: { ...call.form, ...payload.form }, files: payload.files }).finally(payload.close);
    if (r.ok) {
      const postId = call.postIdOf(r.data);
      if (!postId) return failure('upstream_unknown', false);
      await save(req, { ...p, publishing: false, postId });
      return { ok: true, postId };
    }
    if (r.row === 'duplicate' && p.firstPublishingAt !== null) {
      // Refused as a duplicate: of our own earlier attempt? Then that attempt is the post.
      const found = await findExisting(token, pageId, call, text, p.firstPublishingAt);
      if (found.ok && found.postId) {
        await save(req, { ...p, publishing: false, postId: found.postId });
        return { ok: true, postId: found.postId };
      }
    }
    if (r.outcomeKnown) await save(req, { ...p, publishing: false });
    return r.failure;
  }

  /** Reels API phase 3 (`finish` with `video_state=PUBLISHED`), once: the video's own status says if it ran. */
  async function publishReel(req: PublishRequest, token: string, pageId: string, videoId: string): Promise<Published> {
    let p = readProgress(req.progress);
    const s = await graph.call({ method: 'GET', url: graph.url(`/${videoId}`, { fields: 'status' }), token });
    if (!s.ok) return s.failure;
    const status = obj(s.data.status);
    const phase = (name: string) => str(obj(status[name]).status);
    if (phase('publishing_phase') === 'complete' || phase('publishing_phase') === 'in_progress') {
      await save(req, { ...p, publishing: false, postId: videoId });
      return { ok: true, postId: videoId };
    }
    if (phase('uploading_phase') === 'error' || phase('processing_phase') === 'error') return failure('media_unsupported_format', false);
    if (phase('uploading_phase') !== 'complete') return { ok: 'pending', retryAfterMs: PENDING_RETRY_MS };
    const now = deps.now();
    p = { ...p, publishing: true, publishingAt: now, firstPublishingAt: p.firstPublishingAt ?? now };
    if (!(await save(req, p))) return LEASE_LOST;
    const form: Record<string, string> = { upload_phase: 'finish', video_id: videoId, video_state: 'PUBLISHED' };
    if (req.text) form.description = req.text;
    const r = await graph.call({ method: 'POST', url: graph.url(`/${pageId}/video_reels`), token, form });
    if (!r.ok) {
      if (r.outcomeKnown) await save(req, { ...p, publishing: false });
      return r.failure;
    }
    await save(req, { ...p, publishing: false, postId: videoId });
    return { ok: true, postId: videoId };
  }

  return {
    async submit(req): Promise<Submitted> {
      if (!req.credentials) return NO_CREDENTIALS;
      const invalid = checkRequest(req);
      if (invalid) return invalid;
      const { accessToken: token, accountId: pageId } = req.credentials;
      const first = req.media[0];
      if (req.contentType === 'reel' && first) return startReel(req, token, pageId, first);
      if (req.contentType === 'photo' && req.media.length > 1) return uploadUnpublishedPhotos(req, token, pageId);
      // One public call does it all; nothing to prepare (the job id names the container).
      return { ok: true, containerId: PENDING + req.jobId };
    },

    async publish(req, containerId): Promise<Published> {
      if (!req.credentials) return NO_CREDENTIALS;
      const { accessToken: token, accountId: pageId } = req.credentials;
      const done = readProgress(req.progress).postId;
      if (done) return { ok: true, postId: done };
      if (containerId.startsWith(REEL)) return publishReel(req, token, pageId, containerId.slice(REEL.length));
      return publishInOneCall(req, token, pageId, containerId);
    },

    async confirm(req, postId): Promise<Confirmation> {
      if (!req.credentials) return { state: 'unavailable' };
      const isVideo = req.contentType === 'video' || req.contentType === 'reel';
      const url = graph.url(`/${postId}`, { fields: isVideo ? 'permalink_url,status' : 'id,permalink_url' });
      const r = await graph.call({ method: 'GET', url, token: req.credentials.accessToken });
      if (!r.ok) {
        // Graph says "does not exist" with code 100 / subcode 33 (or a plain 404).
        const missing = r.error.status === 404 || (r.error.code === 100 && r.error.subcode === 33);
        return { state: missing ? 'not_found' : 'unavailable' };
      }
      if (isVideo) {
        const status = obj(r.data.status);
        const videoStatus = str(status.video_status);
        if (videoStatus === 'error' || videoStatus === 'expired') return { state: 'not_found' };
        if (videoStatus !== 'ready') return { state: 'pending' };
      }
      const permalink = str(r.data.permalink_url);
      return { state: 'found', url: permalink ? absolute(permalink) : absolute(postId) };
    },
  };
}
