import type { NetworkFailure } from '../adapter.js';
import { num, str } from '../kit/json.js';
import { type Ctx, post } from './api.js';
import type { TiktokErrorInfo } from './errors.js';

/** POST /v2/post/publish/status/fetch/ (Get Post Status reference): where a publication stands. */

export type PostStatus = 'PROCESSING_UPLOAD' | 'PROCESSING_DOWNLOAD' | 'SEND_TO_USER_INBOX' | 'PUBLISH_COMPLETE' | 'FAILED';
const KNOWN: readonly string[] = ['PROCESSING_UPLOAD', 'PROCESSING_DOWNLOAD', 'SEND_TO_USER_INBOX', 'PUBLISH_COMPLETE', 'FAILED'];

export interface StatusView {
  status: PostStatus | null;
  failReason: string | null;
  /** FILE_UPLOAD: bytes TikTok holds ("1-indexed" in the reference; see `chunksHeld`). */
  uploadedBytes: number | null;
  /** The public video id, once TikTok's moderation approved a public post (`publicaly_available_post_id`, sic). */
  postId: string | null;
}

export type StatusReply = { ok: true; view: StatusView } | { ok: false; info: TiktokErrorInfo; failure: NetworkFailure };

/**
 * The first id of `publicaly_available_post_id` (the reference's spelling), read from the raw text: it is a
 * list<int64>, and a 19-digit video id sent as a JSON number loses its last digits in JSON.parse.
 */
function firstPostId(raw: string): string | null {
  const m = /"publicaly_available_post_id"\s*:\s*\[\s*"?(\d+)"?/.exec(raw);
  return m?.[1] ?? null;
}

export async function fetchStatus(ctx: Ctx, publishId: string): Promise<StatusReply> {
  const res = await post(ctx, '/v2/post/publish/status/fetch/', { publish_id: publishId });
  if (!res.ok) return { ok: false, info: res.info, failure: res.failure };
  const status = str(res.data.status);
  return {
    ok: true,
    view: {
      status: status !== null && KNOWN.includes(status) ? (status as PostStatus) : null,
      failReason: str(res.data.fail_reason),
      uploadedBytes: num(res.data.uploaded_bytes),
      postId: firstPostId(res.text),
    },
  };
}
