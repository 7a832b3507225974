import { FormData } from 'undici';
import type { MediaRef, NetworkFailure, NotReady } from '../adapter.js';
import { failure } from '../kit/failure.js';
import { obj, str } from '../kit/json.js';
import type { MediaSource } from '../media-source.js';
import { call, unexpected } from './api.js';
import { type Ctx, LEASE_LOST, save, type Upload } from './context.js';
import { MASTODON_PROCESSING_FAILED } from './errors.js';
import { type InstanceLimits, mimeTypeOf, tooLarge } from './instance.js';

/** An upload sends the whole file in one request: allow it far longer than an API call. */
const UPLOAD_TIMEOUT_MS = 10 * 60_000;
/** Media still processing: check a few times in one call, then hand back to the worker (never block). */
const POLLS_PER_CALL = 3;
const POLL_GAP_MS = 1_000;
export const PROCESSING_RETRY_MS = 15_000;

const EXTENSIONS: Record<string, string> = { 'image/jpeg': 'jpg', 'image/png': 'png', 'image/gif': 'gif', 'image/webp': 'webp', 'video/mp4': 'mp4', 'video/quicktime': 'mov', 'video/webm': 'webm' };

type Uploaded = { ok: true; ids: string[] } | NetworkFailure;

async function open(ctx: Ctx, url: string): Promise<MediaSource | NetworkFailure> {
  try {
    return await ctx.deps.openMedia(url);
  } catch (err) {
    ctx.deps.log('mastodon: media could not be read', { error: err instanceof Error ? err.message : String(err) });
    return failure('upstream_unknown', false, 'The media file could not be read for upload to Mastodon.');
  }
}

/** One file, `POST /api/v2/media` (multipart, field `file` with its MIME type): 200 processed, 202 processing. */
async function uploadOne(ctx: Ctx, i: number, media: MediaRef, mime: string, limits: InstanceLimits | null): Promise<Upload | NetworkFailure> {
  const source = await open(ctx, media.url);
  if ('ok' in source) return source;
  try {
    // The size given with the job may be unknown: the file itself is checked before it is sent.
    const big = limits ? tooLarge(limits, mime, source.size) : null;
    if (big) return big;
    // undici's FormData, not the global one: the production fetch (the outbound guard) is undici's own, and it
    // does not recognise Node's built-in FormData class (it would send "[object FormData]" as text).
    const form = new FormData();
    form.append('file', await source.blob(mime), `upload-${i + 1}.${EXTENSIONS[mime] ?? 'bin'}`);
    const res = await call(ctx.deps, { origin: ctx.origin, method: 'POST', path: '/api/v2/media', token: ctx.token, body: form as unknown as RequestInit['body'], timeoutMs: UPLOAD_TIMEOUT_MS });
    if (!res.ok) return res.failure;
    const body = obj(res.body);
    const id = str(body.id);
    if (!id) return unexpected(ctx.deps, 'POST /api/v2/media without id');
    return { id, ready: res.status === 200 && str(body.url) !== null };
  } finally {
    await source.close();
  }
}

/**
 * Uploads the post's media, one file at a time, saving each attachment id as soon as it is known so a resumed
 * run sends only the missing files. An upload whose answer was lost leaves an unattached (never public)
 * attachment on the server, which it discards on its own; sending the file again is safe.
 */
export async function uploadAll(ctx: Ctx, media: MediaRef[], contentType: string, limits: InstanceLimits | null): Promise<Uploaded> {
  const ids: string[] = [];
  for (const [i, item] of media.entries()) {
    const done = ctx.state.uploads[i];
    if (done) {
      ids.push(done.id);
      continue;
    }
    const up = await uploadOne(ctx, i, item, mimeTypeOf(item, contentType), limits);
    if ('ok' in up) return up;
    const uploads = [...ctx.state.uploads];
    while (uploads.length < i) uploads.push(null);
    uploads[i] = up;
    if (!(await save(ctx, { uploads }))) return LEASE_LOST;
    ids.push(up.id);
  }
  return { ok: true, ids };
}

/**
 * Waits briefly for every attachment to be processed (`GET /api/v1/media/:id`: 206 and a null `url` while
 * processing, 200 with its `url` once done, 422 when processing failed). Null when all are ready.
 */
export async function mediaReady(ctx: Ctx, ids: string[]): Promise<NotReady | NetworkFailure | null> {
  for (const id of ids) {
    const i = ctx.state.uploads.findIndex((u) => u?.id === id);
    if (ctx.state.uploads[i]?.ready) continue;
    let ready = false;
    for (let poll = 0; poll < POLLS_PER_CALL && !ready; poll++) {
      if (poll > 0) await ctx.deps.sleep(POLL_GAP_MS);
      const res = await call(ctx.deps, { origin: ctx.origin, method: 'GET', path: `/api/v1/media/${encodeURIComponent(id)}`, token: ctx.token });
      if (!res.ok) return res.status === 422 ? MASTODON_PROCESSING_FAILED : res.failure;
      ready = res.status === 200 && str(obj(res.body).url) !== null;
    }
    if (!ready) return { ok: 'pending', retryAfterMs: PROCESSING_RETRY_MS };
    if (i >= 0) {
      const uploads = [...ctx.state.uploads];
      uploads[i] = { id, ready: true };
      if (!(await save(ctx, { uploads }))) return LEASE_LOST;
    }
  }
  return null;
}
