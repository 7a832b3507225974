import type { NetworkFailure, Published } from '../adapter.js';
import { list, obj, parseJson, str } from '../kit/json.js';
import type { MediaSource } from '../media-source.js';
import { LINKEDIN_PROCESSING_FAILED } from './errors.js';
import { type Ctx, exchange, LEASE_LOST, openFile, rest, saveStep, unexpected, type VideoPart } from './rest.js';

/** Media still processing: check a few times in one call, then hand back to the worker (never block). */
const POLLS_PER_CALL = 3;
const POLL_GAP_MS = 1_000;
const PROCESSING_RETRY_MS = 15_000;
const enc = encodeURIComponent;

type Uploaded = { ok: true; urn: string } | NetworkFailure;

/** Images API: initializeUpload, then PUT the bytes; a resumed run asks the image's status before re-sending. */
export async function uploadImage(ctx: Ctx, i: number, url: string): Promise<Uploaded> {
  const prior = ctx.state.media[i];
  let step = prior?.kind === 'image' ? prior : null;
  if (step?.uploaded) return { ok: true, urn: step.urn };
  if (step) {
    const seen = await rest(ctx, 'GET', `/rest/images/${enc(step.urn)}`);
    if (seen.ok && str(obj(parseJson(seen.text)).status) !== 'WAITING_UPLOAD') {
      if (!(await saveStep(ctx, i, { ...step, uploaded: true }))) return LEASE_LOST;
      return { ok: true, urn: step.urn };
    }
    if (!seen.ok && seen.status !== 404) return seen.failure;
    if (!seen.ok) step = null; // the image is gone (upload expired): start over, nothing public was made
  }
  if (!step) {
    const init = await rest(ctx, 'POST', '/rest/images?action=initializeUpload', { initializeUploadRequest: { owner: ctx.author } });
    if (!init.ok) return init.failure;
    const value = obj(obj(parseJson(init.text)).value);
    const image = str(value.image);
    const uploadUrl = str(value.uploadUrl);
    if (!uploadUrl || !image) return unexpected(ctx.deps, 'images initializeUpload');
    step = { kind: 'image', urn: image, uploadUrl, uploaded: false };
    if (!(await saveStep(ctx, i, step))) return LEASE_LOST;
  }
  const file = await openFile(ctx, url);
  if (!file.ok) return file;
  let put;
  try {
    put = await exchange(ctx.deps, 'PUT image upload', step.uploadUrl, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${ctx.token}`, 'Content-Type': 'application/octet-stream' },
      body: await file.source.blob('application/octet-stream'),
    });
  } finally {
    await file.source.close();
  }
  if (!put.ok) return put.failure;
  if (!(await saveStep(ctx, i, { ...step, uploaded: true }))) return LEASE_LOST;
  return { ok: true, urn: step.urn };
}

function partsOf(v: unknown): VideoPart[] | null {
  const parts = list(v).map((p) => ({ uploadUrl: str(obj(p).uploadUrl) ?? '', firstByte: Number(obj(p).firstByte), lastByte: Number(obj(p).lastByte) }));
  const valid = parts.length > 0 && parts.every((p) => p.uploadUrl && Number.isInteger(p.firstByte) && Number.isInteger(p.lastByte) && p.lastByte >= p.firstByte);
  return valid ? parts : null;
}

/**
 * Videos API: initializeUpload → PUT each part (keeping its ETag, saved one by one so a resumed run sends only
 * the missing parts) → finalizeUpload. A finalize whose answer was lost is not repeated blindly: the video's
 * status tells whether it landed.
 */
export async function uploadVideo(ctx: Ctx, i: number, url: string): Promise<Uploaded> {
  const prior = ctx.state.media[i];
  let step = prior?.kind === 'video' ? prior : null;
  if (step?.finalized) return { ok: true, urn: step.urn };
  // Opened only when a part must be sent; each part is read from disk on its own, never the whole video.
  let source: MediaSource | null = null;
  try {
    if (!step) {
      const read = await openFile(ctx, url);
      if (!read.ok) return read;
      source = read.source;
      const init = await rest(ctx, 'POST', '/rest/videos?action=initializeUpload', {
        initializeUploadRequest: { owner: ctx.author, fileSizeBytes: source.size, uploadCaptions: false, uploadThumbnail: false },
      });
      if (!init.ok) return init.failure;
      const value = obj(obj(parseJson(init.text)).value);
      const parts = partsOf(value.uploadInstructions);
      const video = str(value.video);
      if (!video || parts === null) return unexpected(ctx.deps, 'videos initializeUpload');
      step = { kind: 'video', urn: video, uploadToken: str(value.uploadToken) ?? '', parts, etags: [], finalizeSent: false, finalized: false };
      if (!(await saveStep(ctx, i, step))) return LEASE_LOST;
    }
    for (const [j, part] of step.parts.entries()) {
      if (step.etags[j]) continue; // sent by an earlier run
      if (source === null) {
        const read = await openFile(ctx, url);
        if (!read.ok) return read;
        source = read.source;
      }
      // Upload URLs are pre-signed: no bearer token goes to them.
      const put = await exchange(ctx.deps, `PUT video part ${j + 1}/${step.parts.length}`, part.uploadUrl, {
        method: 'PUT',
        headers: { 'Content-Type': 'application/octet-stream' },
        body: await source.read(part.firstByte, part.lastByte - part.firstByte + 1),
      });
      if (!put.ok) return put.failure;
      const etag = put.headers.get('etag');
      if (!etag) return unexpected(ctx.deps, 'video part without ETag');
      const etags: string[] = [...step.etags];
      etags[j] = etag;
      step = { ...step, etags };
      if (!(await saveStep(ctx, i, step))) return LEASE_LOST;
    }
    if (step.finalizeSent) {
      const seen = await rest(ctx, 'GET', `/rest/videos/${enc(step.urn)}`);
      if (!seen.ok) return seen.failure;
      if (str(obj(parseJson(seen.text)).status) !== 'WAITING_UPLOAD') {
        if (!(await saveStep(ctx, i, { ...step, finalized: true }))) return LEASE_LOST;
        return { ok: true, urn: step.urn };
      }
    }
    step = { ...step, finalizeSent: true };
    if (!(await saveStep(ctx, i, step))) return LEASE_LOST;
    const fin = await rest(ctx, 'POST', '/rest/videos?action=finalizeUpload', {
      finalizeUploadRequest: { video: step.urn, uploadToken: step.uploadToken, uploadedPartIds: step.etags },
    });
    if (!fin.ok) return fin.failure;
    if (!(await saveStep(ctx, i, { ...step, finalized: true }))) return LEASE_LOST;
    return { ok: true, urn: step.urn };
  } finally {
    await source?.close();
  }
}

/** Waits briefly for each asset to be AVAILABLE; null when all are, else pending or a failure. */
export async function mediaReady(ctx: Ctx, urns: string[]): Promise<Published | null> {
  for (const urn of urns) {
    const kind = urn.startsWith('urn:li:video:') ? 'videos' : 'images';
    let status = '';
    for (let poll = 0; poll < POLLS_PER_CALL && status !== 'AVAILABLE'; poll++) {
      if (poll > 0) await ctx.deps.sleep(POLL_GAP_MS);
      const seen = await rest(ctx, 'GET', `/rest/${kind}/${enc(urn)}`);
      if (!seen.ok) return seen.failure;
      status = str(obj(parseJson(seen.text)).status) ?? '';
      if (status === 'PROCESSING_FAILED') return LINKEDIN_PROCESSING_FAILED;
      if (status !== 'AVAILABLE' && status !== 'PROCESSING' && status !== 'WAITING_UPLOAD') return unexpected(ctx.deps, `${kind} status ${status}`);
    }
    if (status !== 'AVAILABLE') return { ok: 'pending', retryAfterMs: PROCESSING_RETRY_MS };
  }
  return null;
}

