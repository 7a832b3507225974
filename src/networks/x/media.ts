import type { MediaRef, NetworkFailure, NotReady } from '../adapter.js';
import { failure } from '../kit/failure.js';
import { num, obj, str } from '../kit/json.js';
import type { MediaSource } from '../media-source.js';
import { PLATFORMS } from '../../vocabulary/platforms.js';
import { processingFailed } from './errors.js';
import { api, type Ctx, LEASE_LOST, type MediaStep, openFile, saveStep, unexpected, type VideoStep } from './api.js';

/**
 * X API v2 media upload (OpenAPI 2.167 on docs.x.com): still images whole with POST /2/media/upload (`media`,
 * `media_category`), video and GIFs in segments with POST /2/media/upload/initialize → /{id}/append →
 * /{id}/finalize, then GET /2/media/upload?command=STATUS until `processing_info.state` is `succeeded`. The
 * one-shot upload's `media_category` (MediaCategoryOneShot) is only `tweet_image`, `dm_image` or `subtitles`
 * and its `media_type` lists no GIF: `tweet_gif` exists only in initialize's MediaCategory.
 */

/**
 * Bytes per APPEND. The v2 reference gives no segment size; the v1.1 reference capped a chunk at 5 MB, and X's
 * samples use 1–4 MB. At most 1,000 segments (`segment_index` 0–999): 4 MiB covers far more than 512 MB.
 */
export const SEGMENT_BYTES = 4 * 1024 * 1024;
/** STATUS checks within one publish call while X processes, when it asks to wait no longer than this. */
const POLLS_PER_CALL = 3;
const MAX_WAIT_IN_CALL_MS = 5_000;
/** The shortest "ask again later" handed to the worker while X processes. */
const MIN_RETRY_MS = 5_000;

/** The formats X accepts (media best practices: JPG, PNG, GIF, WEBP photos; MP4 and MOV video). */
const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];
const VIDEO_TYPES = ['video/mp4', 'video/quicktime'];
const BY_EXTENSION: Record<string, string> = { jpg: 'image/jpeg', jpeg: 'image/jpeg', png: 'image/png', gif: 'image/gif', webp: 'image/webp', mp4: 'video/mp4', m4v: 'video/mp4', mov: 'video/quicktime' };

type Uploaded = { ok: true; id: string } | NetworkFailure;
const enc = encodeURIComponent;

const UNSUPPORTED = failure('media_unsupported_format', false, 'X does not accept this media format. Use JPEG, PNG, GIF or WEBP for photos and MP4 or MOV for video.');
const tooLarge = (kind: 'photo' | 'video', max: number) => failure('media_too_large', false, `The ${kind} is over X's ${Math.round(max / (1024 * 1024))} MB limit.`);

/** The media type to declare: the one given, else guessed from the address' extension; null when X takes none of it. */
function mediaTypeOf(item: MediaRef, kind: 'photo' | 'video'): string | null {
  const extension = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(item.url)?.[1]?.toLowerCase() ?? '';
  const type = (item.contentType?.split(';')[0]?.trim().toLowerCase() || BY_EXTENSION[extension]) ?? (kind === 'photo' ? 'image/jpeg' : 'video/mp4');
  return (kind === 'photo' ? IMAGE_TYPES : VIDEO_TYPES).includes(type) ? type : null;
}

/** Refuses what X would refuse before sending a byte (spec 8: limits from the platform row). */
function precheck(item: MediaRef, kind: 'photo' | 'video'): { ok: true; type: string } | NetworkFailure {
  const type = mediaTypeOf(item, kind);
  if (type === null) return UNSUPPORTED;
  const max = PLATFORMS.x.limits.mediaMaxBytes[kind];
  if (max !== null && item.sizeBytes !== null && item.sizeBytes > max) return tooLarge(kind, max);
  return { ok: true, type };
}

/** A `processing_info` still running (pending / in_progress), or null once done or when there is none. */
function processing(data: unknown): { state: string; checkAfterMs: number; error: string | null } | null {
  const info = obj(obj(data).processing_info);
  const state = str(info.state);
  if (state === null || state === 'succeeded') return null;
  const error = obj(info.error);
  return { state, checkAfterMs: (num(info.check_after_secs) ?? 5) * 1000, error: str(error.message) ?? str(error.name) };
}

/** POST /2/media/upload as multipart (`media`, `media_category`), the file streamed from disk, never held whole. */
export async function uploadImage(ctx: Ctx, i: number, item: MediaRef): Promise<Uploaded> {
  const prior = ctx.state.media[i];
  // An image is one call: a run cut off before its answer simply sends it again (an orphan upload expires).
  if (prior?.kind === 'image') return { ok: true, id: prior.id };
  const checked = precheck(item, 'photo');
  if (!checked.ok) return checked;
  if (checked.type === 'image/gif') return uploadInSegments(ctx, i, item, { kind: 'photo', type: checked.type, category: 'tweet_gif' });
  const file = await openFile(ctx, item.url);
  if (!file.ok) return file;
  let res;
  try {
    const max = PLATFORMS.x.limits.mediaMaxBytes.photo;
    if (max !== null && file.source.size > max) return tooLarge('photo', max);
    const form = new FormData();
    form.set('media_category', 'tweet_image');
    form.set('media', await file.source.blob(checked.type), 'media');
    res = await api(ctx, 'POST', '/2/media/upload', { form });
  } finally {
    await file.source.close();
  }
  if (!res.ok) return res.failure;
  const data = obj(res.body.data);
  const id = str(data.id);
  if (!id) return unexpected(ctx.deps, 'media upload without data.id');
  const running = processing(data);
  if (running?.state === 'failed') return processingFailed(running.error);
  if (!(await saveStep(ctx, i, { kind: 'image', id, pending: running !== null }))) return LEASE_LOST;
  return { ok: true, id };
}

/** A video: its type checked, then sent in segments as `tweet_video`. */
export async function uploadVideo(ctx: Ctx, i: number, item: MediaRef): Promise<Uploaded> {
  const checked = precheck(item, 'video');
  if (!checked.ok) return checked;
  return uploadInSegments(ctx, i, item, { kind: 'video', type: checked.type, category: 'tweet_video' });
}

/**
 * initialize → append each segment (saved one by one, so a resumed run sends only the missing ones) → finalize.
 * A finalize whose answer was lost is not sent blindly again: STATUS tells whether it landed (the docs do not say
 * what STATUS answers before a finalize; an error there means "not finalized", so it is sent again — harmless,
 * nothing is public yet). `kind` picks the size limit: a GIF is a photo to the service's limits.
 */
async function uploadInSegments(ctx: Ctx, i: number, item: MediaRef, as: { kind: 'photo' | 'video'; type: string; category: 'tweet_video' | 'tweet_gif' }): Promise<Uploaded> {
  const prior = ctx.state.media[i];
  let step: VideoStep | null = prior?.kind === 'video' ? prior : null;
  if (step?.finalized) return { ok: true, id: step.id };
  // Opened only when a segment must be sent; each segment is read from disk on its own.
  let source: MediaSource | null = null;
  try {
    if (!step) {
      const read = await openFile(ctx, item.url);
      if (!read.ok) return read;
      source = read.source;
      const max = PLATFORMS.x.limits.mediaMaxBytes[as.kind];
      if (max !== null && source.size > max) return tooLarge(as.kind, max);
      const init = await api(ctx, 'POST', '/2/media/upload/initialize', { json: { media_type: as.type, total_bytes: source.size, media_category: as.category } });
      if (!init.ok) return init.failure;
      const id = str(obj(init.body.data).id);
      if (!id) return unexpected(ctx.deps, 'media initialize without data.id');
      step = { kind: 'video', id, size: source.size, segments: 0, finalizeSent: false, finalized: false, pending: true };
      if (!(await saveStep(ctx, i, step))) return LEASE_LOST;
    }
    const total = Math.max(1, Math.ceil(step.size / SEGMENT_BYTES));
    for (let segment = step.segments; segment < total; segment++) {
      if (source === null) {
        const read = await openFile(ctx, item.url);
        if (!read.ok) return read;
        source = read.source;
      }
      const form = new FormData();
      form.set('segment_index', String(segment));
      form.set('media', new Blob([new Uint8Array(await source.read(segment * SEGMENT_BYTES, SEGMENT_BYTES))], { type: 'application/octet-stream' }), 'media');
      const appended = await api(ctx, 'POST', `/2/media/upload/${enc(step.id)}/append`, { form });
      if (!appended.ok) return appended.failure;
      step = { ...step, segments: segment + 1 };
      if (!(await saveStep(ctx, i, step))) return LEASE_LOST;
    }
    return await finalize(ctx, i, step);
  } finally {
    await source?.close();
  }
}

async function finalize(ctx: Ctx, i: number, step: VideoStep): Promise<Uploaded> {
  if (step.finalizeSent) {
    const seen = await status(ctx, step.id);
    if (seen.ok) return finalized(ctx, i, step, seen.body.data);
    if (seen.status === null || seen.status >= 500 || seen.status === 429) return seen.failure;
  }
  if (!(await saveStep(ctx, i, { ...step, finalizeSent: true }))) return LEASE_LOST;
  const fin = await api(ctx, 'POST', `/2/media/upload/${enc(step.id)}/finalize`);
  if (!fin.ok) return fin.failure;
  return finalized(ctx, i, { ...step, finalizeSent: true }, fin.body.data);
}

async function finalized(ctx: Ctx, i: number, step: VideoStep, data: unknown): Promise<Uploaded> {
  const running = processing(data);
  if (running?.state === 'failed') return processingFailed(running.error);
  if (!(await saveStep(ctx, i, { ...step, finalized: true, pending: running !== null }))) return LEASE_LOST;
  return { ok: true, id: step.id };
}

const status = (ctx: Ctx, id: string) => api(ctx, 'GET', `/2/media/upload?command=STATUS&media_id=${enc(id)}`);

/**
 * Media still processing: a few STATUS checks in one call when X asks for a short wait, then hand back to the
 * worker (NotReady after `check_after_secs`) rather than block. Null when every medium is ready.
 */
export async function mediaReady(ctx: Ctx): Promise<NotReady | NetworkFailure | null> {
  for (const [i, step] of ctx.state.media.entries()) {
    if (!step?.pending) continue;
    let waitMs = MIN_RETRY_MS;
    let ready = false;
    for (let poll = 0; poll < POLLS_PER_CALL && !ready; poll++) {
      if (poll > 0) await ctx.deps.sleep(waitMs);
      const seen = await status(ctx, step.id);
      if (!seen.ok) return seen.failure;
      const running = processing(seen.body.data);
      if (running?.state === 'failed') return processingFailed(running.error);
      if (running === null) ready = true;
      else if (running.state !== 'pending' && running.state !== 'in_progress') return unexpected(ctx.deps, `media status ${running.state}`);
      else if (running.checkAfterMs > MAX_WAIT_IN_CALL_MS) return { ok: 'pending', retryAfterMs: running.checkAfterMs };
      else waitMs = running.checkAfterMs;
    }
    if (!ready) return { ok: 'pending', retryAfterMs: Math.max(MIN_RETRY_MS, waitMs) };
    const done: MediaStep = { ...step, pending: false };
    if (!(await saveStep(ctx, i, done))) return LEASE_LOST;
  }
  return null;
}
