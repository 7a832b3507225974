import type { NetworkFailure } from '../adapter.js';
import { type Classified, classify, type ErrorRow, failure } from '../kit/failure.js';
import { jsonObject, str } from '../kit/json.js';
import { MAX_ANNOUNCED_WAIT_MS } from '../../vocabulary/job-errors.js';

/**
 * A failed XRPC answer as the tables read it. Every atproto service answers errors as `{error, message}`
 * (packages/xrpc-server/src/errors.ts in bluesky-social/atproto): `error` is a name from the method's lexicon
 * (ExpiredToken, RecordNotFound…) or, without one, the HTTP status's name (AuthenticationRequired for 401,
 * PayloadTooLarge for 413, RateLimitExceeded for 429, InternalServerError…). The texts are matched, never returned.
 */
export interface XrpcErrorInfo {
  /** HTTP status; 0 when no answer came (refused, reset, timed out). */
  status: number;
  /** The XRPC error name; '' when the body had none (a proxy's HTML page). */
  error: string;
  /** The body's `message`, or the raw text when it is not JSON. */
  message: string;
  /** Epoch ms from the `ratelimit-reset` header (epoch seconds), when present. */
  resetAt: number | null;
  /** Ms from now until `resetAt`; null when not given. */
  resetInMs: number | null;
}

/** Reads status, body and headers into the fields the tables match on; `now` places the reset. */
export function xrpcErrorInfo(status: number, body: string, headers: Headers = new Headers(), now = 0): XrpcErrorInfo {
  const o = jsonObject(body);
  const reset = Number(headers.get('ratelimit-reset'));
  const resetAt = Number.isFinite(reset) && reset > 0 ? reset * 1000 : null;
  return {
    status,
    error: str(o?.error) ?? '',
    message: o ? (str(o.message) ?? '') : body,
    resetAt,
    resetInMs: resetAt === null ? null : Math.max(0, resetAt - now),
  };
}

const rateLimited = (e: XrpcErrorInfo) => e.status === 429 || e.error === 'RateLimitExceeded';

const named =
  (...names: string[]) =>
  (e: XrpcErrorInfo) =>
    names.includes(e.error);

const RATE_LIMIT_ROW = 'RateLimitExceeded (429)';
/** Our name for a call the outbound-address guard refused before connecting (see NetworkDeps.userHostFetch). */
export const OUTBOUND_BLOCKED = 'OutboundBlocked';

/** The user named a host this service may not reach: retrying cannot help. */
const BLOCKED_ROW: ErrorRow<XrpcErrorInfo> = {
  name: 'address refused by the outbound guard (private or local host)',
  matches: (e) => e.error === OUTBOUND_BLOCKED,
  code: 'upstream_unknown',
  retryable: false,
  message: 'The Bluesky service address points to a private or local network, which this service does not reach.',
};

/** The names a refused session token comes with: an expired or unverifiable JWT (400), or none at all (401). */
const TOKEN_REFUSED = ['ExpiredToken', 'InvalidToken', 'AuthRequired', 'AuthenticationRequired', 'AuthMissing'];

/** The account's PDS refused its session token: the sign-in is gone, and the connection with it. */
const PDS_TOKEN_ROW: ErrorRow<XrpcErrorInfo> = {
  name: 'ExpiredToken / InvalidToken / AuthRequired (401)',
  matches: (e) => named(...TOKEN_REFUSED)(e) || e.status === 401,
  code: 'token_expired',
  retryable: false,
};

/**
 * The video service refused a service-auth token. That token was just issued by the account's PDS, which
 * accepted the session to issue it, so the sign-in is fine: the video service (its configuration, its view of
 * the token's audience or expiry) failed this post, and the connection is left alone.
 */
const VIDEO_TOKEN_ROW: ErrorRow<XrpcErrorInfo> = {
  name: 'video service refused its service-auth token',
  matches: PDS_TOKEN_ROW.matches,
  code: 'upstream_unknown',
  retryable: false,
  message: "Bluesky's video service did not accept the upload authorization, so the video was not posted. The connection is not affected: publish it again later.",
};

/**
 * Spec 7.4 for the account's data server (PDS) and Bluesky's video service, first match wins. Sources: the
 * lexicons of com.atproto.server.refreshSession, com.atproto.repo.*, app.bsky.video.* (bluesky-social/atproto),
 * the reference PDS (auth-verifier.ts: ExpiredToken/InvalidToken on a bad JWT, AccountTakedown and
 * AccountDeactivated as 401; blob/transactor.ts: InvalidMimeType, BlobNotFound; xrpc-server: PayloadTooLarge
 * over the upload limit, RateLimitExceeded with RateLimit-* headers), docs.bsky.app's rate-limit guide, and the
 * video service's refusals as Bluesky's own app words them (social-app src/state/queries/video/video.ts).
 *
 * Where the docs are silent: `BlobTooLarge` is not in the official lexicons (other PDS implementations use it);
 * a blob over a lexicon's `maxSize` or outside its `accept` list comes back from record validation as a plain
 * 400 InvalidRequest, so those rows also read the message.
 */
export const BLUESKY_ERROR_TABLE: readonly ErrorRow<XrpcErrorInfo>[] = [
  BLOCKED_ROW,
  { name: 'no answer (network error or timeout)', matches: (e) => e.status === 0, code: 'upstream_5xx', retryable: true },
  // Sent as 401 AuthRequired with these names, so before the token row.
  {
    name: 'AccountTakedown / AccountDeactivated',
    matches: named('AccountTakedown', 'AccountDeactivated'),
    code: 'permission_revoked',
    retryable: false,
    message: 'The Bluesky account is taken down or deactivated, so nothing can be posted on it.',
  },
  PDS_TOKEN_ROW,
  // Per-account write points (5,000 an hour, 35,000 a day) or the per-IP request budget; RateLimit-Reset says when.
  // A reset within the hour is waited for (the retry comes after it); a later one fails the job, saying when.
  {
    name: 'RateLimitExceeded (429) that resets within the hour',
    matches: (e) => rateLimited(e) && e.resetInMs !== null && e.resetInMs <= MAX_ANNOUNCED_WAIT_MS,
    code: 'quota_exceeded',
    retryable: true,
    message: "Bluesky's rate limit for this account was reached; the job is retried once it resets.",
  },
  { name: RATE_LIMIT_ROW, matches: rateLimited, code: 'quota_exceeded', retryable: false },
  // Before the daily-limit row: a refused account's limits answer carries our VideoUploadLimit name too.
  {
    name: 'video upload not allowed for the account (unconfirmed e-mail, too new)',
    matches: (e) => /unconfirmed_email|not allowed to upload|not old enough|uploading is disabled/i.test(`${e.error} ${e.message}`),
    code: 'upstream_unknown',
    retryable: false,
    message: 'Bluesky does not let this account upload videos yet (its e-mail must be verified, and new accounts wait). Try again later.',
  },
  {
    name: 'video daily limit reached (video service)',
    matches: (e) => /exceeded daily upload|daily (upload )?limit|VideoUploadLimit/i.test(`${e.error} ${e.message}`),
    code: 'quota_exceeded',
    retryable: false,
    message: "The Bluesky account reached its daily video upload limit; it resets within a day.",
  },
  {
    name: 'BlobTooLarge / PayloadTooLarge (413)',
    matches: (e) => e.status === 413 || named('BlobTooLarge', 'PayloadTooLarge')(e) || (e.status === 400 && /blob|image|video/i.test(e.message) && /too (big|large)/i.test(e.message)),
    code: 'media_too_large',
    retryable: false,
  },
  {
    name: 'InvalidMimeType (415)',
    matches: (e) => e.status === 415 || e.error === 'InvalidMimeType' || (e.status === 400 && /mime ?type/i.test(e.message)),
    code: 'media_unsupported_format',
    retryable: false,
  },
  {
    name: 'BlobNotFound (the upload expired before the post)',
    matches: named('BlobNotFound'),
    code: 'upstream_unknown',
    retryable: false,
    message: 'Bluesky discarded the uploaded media before the post was made. Publish it again.',
  },
  {
    name: 'text over the post limit',
    matches: (e) => e.status === 400 && /graphemes|text.*(too long|maxLength)/i.test(e.message),
    code: 'upstream_unknown',
    retryable: false,
    message: "The text is over Bluesky's limit of 300 characters (graphemes) per post.",
  },
  { name: '5xx server side', matches: (e) => e.status >= 500, code: 'upstream_5xx', retryable: true },
];

/**
 * The calls on the video service (app.bsky.video.*): the same rows, except that a refused token fails the post
 * instead of expiring the connection; only the account's PDS refusing its own session means that.
 */
export const BLUESKY_VIDEO_ERROR_TABLE: readonly ErrorRow<XrpcErrorInfo>[] = BLUESKY_ERROR_TABLE.map((row) => (row === PDS_TOKEN_ROW ? VIDEO_TOKEN_ROW : row));

/**
 * Signing in (com.atproto.server.createSession) and renewing (refreshSession): a refused password or refresh
 * token means the user must sign in again with an app password (token_expired, never retried).
 */
export const BLUESKY_SESSION_ERROR_TABLE: readonly ErrorRow<XrpcErrorInfo>[] = [
  BLOCKED_ROW,
  { name: 'no answer (network error or timeout)', matches: (e) => e.status === 0, code: 'upstream_5xx', retryable: true },
  {
    name: 'AccountTakedown / AccountDeactivated',
    matches: named('AccountTakedown', 'AccountDeactivated'),
    code: 'permission_revoked',
    retryable: false,
    message: 'The Bluesky account is taken down or deactivated.',
  },
  // The account password with e-mail 2FA was given instead of an app password.
  {
    name: 'AuthFactorTokenRequired (account password with 2FA)',
    matches: named('AuthFactorTokenRequired'),
    code: 'token_expired',
    retryable: false,
    message: 'Bluesky asked for a second factor: sign in with an app password (Settings → Privacy and security → App passwords), not the account password.',
  },
  {
    name: 'ExpiredToken / InvalidToken (refresh token expired or revoked)',
    matches: named('ExpiredToken', 'InvalidToken'),
    code: 'token_expired',
    retryable: false,
    message: 'The Bluesky session expired or was revoked. Sign in again with an app password.',
  },
  {
    name: 'AuthRequired (401: wrong identifier or app password)',
    matches: (e) => e.status === 401 || named('AuthRequired', 'AuthenticationRequired', 'AuthMissing')(e),
    code: 'token_expired',
    retryable: false,
    message: 'Bluesky did not accept the handle (or e-mail) and app password.',
  },
  {
    name: 'RateLimitExceeded (429: 30 sign-ins per 5 minutes, 300 a day)',
    matches: rateLimited,
    code: 'quota_exceeded',
    retryable: false,
    message: 'Bluesky limits sign-ins per account (30 per 5 minutes, 300 a day). Try again later.',
  },
  { name: '5xx server side', matches: (e) => e.status >= 500, code: 'upstream_5xx', retryable: true },
];

/** The same table under the name the other networks give their token-side table (Bluesky's session is not OAuth). */
export const BLUESKY_OAUTH_ERROR_TABLE = BLUESKY_SESSION_ERROR_TABLE;

/** Sorts a failure with `table`; a rate limit says when it resets, from the RateLimit-Reset header. */
export function classifyXrpc(table: readonly ErrorRow<XrpcErrorInfo>[], e: XrpcErrorInfo): Classified {
  const sorted = classify(table, e);
  if (sorted.row === RATE_LIMIT_ROW && e.resetAt !== null) {
    const at = new Date(e.resetAt).toISOString().replace(/\.\d{3}Z$/, 'Z');
    return { ...sorted, failure: { ...sorted.failure, message: `Bluesky's rate limit for this account was reached; it resets at ${at}.` } };
  }
  return sorted;
}

/** The video service could not process the video (job state JOB_STATE_FAILED without a usable blob). */
export const BLUESKY_VIDEO_FAILED: NetworkFailure = failure(
  'media_unsupported_format',
  false,
  'Bluesky could not process the video. Use an MP4 (H.264) video of at most 100 MB.',
);
