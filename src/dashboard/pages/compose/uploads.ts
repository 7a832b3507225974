import { mediaItemsMax } from '../../../core/contents/media-count.js';
import { ServiceError } from '../../../core/errors.js';
import { CONTENT_TYPES, type ContentType } from '../../../vocabulary/platforms.js';
import type { UploadedMedia } from '../../../core/media/media.schema.js';
import { explainServiceError } from '../../explain.js';
import { number } from '../../layout.js';
import { FileTooLarge, type IncomingFile } from '../../multipart.js';
import type { PageContext } from '../../page-router.js';
import { FORM_LIMITS, type FormKey, GB, MEDIA_TYPES } from './form.js';

/** A file past what the post's content type takes: refused before it is stored, with the sentence for the field. */
export class TooManyFiles extends Error {}

/**
 * Whether the file at `index` of this form (0 for the first) is one more than the content type takes, counting the
 * addresses and kept uploads sent before the file input; the sentence saying so, else null.
 */
function overTheCount(fields: Readonly<Record<string, string[]>>, index: number): string | null {
  const type = fields.content_type?.[0] ?? '';
  // Files of a type without media are left out of the request (as the form leaves its addresses out): no count.
  if (!MEDIA_TYPES.includes(type) || !(CONTENT_TYPES as readonly string[]).includes(type)) return null;
  const max = mediaItemsMax(type as ContentType);
  const before = (fields.media_url ?? []).filter((u) => u.trim() !== '').length + (fields.media_id ?? []).filter((id) => id !== '').length;
  if (before + index + 1 <= max) return null;
  return max === 1
    ? `A ${type === 'reel' ? 'reel' : 'video'} takes one file, and this post already has one: the other files were not uploaded. To post several images, choose the content type Photo.`
    : `A post takes at most ${number(max)} files in all, addresses and uploads together: the files after the ${number(max)}th were not uploaded.`;
}

/**
 * Uploads of one form render, by its idempotency key: a double submit (a second click while the first is still
 * uploading) reuses the first upload, so the two requests stay identical and the second replays the first
 * instead of failing with idempotency_conflict.
 */
const recentUploads = new Map<string, { at: number; upload: Promise<UploadedMedia> }>();
const RECENT_UPLOAD_MS = 10 * 60_000;
const RECENT_UPLOAD_MAX = 500;

/**
 * Stores the file once per form render and position among the form's files (`index`, 0 for the first); a second
 * submit of the same form gets the first uploads. A form whose key is malformed stores nothing (the submit is
 * refused for its key), nor does a file past what the content type takes (`fields`: those sent before the file).
 */
export function uploadOnce(ctx: PageContext, file: IncomingFile, formKey: FormKey, index: number, fields: Readonly<Record<string, string[]>>): Promise<UploadedMedia> {
  if (!formKey.ok) {
    file.stream.resume();
    return Promise.reject(new ServiceError('validation_failed', `idempotency_key: ${formKey.rule}`, { fields: [{ path: 'idempotency_key', message: formKey.rule }] }));
  }
  const tooMany = overTheCount(fields, index);
  if (tooMany !== null) {
    file.stream.resume();
    return Promise.reject(new TooManyFiles(tooMany));
  }
  const idempotencyKey = formKey.key;
  const start = () => ctx.deps.services.media.upload(ctx.principal, ctx.workspaceId, file.mimeType, file.stream);
  if (idempotencyKey === undefined) return start();
  const now = Date.now();
  for (const [key, entry] of recentUploads) {
    if (now - entry.at <= RECENT_UPLOAD_MS && recentUploads.size <= RECENT_UPLOAD_MAX) break;
    recentUploads.delete(key);
  }
  const key = `${ctx.workspaceId} ${idempotencyKey} ${file.field} ${index}`;
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
  if (err instanceof TooManyFiles) return { message: err.message, status: 400 };
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
