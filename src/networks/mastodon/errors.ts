import type { NetworkFailure } from '../adapter.js';
import { type ErrorRow, failure } from '../kit/failure.js';
import { jsonObject, str } from '../kit/json.js';

/**
 * A Mastodon failure as the tables see it. The REST API answers `{"error": "…"}` (docs: entities/Error); the
 * OAuth endpoints answer RFC 6749's `{error, error_description}`. The texts are matched, never returned.
 */
export interface MastodonErrorInfo {
  /** HTTP status; 0 when no answer came. */
  status: number;
  /** The outbound guard refused the address before connecting (the user named a private or local host). */
  blocked: boolean;
  /** The body's `error` (a sentence on the REST API, an RFC 6749 code on /oauth/token), or the raw text. */
  error: string;
  /** `error_description` when present, else ''. */
  description: string;
  /** Milliseconds until `X-RateLimit-Reset` (docs: api/rate-limits), or null when absent or unreadable. */
  resetInMs: number | null;
}

/** A 429 whose limit resets within this long is retried; the default retry schedule spans a few minutes. */
export const NEAR_RESET_MS = 5 * 60_000;

const status = (...codes: number[]) => (e: MastodonErrorInfo) => codes.includes(e.status);
const says = (code: number, re: RegExp) => (e: MastodonErrorInfo) => e.status === code && re.test(`${e.error} ${e.description}`);

/** Every call goes to a host the user named, through the outbound guard; both tables start with these. */
const BLOCKED: ErrorRow<MastodonErrorInfo> = {
  name: 'address refused by the outbound guard (private or local host)',
  matches: (e) => e.blocked,
  code: 'upstream_unknown',
  retryable: false,
  message: 'The Mastodon server address is not allowed: it must be a public https address.',
};
const NO_ANSWER: ErrorRow<MastodonErrorInfo> = { name: 'no answer (network error or timeout)', matches: status(0), code: 'upstream_5xx', retryable: true };

/**
 * Spec 7.4 for the Mastodon REST API (`/api/v1/*`, `/api/v2/*`), first match wins. Sources: the documentation's
 * entities/Error (401 invalid token; 403 scope, disabled, unconfirmed or unapproved login; 422 RecordInvalid;
 * 429; 503), methods/statuses and methods/media (422 bodies), api/rate-limits, and Mastodon's own validation
 * texts (PostStatusService, MediaAttachment, StatusLengthValidator), since the docs give 422 texts only by example.
 */
export const MASTODON_ERROR_TABLE: readonly ErrorRow<MastodonErrorInfo>[] = [
  BLOCKED,
  NO_ANSWER,
  // "The access token is invalid" / "was revoked" / "expired": Mastodon tokens never expire on their own, so a
  // 401 means the user or the server revoked it; only a new authorization helps.
  { name: '401 token invalid or revoked', matches: status(401), code: 'token_expired', retryable: false },
  // "This action is outside the authorized scopes", "Your login is currently disabled", "… missing a confirmed
  // e-mail address", "… pending approval": the user (or a moderator) must act, then reconnect.
  { name: '403 scope missing, or login disabled, unconfirmed or unapproved', matches: status(403), code: 'permission_revoked', retryable: false },
  // nginx in front of Mastodon refuses bodies over client_max_body_size before Rails sees them.
  { name: '413 upload over the proxy body limit', matches: status(413), code: 'media_too_large', retryable: false },
  {
    name: '422 text over the server character limit',
    matches: says(422, /character limit/i),
    code: 'upstream_unknown',
    retryable: false,
    message: 'The text is longer than this Mastodon server allows (links count as 23 characters).',
  },
  // "Cannot attach files that have not finished processing. Try again in a moment!"
  { name: '422 media not processed yet', matches: says(422, /not finished processing/i), code: 'upstream_5xx', retryable: true },
  // "Validation failed: File content type is invalid, File is invalid"
  { name: '422 media type refused', matches: says(422, /content type|unsupported|not supported/i), code: 'media_unsupported_format', retryable: false },
  // "Validation failed: File file size must be less than 16 MB"
  { name: '422 media over the size limit', matches: says(422, /file size|too (large|big)|must be less than/i), code: 'media_too_large', retryable: false },
  {
    // "Cannot attach more than 4 files", "Cannot attach a video to a post that already contains images"
    name: '422 too many attachments, or a video with other media',
    matches: says(422, /cannot attach (more than|a video)/i),
    code: 'upstream_unknown',
    retryable: false,
    message: 'This Mastodon server refused the combination of media: a post takes a few images, or one video alone.',
  },
  {
    name: '429 rate limit that resets within minutes',
    matches: (e) => e.status === 429 && e.resetInMs !== null && e.resetInMs <= NEAR_RESET_MS,
    code: 'quota_exceeded',
    retryable: true,
    message: "The account hit the Mastodon server's rate limit, which resets within minutes; the job is retried.",
  },
  {
    name: '429 rate limit that resets later (or says not when)',
    matches: status(429),
    code: 'quota_exceeded',
    retryable: false,
    message: "The account reached the Mastodon server's rate limit; it resets later. Publish again after a while.",
  },
  // 503 "Remote data could not be fetched" / "There was a temporary problem serving your request".
  { name: '408 / 5xx server side', matches: (e) => e.status === 408 || e.status >= 500, code: 'upstream_5xx', retryable: true },
];

/**
 * `POST /api/v1/apps` and `POST /oauth/token` (docs: methods/apps, methods/oauth; RFC 6749 5.2). A refused code
 * means the user must authorize again; an unknown client means the server forgot this service's registration
 * (servers before 4.3 removed unused apps), which a new registration fixes.
 */
export const MASTODON_OAUTH_ERROR_TABLE: readonly ErrorRow<MastodonErrorInfo>[] = [
  BLOCKED,
  NO_ANSWER,
  {
    name: 'invalid_grant: code invalid, expired, used or for another redirect',
    matches: (e) => e.status < 500 && e.error === 'invalid_grant',
    code: 'token_expired',
    retryable: false,
  },
  { name: 'access_denied by the user', matches: (e) => e.error === 'access_denied', code: 'permission_revoked', retryable: false },
  {
    name: 'invalid_client: the server no longer knows this registration',
    matches: (e) => e.error === 'invalid_client',
    code: 'upstream_unknown',
    retryable: false,
    message: 'The Mastodon server no longer recognizes this service. Connect the account again.',
  },
  {
    name: '404: not a Mastodon server',
    matches: status(404),
    code: 'upstream_unknown',
    retryable: false,
    message: 'That address does not answer as a Mastodon server. Check the server name.',
  },
  { name: '429 throttled', matches: status(429), code: 'quota_exceeded', retryable: false },
  { name: '5xx server side', matches: (e) => e.status >= 500, code: 'upstream_5xx', retryable: true },
  { name: 'invalid_scope, invalid_request, a 422 and anything else', matches: () => true, code: 'upstream_unknown', retryable: false },
];

/** Reads `X-RateLimit-Reset` (an ISO 8601 timestamp in Mastodon; epoch seconds tolerated) as ms from `now`. */
function resetIn(headers: Headers, now: number): number | null {
  const raw = headers.get('x-ratelimit-reset');
  if (!raw) return null;
  const at = /^\d+(\.\d+)?$/.test(raw) ? Number(raw) * 1000 : Date.parse(raw);
  return Number.isFinite(at) ? Math.max(0, at - now) : null;
}

/** Reads an answer into the fields the tables match on. */
export function mastodonErrorInfo(httpStatus: number, body: string, headers: Headers, now: number, blocked = false): MastodonErrorInfo {
  const o = jsonObject(body);
  return {
    status: httpStatus,
    blocked,
    // Not JSON (an HTML page from a proxy): match on the raw text.
    error: (o ? str(o.error) : null) ?? body,
    description: (o ? str(o.error_description) : null) ?? '',
    resetInMs: resetIn(headers, now),
  };
}

/** A media attachment the server could not process (GET /api/v1/media/:id answered 422). */
export const MASTODON_PROCESSING_FAILED: NetworkFailure = failure(
  'media_unsupported_format',
  false,
  'The Mastodon server could not process the media file. Use JPEG, PNG or GIF for photos and MP4 for video.',
);
