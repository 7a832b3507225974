import type { MediaRef, NetworkFailure, NotReady } from '../adapter.js';
import { failure } from '../kit/failure.js';
import { type Json, num, obj, str } from '../kit/json.js';
import type { MediaSource } from '../media-source.js';
import { PLATFORMS } from '../../vocabulary/platforms.js';
import { didWebOf } from './account.js';
import { BLUESKY_VIDEO_ERROR_TABLE, BLUESKY_VIDEO_FAILED, classifyXrpc } from './errors.js';
import { type BlobRef, type Ctx, readBlob } from './repo.js';
import { unexpected, xrpc } from './xrpc.js';

/**
 * Media for a post. Images: com.atproto.repo.uploadBlob to the PDS, referenced by an app.bsky.embed.images embed.
 * Video: the flow docs.bsky.app ("Uploading Video") recommends — a service-auth token for the PDS bound to
 * uploadBlob, the file sent to the video service (app.bsky.video.uploadVideo), which processes it and stores the
 * result on the PDS; app.bsky.video.getJobStatus then hands over the blob for an app.bsky.embed.video embed. (The
 * simpler uploadBlob of the raw video would make the post public before the video is playable.)
 */

const IMAGE_MAX_BYTES = PLATFORMS.bluesky.limits.mediaMaxBytes.photo ?? 1_000_000;
const VIDEO_MAX_BYTES = PLATFORMS.bluesky.limits.mediaMaxBytes.video ?? 100 * 1024 * 1024;
/** app.bsky.embed.images holds at most 4 images. */
export const MAX_IMAGES = 4;
/** The upload token's lifetime: the docs recommend 30 minutes, since the video service uses it after the upload. */
const UPLOAD_TOKEN_SECONDS = 30 * 60;
const VIDEO_UPLOAD_TIMEOUT_MS = 10 * 60_000;
const IMAGE_UPLOAD_TIMEOUT_MS = 2 * 60_000;
/** Processing: a few checks within one call, then back to the worker (never block a job for minutes). */
const POLLS_PER_CALL = 3;
const POLL_GAP_MS = 1_000;
const PROCESSING_RETRY_MS = 15_000;

const TOO_LARGE = (limit: number) => failure('media_too_large', false, `The file is over Bluesky's limit of ${limit.toLocaleString('en-US')} bytes.`);
const TYPES: Record<string, string> = { jpg: 'image/jpeg', jpeg: 'image/jpeg', png: 'image/png', gif: 'image/gif', webp: 'image/webp', mp4: 'video/mp4', mov: 'video/quicktime' };

/** The media's type as given, else from its name; the PDS sniffs the bytes anyway and answers the real one. */
function typeOf(m: MediaRef, fallback: string): string {
  if (m.contentType) return m.contentType;
  const ext = /\.([a-z0-9]+)(?:[?#].*)?$/i.exec(m.url)?.[1]?.toLowerCase() ?? '';
  return TYPES[ext] ?? fallback;
}

async function open(ctx: Ctx, m: MediaRef, limit: number): Promise<{ ok: true; source: MediaSource } | NetworkFailure> {
  if (m.sizeBytes !== null && m.sizeBytes > limit) return TOO_LARGE(limit);
  let source: MediaSource;
  try {
    source = await ctx.deps.openMedia(m.url);
  } catch (err) {
    ctx.deps.log('bluesky: media could not be read', { error: err instanceof Error ? err.message : String(err) });
    return failure('upstream_unknown', false, 'The media file could not be read for upload to Bluesky.');
  }
  if (source.size > limit) {
    await source.close();
    return TOO_LARGE(limit);
  }
  return { ok: true, source };
}

/** Uploads up to four images as blobs (uploading the same bytes again gives the same blob: safe to repeat). */
export async function uploadImages(ctx: Ctx, media: MediaRef[]): Promise<{ ok: true; blobs: BlobRef[] } | NetworkFailure> {
  const blobs: BlobRef[] = [];
  for (const m of media.slice(0, MAX_IMAGES)) {
    const file = await open(ctx, m, IMAGE_MAX_BYTES);
    if (!file.ok) return file;
    const type = typeOf(m, 'application/octet-stream');
    let res;
    try {
      res = await xrpc(ctx.deps, { base: ctx.account.pds, nsid: 'com.atproto.repo.uploadBlob', token: ctx.token, body: await file.source.blob(type), contentType: type, timeoutMs: IMAGE_UPLOAD_TIMEOUT_MS });
    } finally {
      await file.source.close();
    }
    if (!res.ok) return res.failure;
    const blob = readBlob(res.data.blob);
    if (!blob) return unexpected(ctx.deps, 'uploadBlob without a blob');
    blobs.push(blob);
  }
  return { ok: true, blobs };
}

/** com.atproto.server.getServiceAuth: a short token for another service (`aud`), bound to one method (`lxm`). */
async function serviceToken(ctx: Ctx, aud: string, lxm: string, expSeconds?: number): Promise<{ ok: true; token: string } | NetworkFailure> {
  const params = { aud, lxm, ...(expSeconds ? { exp: String(expSeconds) } : {}) };
  const res = await xrpc(ctx.deps, { base: ctx.account.pds, nsid: 'com.atproto.server.getServiceAuth', token: ctx.token, params });
  if (!res.ok) return res.failure;
  const token = str(res.data.token);
  return token ? { ok: true, token } : unexpected(ctx.deps, 'getServiceAuth without a token');
}

/** A refusal of the video service, sorted with its table (its `error` and `message` are matched, never shown). */
function refusal(status: number, body: Json): NetworkFailure {
  return classifyXrpc(BLUESKY_VIDEO_ERROR_TABLE, { status, error: str(body.error) ?? '', message: str(body.message) ?? '', resetAt: null, resetInMs: null }).failure;
}

/** The job status of an answer: the lexicon wraps it in `jobStatus`; the live service sends it bare (atproto#3026). */
const jobStatusOf = (body: Json): Json => (str(obj(body.jobStatus).jobId) !== null || readBlob(obj(body.jobStatus).blob) ? obj(body.jobStatus) : body);

export type VideoJob = { ok: true; jobId: string | null; blob: BlobRef | null } | NetworkFailure;

/**
 * Sends a video to the video service: checks the account's daily limits (app.bsky.video.getUploadLimits), then
 * uploads. A video the service already processed comes back as `already_exists` with its job and blob: that is
 * a success (so a repeated upload after a lost answer costs nothing and makes nothing public).
 */
export async function uploadVideo(ctx: Ctx, m: MediaRef): Promise<VideoJob> {
  const file = await open(ctx, m, VIDEO_MAX_BYTES);
  if (!file.ok) return file;
  try {
    const video = ctx.videoService;
    const limitsToken = await serviceToken(ctx, didWebOf(video), 'app.bsky.video.getUploadLimits');
    if (!limitsToken.ok) return limitsToken;
    const limits = await xrpc(ctx.deps, { base: video, nsid: 'app.bsky.video.getUploadLimits', token: limitsToken.token, table: BLUESKY_VIDEO_ERROR_TABLE });
    if (!limits.ok) return limits.failure;
    const bytesLeft = num(limits.data.remainingDailyBytes);
    if (limits.data.canUpload !== true || (bytesLeft !== null && bytesLeft < file.source.size)) {
      return refusal(403, { error: str(limits.data.error) ?? 'VideoUploadLimit', message: str(limits.data.message) ?? '' });
    }

    const exp = Math.floor(ctx.deps.now() / 1000) + UPLOAD_TOKEN_SECONDS;
    const uploadToken = await serviceToken(ctx, didWebOf(ctx.account.pds), 'com.atproto.repo.uploadBlob', exp);
    if (!uploadToken.ok) return uploadToken;
    const type = typeOf(m, 'video/mp4');
    const res = await xrpc(ctx.deps, {
      base: video,
      nsid: 'app.bsky.video.uploadVideo',
      params: { did: ctx.account.did, name: `${ctx.req.jobId}.${type === 'video/quicktime' ? 'mov' : 'mp4'}` },
      token: uploadToken.token,
      body: await file.source.blob(type),
      contentType: type,
      timeoutMs: VIDEO_UPLOAD_TIMEOUT_MS,
      table: BLUESKY_VIDEO_ERROR_TABLE,
    });
    const body = res.ok ? res.data : res.body;
    const job = jobStatusOf(body ?? {});
    const jobId = str(job.jobId);
    const blob = readBlob(job.blob);
    if (blob || (jobId && (str(job.error) === null || str(job.error) === 'already_exists'))) return { ok: true, jobId, blob };
    // Refusals arrive as XRPC errors or, for some (unconfirmed_email), inside a job status without a job.
    const error = str(job.error);
    if (!res.ok && error === null) return res.failure;
    return refusal(res.ok ? 400 : res.status, { error: error ?? 'NoJob', message: str(job.message) ?? '' });
  } finally {
    await file.source.close();
  }
}

/**
 * The processed video's blob (app.bsky.video.getJobStatus, asked a few times): pending while the service works on
 * it. A blob in the answer is used whatever the state says (docs: a video processed before answers
 * `already_exists` with the earlier blob).
 */
export async function processedVideo(ctx: Ctx, jobId: string): Promise<{ ok: true; blob: BlobRef } | NotReady | NetworkFailure> {
  for (let poll = 0; poll < POLLS_PER_CALL; poll++) {
    if (poll > 0) await ctx.deps.sleep(POLL_GAP_MS);
    const res = await xrpc(ctx.deps, { base: ctx.videoService, nsid: 'app.bsky.video.getJobStatus', params: { jobId }, table: BLUESKY_VIDEO_ERROR_TABLE });
    if (!res.ok) return res.failure;
    const job = jobStatusOf(res.data);
    const blob = readBlob(job.blob);
    if (blob) return { ok: true, blob };
    const state = str(job.state) ?? '';
    if (state === 'JOB_STATE_FAILED') {
      ctx.deps.log('bluesky: video processing failed', { jobId, error: str(job.error), message: str(job.message) });
      return BLUESKY_VIDEO_FAILED;
    }
    if (state === 'JOB_STATE_COMPLETED') return unexpected(ctx.deps, 'getJobStatus completed without a blob');
  }
  return { ok: 'pending', retryAfterMs: PROCESSING_RETRY_MS };
}
