import { JOB_ERROR_MESSAGES, type JobErrorCode } from '../../vocabulary/job-errors.js';
import type { NetworkFailure } from '../adapter.js';

/**
 * A Graph API failure as the adapter sees it. `code` / `subcode` come from `{error: {code, error_subcode}}`
 * (the Graph shape); the Instagram token host answers `{error_type, code, error_message}` instead, where `code`
 * is only the HTTP status, so `code` stays undefined there and the status rows decide.
 */
export interface GraphErrorInfo {
  /** HTTP status; 0 when no answer came (refused connection, timeout). */
  status: number;
  code?: number | undefined;
  subcode?: number | undefined;
  /** Graph's `is_transient` hint. */
  transient?: boolean | undefined;
  /** The network's own text, only matched against, never returned (house style 4). */
  text?: string | undefined;
}

interface Row {
  /** Why this row exists (the documented meaning), for readers and test names. */
  why: string;
  match(e: GraphErrorInfo): boolean;
  code: JobErrorCode;
  retryable: boolean;
  /** Our own sentence when the catalogue's one would mislead. */
  message?: string;
}

const codeIn = (...codes: number[]) => (e: GraphErrorInfo) => e.code !== undefined && codes.includes(e.code);
/** Instagram's 22070xx / 36xxx content codes arrive as `error_subcode` or as `code`, depending on the call. */
const anyCode = (...codes: number[]) => (e: GraphErrorInfo) => codes.some((c) => c === e.code || c === e.subcode);

const THROTTLED = 'Instagram is limiting how fast this account or app may call it. The job is retried automatically.';

/**
 * Spec 7.4 for Instagram, first match wins. Sources: Meta's Graph API error reference and the content
 * publishing guide, plus the publishing codes public adapters map (Postiz). Order matters: 9/2207042 (daily
 * publishing cap) must precede the plain throttling row of code 9.
 */
export const INSTAGRAM_ERROR_TABLE: readonly Row[] = [
  // 190 = invalid OAuth token; subcodes 458 app removed, 459 checkpoint, 460 password changed, 463 expired,
  // 467 invalid. All of them need the user to log in again.
  { why: '190 OAuthException (458/459/460/463/467)', match: codeIn(190), code: 'token_expired', retryable: false },
  { why: '102 API session invalid', match: codeIn(102), code: 'token_expired', retryable: false },
  {
    why: 'revoked or invalidated session (text)',
    match: (e) => /REVOKED_ACCESS_TOKEN|session has been invalidated/i.test(e.text ?? ''),
    code: 'token_expired',
    retryable: false,
  },
  { why: '10 permission denied', match: codeIn(10), code: 'permission_revoked', retryable: false },
  { why: '200-299 permission missing', match: (e) => e.code !== undefined && e.code >= 200 && e.code <= 299, code: 'permission_revoked', retryable: false },
  { why: '368 temporarily blocked for policy', match: codeIn(368), code: 'permission_revoked', retryable: false },
  { why: '9/2207042 daily publishing cap', match: anyCode(2207042), code: 'quota_exceeded', retryable: false },
  // Call-rate throttling resets within minutes to an hour: the worker's retry schedule fits it.
  { why: '4/17/32/613/9 throttling', match: codeIn(4, 17, 32, 613, 9), code: 'upstream_5xx', retryable: true, message: THROTTLED },
  { why: '2207026 unsupported video', match: anyCode(2207026), code: 'media_unsupported_format', retryable: false },
  { why: '2207009/36003 aspect ratio', match: anyCode(2207009, 36003), code: 'media_unsupported_format', retryable: false },
  { why: '2207005/2207023/36001 image format, media type, resolution', match: anyCode(2207005, 2207023, 36001), code: 'media_unsupported_format', retryable: false },
  { why: '2207004 image too large', match: anyCode(2207004), code: 'media_too_large', retryable: false },
  // Spec 7.4 has no caption code for jobs; validation normally stops long captions before a job exists.
  {
    why: '2207010 caption too long',
    match: anyCode(2207010),
    code: 'upstream_unknown',
    retryable: false,
    message: 'Instagram refused the caption (at most 2,200 characters, 30 hashtags and 20 @mentions). Shorten it and publish again.',
  },
  {
    why: '2207003/2207032/2207053/2207082 media fetch or upload hiccup',
    match: anyCode(2207003, 2207032, 2207053, 2207082),
    code: 'upstream_5xx',
    retryable: true,
    message: 'Instagram could not fetch or store the media this time. The job is retried automatically.',
  },
  {
    why: '2207008/2207020 container or media expired',
    match: anyCode(2207008, 2207020),
    code: 'upstream_unknown',
    retryable: false,
    message: 'The media prepared on Instagram expired before it was published. Publish the content again.',
  },
  {
    why: '9007/2207027 container not ready for publishing',
    match: anyCode(2207027),
    code: 'upstream_5xx',
    retryable: true,
    message: 'Instagram had not finished preparing the media. The job is retried automatically.',
  },
  { why: 'Graph says transient, or 1/2 unknown/service errors', match: (e) => e.transient === true || codeIn(1, 2)(e), code: 'upstream_5xx', retryable: true },
  { why: 'no answer (network error, timeout)', match: (e) => e.status === 0, code: 'upstream_5xx', retryable: true },
  { why: 'HTTP 5xx', match: (e) => e.status >= 500, code: 'upstream_5xx', retryable: true },
  { why: 'HTTP 429', match: (e) => e.status === 429, code: 'upstream_5xx', retryable: true, message: THROTTLED },
  { why: 'HTTP 401 without a Graph code', match: (e) => e.status === 401, code: 'token_expired', retryable: false },
  { why: 'HTTP 403 without a Graph code', match: (e) => e.status === 403, code: 'permission_revoked', retryable: false },
];

/** Sorts one failure into spec 7.4's codes; anything no row knows is `upstream_unknown`, not retried. */
export function classifyInstagramError(e: GraphErrorInfo): NetworkFailure {
  const row = INSTAGRAM_ERROR_TABLE.find((r) => r.match(e));
  if (!row) return { ok: false, code: 'upstream_unknown', retryable: false, message: JOB_ERROR_MESSAGES.upstream_unknown };
  return toFailure(row);
}

function toFailure(row: Row): NetworkFailure {
  return { ok: false, code: row.code, retryable: row.retryable, message: row.message ?? JOB_ERROR_MESSAGES[row.code] };
}

/** Reads the codes out of an error body in either of Instagram's two shapes (Graph, or the token host's). */
export function parseGraphError(status: number, body: unknown, rawText: string): GraphErrorInfo {
  const info: GraphErrorInfo = { status, text: rawText };
  if (typeof body !== 'object' || body === null) return info;
  const err = (body as { error?: unknown }).error;
  if (typeof err === 'object' && err !== null) {
    const e = err as Record<string, unknown>;
    info.code = typeof e.code === 'number' ? e.code : undefined;
    info.subcode = typeof e.error_subcode === 'number' ? e.error_subcode : undefined;
    info.transient = e.is_transient === true;
  }
  return info;
}

/** A container in status ERROR names its cause in the `status` text ("… error code 2207026"): map that code. */
export function classifyContainerError(statusText: string | undefined): NetworkFailure {
  const code = /\b(\d{5,7})\b/.exec(statusText ?? '')?.[1];
  const row = code === undefined ? undefined : INSTAGRAM_ERROR_TABLE.find((r) => r.match({ status: 400, code: Number(code) }));
  if (row) return toFailure(row);
  // Processing failures without a known code are nearly always the media itself (codec, ratio, duration).
  return {
    ok: false,
    code: 'media_unsupported_format',
    retryable: false,
    message: 'Instagram could not process the media. Use JPEG for photos and MP4 (H.264, 9:16, 3 to 90 s) for reels.',
  };
}
