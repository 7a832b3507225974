import type { NetworkFailure } from '../adapter.js';
import { type Classified, classify, type ErrorRow, failure } from '../kit/failure.js';
import { parseGraphError, type GraphError } from '../meta-graph/errors.js';

/**
 * Instagram's failures arrive in Meta's Graph envelope, or from the token host as `{error_type, code,
 * error_message}` where `code` is only the HTTP status: that reads as no envelope, and the status rows decide.
 */

const codeIn = (...codes: number[]) => (e: GraphError) => e.code !== null && codes.includes(e.code);
/** Instagram's 22070xx / 36xxx content codes arrive as `error_subcode` or as `code`, depending on the call. */
const anyCode = (...codes: number[]) => (e: GraphError) => codes.some((c) => c === e.code || c === e.subcode);

const THROTTLED = 'Instagram is limiting how fast this account or app may call it. The job is retried automatically.';

/**
 * Spec 7.4 for Instagram, first match wins. Sources: Meta's Graph API error reference and the content
 * publishing guide, plus the publishing codes public adapters map (Postiz). Order matters: 9/2207042 (daily
 * publishing cap) must precede the plain throttling row of code 9.
 */
export const INSTAGRAM_ERROR_TABLE: readonly ErrorRow<GraphError>[] = [
  // 190 = invalid OAuth token; subcodes 458 app removed, 459 checkpoint, 460 password changed, 463 expired,
  // 467 invalid. All of them need the user to log in again.
  { name: '190 OAuthException (458/459/460/463/467)', matches: codeIn(190), code: 'token_expired', retryable: false },
  { name: '102 API session invalid', matches: codeIn(102), code: 'token_expired', retryable: false },
  {
    name: 'revoked or invalidated session (text)',
    matches: (e) => /REVOKED_ACCESS_TOKEN|session has been invalidated/i.test(e.raw),
    code: 'token_expired',
    retryable: false,
  },
  { name: '10 permission denied', matches: codeIn(10), code: 'permission_revoked', retryable: false },
  { name: '200-299 permission missing', matches: (e) => e.code !== null && e.code >= 200 && e.code <= 299, code: 'permission_revoked', retryable: false },
  { name: '368 temporarily blocked for policy', matches: codeIn(368), code: 'permission_revoked', retryable: false },
  { name: '9/2207042 daily publishing cap', matches: anyCode(2207042), code: 'quota_exceeded', retryable: false },
  // Call-rate throttling resets within minutes to an hour: the worker's retry schedule fits it.
  { name: '4/17/32/613/9 throttling', matches: codeIn(4, 17, 32, 613, 9), code: 'upstream_5xx', retryable: true, message: THROTTLED },
  { name: '2207026 unsupported video', matches: anyCode(2207026), code: 'media_unsupported_format', retryable: false },
  { name: '2207009/36003 aspect ratio', matches: anyCode(2207009, 36003), code: 'media_unsupported_format', retryable: false },
  { name: '2207005/2207023/36001 image format, media type, resolution', matches: anyCode(2207005, 2207023, 36001), code: 'media_unsupported_format', retryable: false },
  { name: '2207004 image too large', matches: anyCode(2207004), code: 'media_too_large', retryable: false },
  // Spec 7.4 has no caption code for jobs; validation normally stops long captions before a job exists.
  {
    name: '2207010 caption too long',
    matches: anyCode(2207010),
    code: 'upstream_unknown',
    retryable: false,
    message: 'Instagram refused the caption (at most 2,200 characters, 30 hashtags and 20 @mentions). Shorten it and publish again.',
  },
  {
    name: '2207003/2207032/2207053/2207082 media fetch or upload hiccup',
    matches: anyCode(2207003, 2207032, 2207053, 2207082),
    code: 'upstream_5xx',
    retryable: true,
    message: 'Instagram could not fetch or store the media this time. The job is retried automatically.',
  },
  {
    name: '2207008/2207020 container or media expired',
    matches: anyCode(2207008, 2207020),
    code: 'upstream_unknown',
    retryable: false,
    message: 'The media prepared on Instagram expired before it was published. Publish the content again.',
  },
  {
    name: '9007/2207027 container not ready for publishing',
    matches: anyCode(2207027),
    code: 'upstream_5xx',
    retryable: true,
    message: 'Instagram had not finished preparing the media. The job is retried automatically.',
  },
  { name: 'Graph says transient, or 1/2 unknown/service errors', matches: (e) => e.transient || codeIn(1, 2)(e), code: 'upstream_5xx', retryable: true },
  { name: 'no answer (network error, timeout)', matches: (e) => e.status === 0, code: 'upstream_5xx', retryable: true },
  { name: 'HTTP 5xx', matches: (e) => e.status >= 500, code: 'upstream_5xx', retryable: true },
  { name: 'HTTP 429', matches: (e) => e.status === 429, code: 'upstream_5xx', retryable: true, message: THROTTLED },
  { name: 'HTTP 401 without a Graph code', matches: (e) => e.status === 401, code: 'token_expired', retryable: false },
  { name: 'HTTP 403 without a Graph code', matches: (e) => e.status === 403, code: 'permission_revoked', retryable: false },
];

/** Sorts one failure into spec 7.4's codes; anything no row knows is `upstream_unknown`, not retried. */
export function classifyInstagramError(e: GraphError): Classified {
  return classify(INSTAGRAM_ERROR_TABLE, e);
}

/** A container in status ERROR names its cause in the `status` text ("… error code 2207026"): map that code. */
export function classifyContainerError(statusText: string | null): NetworkFailure {
  const code = /\b(\d{5,7})\b/.exec(statusText ?? '')?.[1];
  const row = code === undefined ? undefined : INSTAGRAM_ERROR_TABLE.find((r) => r.matches(parseGraphError(400, { error: { code: Number(code) } })));
  if (row) return failure(row.code, row.retryable, row.message);
  // Processing failures without a known code are nearly always the media itself (codec, ratio, duration).
  return failure('media_unsupported_format', false, 'Instagram could not process the media. Use JPEG for photos and MP4 (H.264, 9:16, 3 seconds to 15 minutes) for reels.');
}
