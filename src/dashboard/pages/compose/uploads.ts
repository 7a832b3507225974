import { ServiceError } from '../../../core/errors.js';
import type { UploadedMedia } from '../../../core/media/media.schema.js';
import { explainServiceError } from '../../explain.js';
import { number } from '../../layout.js';
import { FileTooLarge, type IncomingFile } from '../../multipart.js';
import type { PageContext } from '../../page-router.js';
import { FORM_LIMITS, type FormKey, GB } from './form.js';

/**
 * Uploads of one form render, by its idempotency key: a double submit (a second click while the first is still
 * uploading) reuses the first upload, so the two requests stay identical and the second replays the first
 * instead of failing with idempotency_conflict.
 */
const recentUploads = new Map<string, { at: number; upload: Promise<UploadedMedia> }>();
const RECENT_UPLOAD_MS = 10 * 60_000;
const RECENT_UPLOAD_MAX = 500;

/**
 * Stores the file once per form render and file field; a second submit of the same form gets the first upload.
 * A form whose key is malformed stores nothing (the submit is refused for its key).
 */
export function uploadOnce(ctx: PageContext, file: IncomingFile, formKey: FormKey): Promise<UploadedMedia> {
  if (!formKey.ok) {
    file.stream.resume();
    return Promise.reject(new ServiceError('validation_failed', `idempotency_key: ${formKey.rule}`, { fields: [{ path: 'idempotency_key', message: formKey.rule }] }));
  }
  const idempotencyKey = formKey.key;
  const start = () => ctx.deps.services.media.upload(ctx.principal, ctx.workspaceId, file.mimeType, file.stream);
  if (idempotencyKey === undefined) return start();
  const now = Date.now();
  for (const [key, entry] of recentUploads) {
    if (now - entry.at <= RECENT_UPLOAD_MS && recentUploads.size <= RECENT_UPLOAD_MAX) break;
    recentUploads.delete(key);
  }
  const key = `${ctx.workspaceId} ${idempotencyKey} ${file.field}`;
  const earlier = recentUploads.get(key);
  if (earlier) {
    file.stream.resume();
    return earlier.upload;
  }
  const upload = start();
  recentUploads.set(key, { at: now, upload });
  // A failed upload may be tried again with the same form.
  upload.catch(() => recentUploads.delete(key));
  return upload;
}

/** Why an upload failed, in words for the Media field; null for a failure that is a bug, not the file's. */
export function uploadError(err: unknown, truncated: boolean): { message: string; status: number } | null {
  if (truncated || err instanceof FileTooLarge) {
    return { message: `The file is larger than the dashboard accepts (${number(FORM_LIMITS.fileSize / GB)} GB). Put it at a public address and give that instead.`, status: 413 };
  }
  if (!(err instanceof ServiceError)) return null;
  const fields = Array.isArray(err.extra.fields) ? (err.extra.fields as { path?: unknown }[]) : [];
  if (err.code === 'validation_failed' && fields.some((f) => f.path === 'body')) {
    return { message: 'The file is empty. Choose the file again, or give its public address instead.', status: 400 };
  }
  if (err.code === 'validation_failed') return { message: 'This kind of file is not accepted. Upload a JPEG, PNG, WebP or GIF image, or an MP4, MOV or WebM video.', status: 400 };
  return { message: err.code === 'limit_reached' ? `The file does not fit. ${explainServiceError(err)}` : err.message, status: err.status };
}
