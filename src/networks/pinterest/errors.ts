import type { NetworkFailure } from '../adapter.js';
import { type ErrorRow, failure } from '../kit/failure.js';
import { jsonObject, num, str } from '../kit/json.js';

/**
 * A Pinterest failure as the adapter sees it. API v5 answers errors as `{code, message}` (the OpenAPI
 * `Error` / `Pinterest.Lib.Error` schemas, e.g. `{"code":40,"message":"Board not found."}`); the video storage
 * (an S3 form upload) answers XML (`<Error><Code>EntityTooLarge</Code>…`). The texts are matched against,
 * never returned (house style 4).
 */
export interface PinterestErrorInfo {
  /** HTTP status. */
  status: number;
  /** Pinterest's numeric `code`; null when absent (an XML or HTML body). */
  code: number | null;
  /** The body's `message` (or the XML `<Code>` and `<Message>`), or the raw text. */
  text: string;
  /** From a `Retry-After` header, in ms; null when none was given. */
  retryAfterMs: number | null;
}

/** Up to this long, a rate limit's reset is worth waiting for within the job's retry schedule. */
export const SHORT_RESET_MS = 120_000;

const status = (...codes: number[]) => (e: PinterestErrorInfo) => codes.includes(e.status);
const statusAndCode = (s: number, ...codes: number[]) => (e: PinterestErrorInfo) => e.status === s && e.code !== null && codes.includes(e.code);

/**
 * Spec 7.4 for Pinterest API v5 (`/v5/*` calls with a bearer token), first match wins. Sources: Pinterest's
 * OpenAPI description (github.com/pinterest/api-description, v5/openapi.json 5.23.0, and 5.17.0, the last one
 * that still listed the `POST /pins` error examples: 400 code 1 invalid URL, 403 code 233 image too small,
 * 403 code 235 image broken, 404 code 40 board not found, 429 code 8 rate limit), its `Error` examples
 * (401 code 2 "Authentication failed.", 401 code 3 "token does not have sufficient permissions",
 * 403 code 29 "not permitted to access that resource") and the rate-limits page
 * (developers.pinterest.com/docs/reference/rate-limits). The docs list no codes for an oversized or
 * unsupported image/video URL: those rows match the message, and say so.
 */
export const PINTEREST_ERROR_TABLE: readonly ErrorRow<PinterestErrorInfo>[] = [
  // Documented as 401 code 3: the user did not grant a scope we need (e.g. unticked on the consent page).
  { name: '401 code 3: the token lacks a required scope', matches: statusAndCode(401, 3), code: 'permission_revoked', retryable: false },
  { name: '401 token expired, revoked or invalid', matches: status(401), code: 'token_expired', retryable: false },
  // 403 is not always about permissions on POST /pins: Pinterest sends image problems as 403 too.
  {
    name: '403 code 233: image too small',
    matches: statusAndCode(403, 233),
    code: 'media_unsupported_format',
    retryable: false,
    message: 'Pinterest refused the image as too small. Use a larger image (Pinterest recommends 1000 × 1500 px).',
  },
  {
    name: '403 code 235: image broken or unreadable',
    matches: statusAndCode(403, 235),
    code: 'media_unsupported_format',
    retryable: false,
    message: 'Pinterest could not read the image. Use a JPEG or PNG file that opens correctly.',
  },
  { name: '403 not permitted (code 29) or scope missing', matches: status(403), code: 'permission_revoked', retryable: false },
  // The connection's board was deleted (or the user left the group board): publishing cannot work until the
  // user reconnects, which picks a board again. Code 40 on POST /pins; GET /boards/{id}/pins says code 404.
  {
    name: '404 board not found (code 40): the board was deleted',
    matches: (e) => e.status === 404 && (e.code === 40 || /board not found/i.test(e.text)),
    code: 'permission_revoked',
    retryable: false,
    message: 'The Pinterest board this connection publishes to no longer exists. Reconnect Pinterest to choose a board.',
  },
  // Standard access limits are per minute per user, Trial access per day: a short announced reset is worth a
  // retry, an unannounced one is not guessed at.
  {
    name: '429 rate limit with a short Retry-After',
    matches: (e) => e.status === 429 && e.retryAfterMs !== null && e.retryAfterMs <= SHORT_RESET_MS,
    code: 'quota_exceeded',
    retryable: true,
    message: "Pinterest's rate limit for this account was reached; the job is retried once it resets.",
  },
  {
    name: '429 rate limit (codes 8, 30)',
    matches: status(429),
    code: 'quota_exceeded',
    retryable: false,
    message: "Pinterest's rate limit for this account or app was reached. Publish again later.",
  },
  { name: '413 payload too large', matches: status(413), code: 'media_too_large', retryable: false },
  // Undocumented codes: matched on Pinterest's message (image/video over its size limit).
  {
    name: '400 image or video over the size limit (message)',
    matches: (e) => e.status === 400 && /too (large|big)|exceeds? the (maximum|max)|file size/i.test(e.text),
    code: 'media_too_large',
    retryable: false,
  },
  // Documented: 400 code 1 "It looks like you entered an invalid URL" (we send no link, so it is the media's
  // address); the rest matched on the message (an image or video Pinterest cannot fetch or decode).
  {
    name: '400 invalid media URL or unsupported image/video (code 1, message)',
    matches: (e) => e.status === 400 && /invalid url|image|video|media|format|content.?type/i.test(e.text),
    code: 'media_unsupported_format',
    retryable: false,
  },
  { name: '408 / 5xx server side', matches: (e) => e.status === 408 || e.status >= 500, code: 'upstream_5xx', retryable: true },
  { name: 'anything else (undocumented)', matches: () => true, code: 'upstream_unknown', retryable: false },
];

/**
 * The video storage (`upload_url` from POST /v5/media, an S3 form upload). S3 answers XML error codes
 * (docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html). A refused grant (403: the signed policy
 * expired or was already used) is retried: nothing public exists yet and the next run registers again.
 */
export const PINTEREST_UPLOAD_ERROR_TABLE: readonly ErrorRow<PinterestErrorInfo>[] = [
  { name: 'EntityTooLarge / 413: the file is over the limit', matches: (e) => e.status === 413 || /EntityTooLarge/.test(e.text), code: 'media_too_large', retryable: false },
  {
    name: '403 upload grant expired or refused',
    matches: status(403),
    code: 'upstream_5xx',
    retryable: true,
    message: "Pinterest's upload authorisation for the video ran out; the upload is started again automatically.",
  },
  { name: '408 / 5xx storage side', matches: (e) => e.status === 408 || e.status >= 500, code: 'upstream_5xx', retryable: true },
  {
    name: 'anything else (malformed upload)',
    matches: () => true,
    code: 'upstream_unknown',
    retryable: false,
    message: "Pinterest's storage refused the video upload. Report it with the job_id.",
  },
];

/**
 * The token endpoint (POST /v5/oauth/token). Its errors are documented only as the generic `{code, message}`:
 * the rows go by status. A 401 there is HTTP Basic client authentication failing (our app id and secret); a
 * 400 is a refused grant (code used or expired, refresh token revoked or past its 60 days).
 */
export const PINTEREST_OAUTH_ERROR_TABLE: readonly ErrorRow<PinterestErrorInfo>[] = [
  {
    name: '401 client authentication failed (app id or secret)',
    matches: (e) => e.status === 401 || /invalid_client/.test(e.text),
    code: 'upstream_unknown',
    retryable: false,
    message: "Pinterest refused this service's app credentials. The operator must check the Pinterest app id and secret.",
  },
  { name: '400 grant refused (code used or expired, refresh token revoked or expired)', matches: (e) => e.status === 400, code: 'token_expired', retryable: false },
  { name: '403 app or account not permitted', matches: status(403), code: 'permission_revoked', retryable: false },
  // A refresh that hits the rate limit keeps the current token (the core retries the refresh later).
  { name: '429 throttled', matches: status(429), code: 'quota_exceeded', retryable: true, message: "Pinterest's rate limit was reached while renewing the connection; it is tried again later." },
  { name: '5xx server side', matches: (e) => e.status >= 500, code: 'upstream_5xx', retryable: true },
  { name: 'anything else (undocumented)', matches: () => true, code: 'upstream_unknown', retryable: false },
];

/** `Retry-After` (RFC 9110 10.2.3): delay-seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterMs(headers: Headers, now: number): number | null {
  const value = headers.get('retry-after')?.trim();
  if (!value) return null;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** Reads status, body and headers into the fields the tables match on. */
export function pinterestErrorInfo(httpStatus: number, body: string, headers: Headers, now: number): PinterestErrorInfo {
  const wait = retryAfterMs(headers, now);
  const o = jsonObject(body);
  if (o) {
    const text = str(o.message) ?? str(o.error_description) ?? str(o.error) ?? body;
    return { status: httpStatus, code: num(o.code), text, retryAfterMs: wait };
  }
  // S3's XML: keep its <Code> and <Message> so the upload table can match them.
  const xml = [/<Code>([^<]*)<\/Code>/.exec(body)?.[1], /<Message>([^<]*)<\/Message>/.exec(body)?.[1]].filter(Boolean).join(': ');
  return { status: httpStatus, code: null, text: xml || body, retryAfterMs: wait };
}

/** No answer at all (refused connection, reset, our timeout): the network may recover, so retry. */
export const PINTEREST_NETWORK_FAILURE: NetworkFailure = failure(
  'upstream_5xx',
  true,
  'Pinterest did not answer in time or the connection failed. The job is retried automatically.',
);

/** A video Pinterest could not process (GET /v5/media/{id} status `failed`): almost always its format. */
export const PINTEREST_VIDEO_FAILED: NetworkFailure = failure(
  'media_unsupported_format',
  false,
  'Pinterest could not process the video. Use an MP4 or MOV file between 4 seconds and 15 minutes long.',
);
