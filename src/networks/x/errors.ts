import type { NetworkFailure } from '../adapter.js';
import { type ErrorRow, failure } from '../kit/failure.js';
import { isRecord, jsonObject, list, obj, str } from '../kit/json.js';

/**
 * An X failure as the tables see it. API v2 answers RFC 7807-style problems `{title, detail, type, status,
 * reason?}` (docs.x.com "Response Codes & Errors"), older paths `{errors: [{code, message}]}`, and the OAuth
 * token endpoint RFC 6749's `{error, error_description}`. The texts are matched against, never returned.
 */
export interface XErrorInfo {
  /** HTTP status; 0 when no answer came (refused, reset, timed out). */
  status: number;
  /** The problem type's last segment (`client-forbidden`, `usage-capped`…), `about:blank`, or the OAuth `error`. */
  type: string;
  title: string;
  /** `detail`, `error_description` or the first `errors[].message`; the raw text when the body is not JSON. */
  text: string;
  /** A problem's `reason` (`client-not-enrolled`…); '' when absent. */
  reason: string;
  /** The 24-hour user or app limit is used up (`x-user-limit-24hour-remaining` / `x-app-limit-24hour-remaining` at 0). */
  dailyLimitUsed: boolean;
  /** Ms until the 15-minute window resets (`x-rate-limit-reset`); null when not given. */
  resetInMs: number | null;
}

const status = (...codes: number[]) => (e: XErrorInfo) => codes.includes(e.status);
const says = (re: RegExp) => (e: XErrorInfo) => re.test(`${e.title} ${e.text}`);
const badRequest = (re: RegExp) => (e: XErrorInfo) => e.status === 400 && says(re)(e);

/** X refuses a post whose text repeats a recent one of the same account (403, "duplicate content"). */
export const isDuplicate = (e: XErrorInfo): boolean => e.status === 403 && says(/duplicate content|status is a duplicate/i)(e);

/**
 * Spec 7.4 for X API v2 (`/2/tweets`, `/2/users`, `/2/media/upload*`), first match wins. Sources: docs.x.com
 * "Response Codes & Errors" (status codes and problem types), "Rate limits" (POST /2/tweets: 100/15 min per user,
 * 10,000/24 h per app), the media best practices (sizes, formats). The docs are silent on the pay-per-use refusal
 * and on the 24-hour limit headers: both rows follow what integrators report (402 `CreditsDepleted`;
 * `x-user-limit-24hour-*` / `x-app-limit-24hour-*` headers on a 429).
 */
export const X_ERROR_TABLE: readonly ErrorRow<XErrorInfo>[] = [
  { name: 'no answer (network error or timeout)', matches: status(0), code: 'upstream_5xx', retryable: true },
  { name: '401 token expired or revoked', matches: status(401), code: 'token_expired', retryable: false },
  {
    // Posting is paid per use: the operator's developer account must be topped up; retrying cannot help.
    name: '402 payment required (pay-per-use credits depleted)',
    matches: (e) => e.status === 402 || says(/credits ?depleted/i)(e),
    code: 'quota_exceeded',
    retryable: false,
    message: "This service's X developer account has no API credits left, so X refused the post. The operator must top it up.",
  },
  { name: '429 usage cap exceeded (usage-capped)', matches: (e) => e.status === 429 && (e.type === 'usage-capped' || says(/usage ?cap/i)(e)), code: 'quota_exceeded', retryable: false },
  { name: '429 with the 24-hour user or app limit used up', matches: (e) => e.status === 429 && e.dailyLimitUsed, code: 'quota_exceeded', retryable: false },
  // The 15-minute window's reset (x-rate-limit-reset) is waited for: the retry comes after it (api.ts).
  { name: '429 rate limit (15-minute window)', matches: status(429), code: 'upstream_5xx', retryable: true },
  {
    name: '403 duplicate content',
    matches: isDuplicate,
    code: 'upstream_unknown',
    retryable: false,
    message: 'X refused the post because the account published the same text recently. Change the text to publish it again.',
  },
  {
    // A chain's previous post was deleted meanwhile (or replies are restricted): the account itself is fine.
    name: '403 reply target deleted or not visible',
    matches: (e) => e.status === 403 && says(/reply to|replying/i)(e),
    code: 'upstream_unknown',
    retryable: false,
    message: 'X refused the reply: the post it answers was deleted or is no longer visible.',
  },
  { name: '403 client not enrolled (client-forbidden)', matches: (e) => e.status === 403 && (e.type === 'client-forbidden' || e.reason === 'client-not-enrolled'), code: 'permission_revoked', retryable: false },
  { name: '403 not permitted (scope missing, account locked or suspended)', matches: status(403), code: 'permission_revoked', retryable: false },
  {
    name: '400 text too long',
    matches: badRequest(/text (is )?too long/i),
    code: 'upstream_unknown',
    retryable: false,
    message: "The text is over X's 280-character limit (links count 23, most non-Latin characters and emojis count 2).",
  },
  { name: '413 payload too large', matches: status(413), code: 'media_too_large', retryable: false },
  { name: '415 unsupported media type', matches: status(415), code: 'media_unsupported_format', retryable: false },
  { name: '400 media file too large', matches: badRequest(/too large|too big|exceeds?|file ?size/i), code: 'media_too_large', retryable: false },
  {
    name: '400 unsupported media type or format',
    matches: badRequest(/unsupported|not supported|invalid (media|file|image|video)|media_type|media type|InvalidMedia/i),
    code: 'media_unsupported_format',
    retryable: false,
  },
  { name: '408 / 5xx server side', matches: (e) => e.status === 408 || e.status >= 500, code: 'upstream_5xx', retryable: true },
  { name: 'anything else (undocumented)', matches: () => true, code: 'upstream_unknown', retryable: false },
];

/**
 * The token endpoint (RFC 6749 5.2). X answers `invalid_request` "Value passed for the authorization code was
 * invalid." for a bad or used code and "Value passed for the token was invalid." for a dead refresh token: the
 * user must connect again. A refused client (`unauthorized_client`, "Missing valid authorization header") is our
 * configuration.
 */
export const X_OAUTH_ERROR_TABLE: readonly ErrorRow<XErrorInfo>[] = [
  { name: 'no answer or 5xx server side', matches: (e) => e.status === 0 || e.status >= 500, code: 'upstream_5xx', retryable: true },
  {
    name: 'invalid_grant, or an invalid, used or expired code or refresh token',
    matches: (e) => e.status < 500 && (e.type === 'invalid_grant' || /authorization code|token was invalid|expired|revoked/i.test(e.text)),
    code: 'token_expired',
    retryable: false,
  },
  { name: 'access_denied by the user', matches: (e) => e.type === 'access_denied', code: 'permission_revoked', retryable: false },
  { name: '429 throttled (15-minute window)', matches: status(429), code: 'upstream_5xx', retryable: true },
  { name: 'unauthorized_client, invalid_client and anything else', matches: () => true, code: 'upstream_unknown', retryable: false },
];

/** Reads an answer into the fields the tables match on. */
export function xErrorInfo(httpStatus: number, body: string, headers: Headers = new Headers(), now = 0): XErrorInfo {
  const dailyLimitUsed = ['x-user-limit-24hour-remaining', 'x-app-limit-24hour-remaining'].some((h) => headers.get(h)?.trim() === '0');
  const resetInMs = resetIn(headers, now);
  const o = jsonObject(body);
  // Not JSON (an HTML page from the edge): match on the raw text.
  if (!o) return { status: httpStatus, type: '', title: '', text: body, reason: '', dailyLimitUsed, resetInMs };
  const first = list(o.errors).find(isRecord) ?? {};
  const problemType = str(o.type) ?? str(first.type) ?? '';
  return {
    status: httpStatus,
    type: str(o.error) ?? (problemType === 'about:blank' ? problemType : (problemType.split('/').pop() ?? '')),
    title: str(o.title) ?? str(first.title) ?? '',
    text: str(o.detail) ?? str(o.error_description) ?? str(first.detail) ?? str(first.message) ?? str(o.message) ?? '',
    reason: str(o.reason) ?? str(obj(first).reason) ?? '',
    dailyLimitUsed,
    resetInMs,
  };
}

/** `x-rate-limit-reset` (epoch seconds, the end of the 15-minute window) as ms from `now`; null when absent. */
function resetIn(headers: Headers, now: number): number | null {
  const raw = headers.get('x-rate-limit-reset')?.trim();
  if (!raw || !/^\d+$/.test(raw)) return null;
  return Math.max(0, Number(raw) * 1000 - now);
}

export const X_NETWORK_FAILURE: NetworkFailure = failure('upstream_5xx', true, 'X did not answer in time or the connection failed. The job is retried automatically.');

/** Media X could not process (`processing_info.state: failed`): almost always its format or encoding. */
export function processingFailed(message: string | null): NetworkFailure {
  if (message !== null && /too (large|long|big)|exceed|duration/i.test(message)) {
    return failure('media_too_large', false, "X could not process the media: it is over X's size or duration limits (video: 512 MB, 140 seconds).");
  }
  return failure('media_unsupported_format', false, 'X could not process the media file. Use JPEG, PNG, GIF or WEBP for photos and MP4 (H.264, AAC) for video.');
}
