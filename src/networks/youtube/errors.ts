import { type Classified, classify, type ErrorRow } from '../kit/failure.js';
import { isRecord, parseJson } from '../kit/json.js';

/**
 * A failed YouTube (Google) answer reduced to what the error table matches on. `status` is 0 when no answer came
 * (connection refused or dropped, timeout).
 */
export interface GoogleError {
  status: number;
  /** `error.errors[].reason` of a Data API error body (`quotaExceeded`, `authError`, …). */
  reasons: string[];
  /** The `error` string of an OAuth token-endpoint body (`invalid_grant`, …). */
  oauthError: string | null;
}

const hasReason = (...names: string[]) => (e: GoogleError) => e.reasons.some((r) => names.includes(r));

/** Messages of our own for cases the spec 7.4 vocabulary only approximates. */
export const YOUTUBE_MESSAGES = {
  noChannel: 'The Google account has no YouTube channel. Create the channel, then reconnect.',
  metadata: 'YouTube refused the video title, description, tags or category. Edit them and publish again.',
  clientConfig: 'YouTube refused this service’s OAuth client. The operator must check the YouTube client settings.',
  sessionGone: 'The YouTube upload session expired before the video was complete. Publish the content again.',
  fileChanged: 'The video file changed while it was being uploaded to YouTube. Publish the content again.',
  noVideo: 'A YouTube post needs exactly one video.',
  emptyFile: 'The video file is empty.',
  leaseLost: 'Another worker took this job over; this run stopped.',
} as const;

/**
 * Spec 7.4 for YouTube, first match wins. Reasons are checked before statuses because Google puts several
 * meanings under one status (403 is a quota, a rate limit or a missing permission depending on the reason).
 */
export const YOUTUBE_ERROR_TABLE: readonly ErrorRow<GoogleError>[] = [
  { name: 'no answer (network error or timeout)', matches: (e) => e.status === 0, code: 'upstream_5xx', retryable: true },
  // The refresh token was revoked, or died after 7 days while the app is in "Testing" consent mode: re-auth.
  { name: 'token endpoint invalid_grant', matches: (e) => e.oauthError === 'invalid_grant', code: 'token_expired', retryable: false },
  {
    name: 'token endpoint refuses our client',
    matches: (e) => e.oauthError !== null && e.status < 500,
    code: 'upstream_unknown',
    retryable: false,
    message: YOUTUBE_MESSAGES.clientConfig,
  },
  { name: 'youtubeSignupRequired', matches: hasReason('youtubeSignupRequired'), code: 'permission_revoked', retryable: false, message: YOUTUBE_MESSAGES.noChannel },
  {
    name: 'permission or account gone',
    matches: hasReason('insufficientPermissions', 'forbidden', 'accountDelegationForbidden', 'authenticatedUserAccountClosed', 'authenticatedUserAccountSuspended'),
    code: 'permission_revoked',
    retryable: false,
  },
  { name: 'daily quota or upload cap', matches: hasReason('quotaExceeded', 'uploadLimitExceeded', 'dailyLimitExceeded'), code: 'quota_exceeded', retryable: false },
  { name: 'rate limit (back off)', matches: hasReason('rateLimitExceeded', 'userRateLimitExceeded'), code: 'upstream_5xx', retryable: true },
  {
    // Spec 7.4 has no "bad metadata" code; upstream_unknown with a sentence that says what to fix.
    name: 'invalid metadata',
    matches: hasReason('invalidTitle', 'invalidDescription', 'invalidTags', 'invalidCategoryId', 'invalidPublishAt', 'invalidVideoMetadata'),
    code: 'upstream_unknown',
    retryable: false,
    message: YOUTUBE_MESSAGES.metadata,
  },
  { name: 'media missing or of an unsupported type', matches: (e) => hasReason('mediaBodyRequired', 'badContent')(e) || e.status === 415, code: 'media_unsupported_format', retryable: false },
  { name: 'file too large', matches: (e) => e.status === 413, code: 'media_too_large', retryable: false },
  { name: '401 (authError)', matches: (e) => e.status === 401, code: 'token_expired', retryable: false },
  { name: '408 / 429 / 5xx', matches: (e) => e.status === 408 || e.status === 429 || e.status >= 500, code: 'upstream_5xx', retryable: true },
  { name: 'anything else', matches: () => true, code: 'upstream_unknown', retryable: false },
];

/** Sorts a failed answer into spec 7.4 (never returns the network's text). */
export function classifyYoutubeError(e: GoogleError): Classified {
  return classify(YOUTUBE_ERROR_TABLE, e);
}

/** Reads a Google error body (Data API `{error: {errors: [{reason}]}}` or OAuth `{error: "invalid_grant"}`). */
export function parseGoogleError(status: number, body: string): GoogleError {
  const e: GoogleError = { status, reasons: [], oauthError: null };
  const json = parseJson(body);
  const err = isRecord(json) ? json.error : undefined;
  if (typeof err === 'string') e.oauthError = err;
  else if (isRecord(err) && Array.isArray(err.errors)) {
    for (const item of err.errors) if (isRecord(item) && typeof item.reason === 'string') e.reasons.push(item.reason);
  }
  return e;
}
