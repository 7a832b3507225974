import { JOB_ERROR_MESSAGES, type JobErrorCode } from '../../vocabulary/job-errors.js';
import type { NetworkFailure } from '../adapter.js';

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

interface ErrorRow {
  /** What the row stands for, for tests and logs. */
  name: string;
  when(e: GoogleError): boolean;
  code: JobErrorCode;
  retryable: boolean;
  /** Our own sentence when the generic one of the code would mislead. */
  message?: string;
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
export const YOUTUBE_ERROR_TABLE: readonly ErrorRow[] = [
  { name: 'no answer (network error or timeout)', when: (e) => e.status === 0, code: 'upstream_5xx', retryable: true },
  // The refresh token was revoked, or died after 7 days while the app is in "Testing" consent mode: re-auth.
  { name: 'token endpoint invalid_grant', when: (e) => e.oauthError === 'invalid_grant', code: 'token_expired', retryable: false },
  {
    name: 'token endpoint refuses our client',
    when: (e) => e.oauthError !== null && e.status < 500,
    code: 'upstream_unknown',
    retryable: false,
    message: YOUTUBE_MESSAGES.clientConfig,
  },
  { name: 'youtubeSignupRequired', when: hasReason('youtubeSignupRequired'), code: 'permission_revoked', retryable: false, message: YOUTUBE_MESSAGES.noChannel },
  {
    name: 'permission or account gone',
    when: hasReason('insufficientPermissions', 'forbidden', 'accountDelegationForbidden', 'authenticatedUserAccountClosed', 'authenticatedUserAccountSuspended'),
    code: 'permission_revoked',
    retryable: false,
  },
  { name: 'daily quota or upload cap', when: hasReason('quotaExceeded', 'uploadLimitExceeded', 'dailyLimitExceeded'), code: 'quota_exceeded', retryable: false },
  { name: 'rate limit (back off)', when: hasReason('rateLimitExceeded', 'userRateLimitExceeded'), code: 'upstream_5xx', retryable: true },
  {
    // Spec 7.4 has no "bad metadata" code; upstream_unknown with a sentence that says what to fix.
    name: 'invalid metadata',
    when: hasReason('invalidTitle', 'invalidDescription', 'invalidTags', 'invalidCategoryId', 'invalidPublishAt', 'invalidVideoMetadata'),
    code: 'upstream_unknown',
    retryable: false,
    message: YOUTUBE_MESSAGES.metadata,
  },
  { name: 'media missing or of an unsupported type', when: (e) => hasReason('mediaBodyRequired', 'badContent')(e) || e.status === 415, code: 'media_unsupported_format', retryable: false },
  { name: 'file too large', when: (e) => e.status === 413, code: 'media_too_large', retryable: false },
  { name: '401 (authError)', when: (e) => e.status === 401, code: 'token_expired', retryable: false },
  { name: '408 / 429 / 5xx', when: (e) => e.status === 408 || e.status === 429 || e.status >= 500, code: 'upstream_5xx', retryable: true },
  { name: 'anything else', when: () => true, code: 'upstream_unknown', retryable: false },
];

/** Sorts a failed answer into spec 7.4 (never returns the network's text). */
export function classifyYoutubeError(e: GoogleError): NetworkFailure {
  const row = YOUTUBE_ERROR_TABLE.find((r) => r.when(e)) ?? { code: 'upstream_unknown' as const, retryable: false, message: undefined };
  return { ok: false, code: row.code, retryable: row.retryable, message: row.message ?? JOB_ERROR_MESSAGES[row.code] };
}

/** Reads a Google error body (Data API `{error: {errors: [{reason}]}}` or OAuth `{error: "invalid_grant"}`). */
export function parseGoogleError(status: number, body: string): GoogleError {
  const e: GoogleError = { status, reasons: [], oauthError: null };
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return e;
  }
  if (typeof json !== 'object' || json === null) return e;
  const err = (json as { error?: unknown }).error;
  if (typeof err === 'string') e.oauthError = err;
  else if (typeof err === 'object' && err !== null) {
    const list = (err as { errors?: unknown }).errors;
    if (Array.isArray(list)) {
      for (const item of list) {
        const reason = (item as { reason?: unknown } | null)?.reason;
        if (typeof reason === 'string') e.reasons.push(reason);
      }
    }
  }
  return e;
}

/** A failure of a given code with our generic sentence or a specific one. */
export function youtubeFailure(code: JobErrorCode, retryable = false, message: string = JOB_ERROR_MESSAGES[code]): NetworkFailure {
  return { ok: false, code, retryable, message };
}
