import type { NetworkFailure } from '../adapter.js';
import { type ErrorRow, failure } from '../kit/failure.js';
import { jsonObject } from '../kit/json.js';

/**
 * A LinkedIn failure as the adapter sees it. Rest.li answers `{status, code?, serviceErrorCode?, message}`
 * (e.g. `{"status":401,"serviceErrorCode":65600,"code":"INVALID_ACCESS_TOKEN",…}`); the OAuth token endpoint
 * answers RFC 6749's `{error, error_description}`. The texts are matched against, never returned (house style 4).
 */
export interface LinkedinErrorInfo {
  /** HTTP status. */
  status: number;
  /** Rest.li `code` (ACCESS_DENIED, NONEXISTENT_VERSION…) or the OAuth `error`; '' when absent. */
  code: string;
  /** The body's `message` / `error_description`, or the raw text when it is not JSON. */
  text: string;
}

const status = (...codes: number[]) => (e: LinkedinErrorInfo) => codes.includes(e.status);
const badRequest = (re: RegExp) => (e: LinkedinErrorInfo) => (e.status === 400 || e.status === 422) && re.test(e.text);

/**
 * Spec 7.4 for LinkedIn's REST API (`/rest/*`, `/v2/userinfo`, upload URLs), first match wins. Sources: the
 * Posts, Images and Videos API pages, LinkedIn's versioning guide (426 NONEXISTENT_VERSION) and Postiz's
 * LinkedIn error handling.
 *
 * Choice on 403: LinkedIn's 403 normally means a missing scope or page role (permission_revoked, the user must
 * reconnect), but its edge also answers 403 with "resource is forbidden" or "Service Unavailable" during
 * incidents, and Postiz retries those with success. We retry them as upstream_5xx: the retry schedule is
 * bounded, and wrongly expiring a healthy connection costs the user a reconnect, while a few wasted retries
 * of a real permission problem cost nothing visible.
 */
export const LINKEDIN_ERROR_TABLE: readonly ErrorRow<LinkedinErrorInfo>[] = [
  // 65600 invalid, 65601 revoked, 65602 expired: all need the member to authorize again.
  { name: '401 token expired, revoked or invalid', matches: status(401), code: 'token_expired', retryable: false },
  {
    name: '403 "resource is forbidden" / "Service Unavailable" (transient, Postiz retries)',
    matches: (e) => e.status === 403 && /resource is forbidden|service unavailable/i.test(e.text),
    code: 'upstream_5xx',
    retryable: true,
  },
  { name: '"Unable to obtain activity" (transient, Postiz retries)', matches: (e) => /unable to obtain activity/i.test(e.text), code: 'upstream_5xx', retryable: true },
  { name: '403 scope (w_member_social) or page role missing', matches: status(403), code: 'permission_revoked', retryable: false },
  // Daily application and member limits; they reset at midnight UTC, so the short retry schedule cannot help.
  { name: '429 daily app or member limit', matches: status(429), code: 'quota_exceeded', retryable: false },
  { name: '413 payload too large (upload URL)', matches: status(413), code: 'media_too_large', retryable: false },
  { name: '415 unsupported media type (upload URL)', matches: status(415), code: 'media_unsupported_format', retryable: false },
  { name: '400/422 file size over the limit', matches: badRequest(/too large|too big|exceed/i), code: 'media_too_large', retryable: false },
  {
    name: '400/422 unsupported media type or format',
    matches: badRequest(/unsupported (media|file|image|video|content|mime)|(format|type) (is )?not supported|invalid (media|file|image|video) ?(type|format)/i),
    code: 'media_unsupported_format',
    retryable: false,
  },
  // Our configured LinkedIn-Version was sunset: an operator must update LINKEDIN_API_VERSION; retrying is useless.
  {
    name: '426 NONEXISTENT_VERSION (configured API version sunset)',
    matches: status(426),
    code: 'upstream_unknown',
    retryable: false,
    message: 'LinkedIn no longer accepts the API version this service is configured with. The operator must update it.',
  },
  { name: '408 / 5xx server side', matches: (e) => e.status === 408 || e.status >= 500, code: 'upstream_5xx', retryable: true },
  { name: 'anything else (undocumented)', matches: () => true, code: 'upstream_unknown', retryable: false },
];

/**
 * The token endpoint (RFC 6749 5.2). A refused code means the member must go through the consent again
 * (token_expired); a refused client is our configuration (upstream_unknown).
 */
export const LINKEDIN_OAUTH_ERROR_TABLE: readonly ErrorRow<LinkedinErrorInfo>[] = [
  {
    name: 'invalid_grant or expired/used authorization code',
    matches: (e) => e.status < 500 && (e.code === 'invalid_grant' || /authorization code|expired|revoked/i.test(e.text)),
    code: 'token_expired',
    retryable: false,
  },
  { name: 'access_denied by the member', matches: (e) => e.code === 'access_denied', code: 'permission_revoked', retryable: false },
  { name: '429 throttled', matches: status(429), code: 'quota_exceeded', retryable: false },
  { name: '5xx server side', matches: (e) => e.status >= 500, code: 'upstream_5xx', retryable: true },
  { name: 'invalid_client, invalid_request and anything else', matches: () => true, code: 'upstream_unknown', retryable: false },
];

/** Reads status and body into the fields the tables match on. */
export function linkedinErrorInfo(httpStatus: number, body: string): LinkedinErrorInfo {
  // Not JSON (an HTML error page from the edge): match on the raw text.
  const o = jsonObject(body);
  if (!o) return { status: httpStatus, code: '', text: body };
  const code = typeof o.code === 'string' ? o.code : typeof o.error === 'string' ? o.error : '';
  const text = typeof o.message === 'string' ? o.message : typeof o.error_description === 'string' ? o.error_description : body;
  return { status: httpStatus, code, text };
}

/** No answer at all (refused connection, reset, our timeout): the network may recover, so retry. */
export const LINKEDIN_NETWORK_FAILURE: NetworkFailure = failure(
  'upstream_5xx',
  true,
  'LinkedIn did not answer in time or the connection failed. The job is retried automatically.',
);

/** A media asset LinkedIn could not process (video/image status PROCESSING_FAILED): almost always its format. */
export const LINKEDIN_PROCESSING_FAILED: NetworkFailure = failure(
  'media_unsupported_format',
  false,
  'LinkedIn could not process the media file. Use JPEG, PNG or GIF for photos and MP4 for video.',
);
