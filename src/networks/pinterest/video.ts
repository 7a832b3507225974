import type { MediaRef, NetworkFailure, Published } from '../adapter.js';
import { failure } from '../kit/failure.js';
import { NETWORK_TIMEOUT_MS } from '../kit/http.js';
import { obj, str } from '../kit/json.js';
import { bodyOf, type Ctx, exchange, LEASE_LOST, openFile, save, unexpected, v5 } from './api.js';
import { PINTEREST_UPLOAD_ERROR_TABLE, PINTEREST_VIDEO_FAILED } from './errors.js';

/** Media still processing: check a few times in one call, then hand back to the worker (never block). */
const POLLS_PER_CALL = 3;
const POLL_GAP_MS = 1_000;
const PROCESSING_RETRY_MS = 15_000;
/** The upload is one form POST (S3 policies allow no resume): give it time for its size, at 1 MiB/s at worst. */
const SLOWEST_UPLOAD_BYTES_PER_MS = 1_048_576 / 1_000;
const enc = encodeURIComponent;

const VIDEO_LOST = failure('upstream_unknown', false, 'Pinterest no longer knows the uploaded video. Publish the content again.');

type Uploaded = { ok: true; mediaId: string } | NetworkFailure;

/**
 * Video pins (developers.pinterest.com/docs/api-features/creating-boards-and-pins/#creating-video-pins):
 * POST /v5/media `{media_type: "video"}` → `media_id`, `upload_url`, `upload_parameters`; then a multipart form
 * POST to `upload_url` with every upload parameter and the bytes as `file` (last, as S3 requires). Nothing is
 * public yet, so a run cut off before the upload finished simply registers again; once uploaded, the media id is
 * saved so a run taken over does not send gigabytes twice.
 */
export async function uploadVideo(ctx: Ctx, item: MediaRef): Promise<Uploaded> {
  const prior = ctx.state.video;
  if (prior) {
    const seen = await v5(ctx, 'GET', `/media/${enc(prior.mediaId)}`);
    if (seen.ok && str(bodyOf(seen).status) !== 'failed') return { ok: true, mediaId: prior.mediaId };
    if (!seen.ok && seen.status !== 404) return seen.failure;
    // Gone or failed: register again (nothing public was made from it).
  }
  const file = await openFile(ctx.deps, item.url);
  if (!file.ok) return file;
  try {
    const registered = await v5(ctx, 'POST', '/media', { media_type: 'video' });
    if (!registered.ok) return registered.failure;
    const body = bodyOf(registered);
    const mediaId = str(body.media_id);
    const uploadUrl = str(body.upload_url);
    if (!mediaId || !uploadUrl || !/^https?:\/\//.test(uploadUrl)) return unexpected(ctx.deps, 'POST /v5/media without media_id or upload_url');

    const form = new FormData();
    for (const [name, value] of Object.entries(obj(body.upload_parameters))) {
      const text = str(value);
      if (text !== null) form.append(name, text);
    }
    form.append('file', await file.source.blob(item.contentType ?? 'video/mp4'), 'video');
    // The signed form is the credential: no bearer token goes to the storage, and the URL is not logged.
    const timeoutMs = Math.max(NETWORK_TIMEOUT_MS, Math.ceil(file.source.size / SLOWEST_UPLOAD_BYTES_PER_MS));
    const up = await exchange(ctx.deps, 'POST video upload', uploadUrl, { method: 'POST', body: form }, PINTEREST_UPLOAD_ERROR_TABLE, timeoutMs);
    if (!up.ok) return up.failure;
    if (!(await save(ctx, { video: { mediaId } }))) return LEASE_LOST;
    return { ok: true, mediaId };
  } finally {
    await file.source.close();
  }
}

/**
 * GET /v5/media/{media_id}: `registered` (bytes not seen yet) and `processing` wait; `succeeded` is ready;
 * `failed` is final. Null when ready, else pending or a failure.
 */
export async function videoReady(ctx: Ctx, mediaId: string): Promise<Published | null> {
  for (let poll = 0; poll < POLLS_PER_CALL; poll++) {
    if (poll > 0) await ctx.deps.sleep(POLL_GAP_MS);
    const seen = await v5(ctx, 'GET', `/media/${enc(mediaId)}`);
    if (!seen.ok) return seen.status === 404 ? VIDEO_LOST : seen.failure;
    const status = str(bodyOf(seen).status);
    if (status === 'succeeded') return null;
    if (status === 'failed') return PINTEREST_VIDEO_FAILED;
    if (status !== 'registered' && status !== 'processing') return unexpected(ctx.deps, `media status ${status ?? 'missing'}`);
  }
  return { ok: 'pending', retryAfterMs: PROCESSING_RETRY_MS };
}
