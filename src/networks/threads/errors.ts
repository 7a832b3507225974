import type { NetworkFailure } from '../adapter.js';
import { type Classified, classify, type ErrorRow, failure, rowFor } from '../kit/failure.js';
import { type GraphError, parseGraphError } from '../meta-graph/errors.js';

const codeIs = (...codes: number[]) => (e: GraphError) => e.code !== null && codes.includes(e.code);
const eitherCodeIs = (...codes: number[]) => (e: GraphError) => codes.some((c) => c === e.code || c === e.subcode);
const says = (re: RegExp) => (e: GraphError) => re.test(e.message);

/**
 * Threads' failures in the order they are tried (the first match wins). Sources: the Threads and Instagram
 * Graph API error references and /work/shared/notes/networks.md. Restriction and quota rows come before the
 * generic permission and throttling rows because Meta sends them with those generic codes too.
 */
export const THREADS_ERROR_TABLE: readonly ErrorRow<GraphError>[] = [
  { name: 'no answer (network error or timeout)', matches: (e) => e.status === 0, code: 'upstream_5xx', retryable: true },
  { name: 'access token invalid or expired (190)', matches: codeIs(190), code: 'token_expired', retryable: false },
  { name: 'account restricted (2207051, 4279013)', matches: eitherCodeIs(2207051, 4279013), code: 'permission_revoked', retryable: false },
  {
    name: 'publishing quota used up (2207042)',
    matches: (e) => e.subcode === 2207042 || says(/publishing limit|quota|maximum number of (posts|replies)/i)(e),
    code: 'quota_exceeded',
    retryable: false,
  },
  { name: 'permission missing (10, 200-299)', matches: (e) => e.code === 10 || (e.code !== null && e.code >= 200 && e.code <= 299), code: 'permission_revoked', retryable: false },
  { name: 'throttled (4, 17, 32, 613)', matches: codeIs(4, 17, 32, 613), code: 'upstream_5xx', retryable: true },
  { name: 'media could not be fetched', matches: says(/could not be fetched|FAILED_DOWNLOADING/i), code: 'media_unsupported_format', retryable: false },
  { name: 'media too large (2207004)', matches: (e) => e.subcode === 2207004 || says(/too large/i)(e), code: 'media_too_large', retryable: false },
  {
    name: 'text over 500 characters',
    matches: says(/at most 500 characters|text.*too long/i),
    code: 'upstream_unknown',
    retryable: false,
    message: "The text is over Threads' 500-character limit (emojis count as several characters).",
  },
  { name: 'media not ready yet (9007, 2207027)', matches: eitherCodeIs(9007, 2207027), code: 'upstream_5xx', retryable: true },
  { name: 'transient Graph error (is_transient, 1, 2)', matches: (e) => e.transient || e.code === 1 || e.code === 2, code: 'upstream_5xx', retryable: true },
  { name: 'HTTP 5xx', matches: (e) => e.status >= 500, code: 'upstream_5xx', retryable: true },
  { name: 'HTTP 429', matches: (e) => e.status === 429, code: 'upstream_5xx', retryable: true },
  { name: 'HTTP 401', matches: (e) => e.status === 401, code: 'token_expired', retryable: false },
  { name: 'HTTP 403', matches: (e) => e.status === 403, code: 'permission_revoked', retryable: false },
];

/** The row that sorts a failure (exported so tests can name the row they exercise). */
export function threadsErrorRow(e: GraphError): ErrorRow<GraphError> {
  return rowFor(THREADS_ERROR_TABLE, e);
}

/**
 * Sorts a failed call into one of our codes, with our own sentence (house style 4). A 2xx answer that is not a
 * readable Graph object counts as a bad gateway: whether Threads acted is unknown, so it is looked up, not refused.
 */
export function classifyThreadsError(e: GraphError): Classified {
  return classify(THREADS_ERROR_TABLE, e.status >= 200 && e.status < 300 ? { ...e, status: 502 } : e);
}

/**
 * A container that ended in status ERROR. Its `error_message` is one of Threads' documented values
 * (FAILED_DOWNLOADING_VIDEO, FAILED_PROCESSING_*, INVALID_*, UNKNOWN) or free text.
 */
export function classifyContainerError(errorMessage: string | null): NetworkFailure {
  const text = errorMessage ?? '';
  if (/^(FAILED_|INVALID_)/.test(text) || /could not be fetched/i.test(text)) return failure('media_unsupported_format');
  return classifyThreadsError(parseGraphError(400, text)).failure;
}
