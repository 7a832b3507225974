import type { NetworkFailure } from '../adapter.js';
import { type Classified, classify, type ErrorRow, failure } from '../kit/failure.js';
import type { GraphError } from '../meta-graph/errors.js';

const code = (e: GraphError, ...codes: number[]) => e.code !== null && codes.includes(e.code);
const subcode = (e: GraphError, ...codes: number[]) => e.subcode !== null && codes.includes(e.subcode);

/**
 * Spec 7.4 for Facebook Pages, first match wins. Subcodes come before the codes because Facebook nests them
 * (1390008 "posting too fast" arrives under 368 "blocked", which is otherwise a block of the Page).
 * Sources: Graph API "Handling Errors", Pages API and Video API error-code pages, /work/shared/notes/networks.md.
 */
export const FACEBOOK_ERROR_TABLE: readonly ErrorRow<GraphError>[] = [
  { name: 'page_publishing_authorization', matches: (e) => subcode(e, 1404078), code: 'token_expired', retryable: false, message: 'Facebook asks the Page owner to authorize publishing again. Reconnect the Page.' },
  { name: 'posting_too_fast', matches: (e) => subcode(e, 1390008), code: 'upstream_5xx', retryable: true, message: 'Facebook asked to slow down posting on this Page; the post is retried later.' },
  { name: 'duplicate', matches: (e) => code(e, 506) || subcode(e, 1366051), code: 'upstream_unknown', retryable: false, message: 'Facebook refused the post as a duplicate of a recent post on this Page.' },
  { name: 'video_too_large', matches: (e) => subcode(e, 1363023), code: 'media_too_large', retryable: false, message: 'Facebook refused the video as too large.' },
  { name: 'photo_rejected', matches: (e) => subcode(e, 1366046), code: 'media_unsupported_format', retryable: false, message: 'Facebook refused the photo. Use a JPEG or PNG under 4 MB.' },
  { name: 'media_invalid', matches: (e) => code(e, 324, 352) || subcode(e, 2069019, 1363022), code: 'media_unsupported_format', retryable: false },
  { name: 'upload_not_allowed', matches: (e) => subcode(e, 1363042), code: 'permission_revoked', retryable: false },
  { name: 'token_invalid', matches: (e) => code(e, 102, 190), code: 'token_expired', retryable: false },
  { name: 'token_revoked_text', matches: (e) => e.raw.includes('REVOKED_ACCESS_TOKEN'), code: 'token_expired', retryable: false },
  { name: 'permission_missing', matches: (e) => code(e, 10) || (e.code !== null && e.code >= 200 && e.code <= 299), code: 'permission_revoked', retryable: false },
  { name: 'blocked', matches: (e) => code(e, 368), code: 'permission_revoked', retryable: false, message: 'Facebook temporarily blocked this Page from posting. Check the Page on Facebook, then reconnect it.' },
  { name: 'throttled', matches: (e) => code(e, 4, 17, 32, 613, 80001), code: 'upstream_5xx', retryable: true, message: 'Facebook is rate-limiting this app or Page; the post is retried later.' },
  { name: 'feed_limit', matches: (e) => code(e, 341), code: 'quota_exceeded', retryable: false },
  { name: 'video_upload_problem', matches: (e) => code(e, 6000), code: 'upstream_5xx', retryable: true },
  { name: 'transient', matches: (e) => code(e, 1, 2) || e.transient, code: 'upstream_5xx', retryable: true },
  { name: 'http_429', matches: (e) => e.status === 429, code: 'upstream_5xx', retryable: true },
  { name: 'http_5xx', matches: (e) => e.status >= 500, code: 'upstream_5xx', retryable: true },
];

/** The row used when nothing above matches: an error nobody documented. */
export const FALLBACK_ROW_NAME = 'unknown';

export interface FacebookClassified extends Classified {
  /**
   * False when Facebook may have acted although it answered with an error (no answer, 5xx, codes 1/2,
   * `is_transient`): a publish then looks the post up before posting again. A refusal (4xx with a code) created nothing.
   */
  outcomeKnown: boolean;
}

/** No answer at all (refused connection, reset, our timeout): transient, and whether Facebook acted is unknown. */
export const UNREACHABLE: NetworkFailure = failure('upstream_5xx', true, 'Facebook could not be reached or did not answer in time; the post is retried later.');

/** Sorts one failed Graph response into our codes (spec 7.4). */
export function classifyFacebookError(e: GraphError): FacebookClassified {
  if (e.status === 0) return { row: 'unreachable', failure: UNREACHABLE, outcomeKnown: false };
  const outcomeKnown = e.status < 500 && e.envelope && !code(e, 1, 2) && !e.transient;
  return { ...classify(FACEBOOK_ERROR_TABLE, e, FALLBACK_ROW_NAME), outcomeKnown };
}
