import { type ErrorRow, failure } from '../kit/failure.js';
import { jsonObject, obj, str } from '../kit/json.js';

/**
 * A TikTok failure as the tables see it. The v2 API answers `{data, error: {code, message, log_id}}` and any
 * `error.code` other than `ok` is a failure, even under HTTP 200 (creator_info answers its spam codes with 200
 * "intentional"); a failed post's status carries a `fail_reason` instead, sorted by the same table (the codes do
 * not collide, and where they repeat — spam_risk_too_many_posts, spam_risk_user_banned_from_posting — they mean
 * the same). The OAuth token endpoint answers RFC 6749's `{error, error_description, log_id}`. The texts are
 * matched against and logged, never returned (house style 4).
 */
export interface TiktokErrorInfo {
  /** HTTP status; 0 when no answer came at all. */
  status: number;
  /** `error.code`, a status `fail_reason`, or the OAuth `error`; '' when absent. */
  code: string;
  /** `error.message` / `error_description`, or the raw text when it is not JSON. */
  text: string;
}

const codeIs =
  (...codes: string[]) =>
  (e: TiktokErrorInfo) =>
    codes.includes(e.code);

/**
 * Our sentence for the rule TikTok applies to apps that have not passed its audit (Content Posting API, Direct
 * Post reference: "Unaudited clients can only post to a private account"; Get Started: "All content posted by
 * unaudited clients will be restricted to private viewing mode").
 */
export const UNAUDITED_MESSAGE =
  "This service's TikTok app has not passed TikTok's audit yet, so TikTok accepts its posts only on private TikTok accounts, visible to the creator alone. Make the TikTok account private, or have the app audited.";

/**
 * Spec 7.4 for the Content Posting API (video/init, inbox/video/init, content/init, creator_info/query,
 * status/fetch), /v2/user/info/ and a post's `fail_reason`, first match wins. Sources: the Direct Post, Upload,
 * Photo, Query Creator Info and Get Post Status references ("Error codes" and "Fail reasons" tables) and the
 * API v2 error-handling page (developers.tiktok.com).
 *
 * Choices: the app-wide and account-wide caps (spam_risk_too_many_posts, reached_active_user_cap, five pending
 * inbox drafts a day) are quota_exceeded, not retried: they last a day. A ban, an unaudited app posting to a
 * public account, an unverified media domain and a refused privacy level are not fixed by reconnecting, so they
 * do not expire the connection (upstream_unknown with our sentence). TikTok recommends retrying a failed pull and
 * its `internal` failure; a rate limit (6 inits a minute per token) passes within the retry schedule.
 */
export const TIKTOK_ERROR_TABLE: readonly ErrorRow<TiktokErrorInfo>[] = [
  { name: 'no answer (network error or timeout)', matches: (e) => e.status === 0, code: 'upstream_5xx', retryable: true },
  { name: 'access_token_invalid (401)', matches: codeIs('access_token_invalid'), code: 'token_expired', retryable: false },
  {
    name: 'scope_not_authorized / scope_permission_missed',
    matches: codeIs('scope_not_authorized', 'scope_permission_missed'),
    code: 'permission_revoked',
    retryable: false,
    message: 'The TikTok account did not grant this service the permission to post (video.publish or video.upload). Reconnect it and allow posting.',
  },
  {
    name: 'auth_removed (access removed while publishing)',
    matches: codeIs('auth_removed'),
    code: 'permission_revoked',
    retryable: false,
    message: "The TikTok account removed this service's access while the post was being processed. Reconnect it.",
  },
  {
    name: 'spam_risk_too_many_posts (daily post cap)',
    matches: codeIs('spam_risk_too_many_posts'),
    code: 'quota_exceeded',
    retryable: false,
    message: 'The TikTok account reached the number of posts TikTok allows through the API in 24 hours. Try again tomorrow or post from the TikTok app.',
  },
  {
    name: 'spam_risk_too_many_pending_share (5 inbox drafts a day)',
    matches: codeIs('spam_risk_too_many_pending_share'),
    code: 'quota_exceeded',
    retryable: false,
    message: 'The TikTok account already has the 5 drafts TikTok allows waiting in its inbox within 24 hours. Post or delete them in the TikTok app, then try again.',
  },
  {
    name: "reached_active_user_cap (the app's daily publishing users)",
    matches: codeIs('reached_active_user_cap'),
    code: 'quota_exceeded',
    retryable: false,
    message: "This service's TikTok app reached TikTok's daily cap of accounts publishing through it. Try again tomorrow.",
  },
  {
    name: 'spam_risk_user_banned_from_posting',
    matches: codeIs('spam_risk_user_banned_from_posting'),
    code: 'upstream_unknown',
    retryable: false,
    message: 'TikTok has banned this account from making new posts. Nothing can be published to it until TikTok lifts the ban.',
  },
  {
    name: 'spam_risk_text / spam_risk (refused by trust and safety)',
    matches: codeIs('spam_risk_text', 'spam_risk'),
    code: 'upstream_unknown',
    retryable: false,
    message: "TikTok's trust and safety checks refused this post (its text or the request looked risky). It should not be sent again as is.",
  },
  {
    name: 'unaudited_client_can_only_post_to_private_accounts',
    matches: codeIs('unaudited_client_can_only_post_to_private_accounts'),
    code: 'upstream_unknown',
    retryable: false,
    message: UNAUDITED_MESSAGE,
  },
  {
    name: 'url_ownership_unverified (PULL_FROM_URL)',
    matches: codeIs('url_ownership_unverified'),
    code: 'upstream_unknown',
    retryable: false,
    message: "TikTok only downloads media from domains or URL prefixes verified for this service's TikTok app, and this media's address is not one. The operator must verify it in the TikTok developer portal.",
  },
  {
    name: 'privacy_level_option_mismatch',
    matches: codeIs('privacy_level_option_mismatch'),
    code: 'upstream_unknown',
    retryable: false,
    message: "TikTok refused the post's visibility: the account's options changed (they do when it turns private or public) between reading them and posting. Publish it again.",
  },
  {
    name: 'app_version_check_failed (inbox needs TikTok 31.8+)',
    matches: codeIs('app_version_check_failed'),
    code: 'upstream_unknown',
    retryable: false,
    message: "Sending drafts to the TikTok inbox needs TikTok app version 31.8 or later on the creator's phone. Update the app, then try again.",
  },
  { name: 'file_format_check_failed / invalid_file_upload', matches: codeIs('file_format_check_failed', 'invalid_file_upload'), code: 'media_unsupported_format', retryable: false },
  {
    name: 'duration_check_failed',
    matches: codeIs('duration_check_failed'),
    code: 'media_unsupported_format',
    retryable: false,
    message: "TikTok refused the video's duration: it is longer than this account may post (3 minutes for most creators) or too short.",
  },
  {
    name: 'frame_rate_check_failed',
    matches: codeIs('frame_rate_check_failed'),
    code: 'media_unsupported_format',
    retryable: false,
    message: "TikTok refused the video's frame rate: it takes 23 to 60 frames per second.",
  },
  {
    name: 'picture_size_check_failed',
    matches: codeIs('picture_size_check_failed'),
    code: 'media_unsupported_format',
    retryable: false,
    message: 'TikTok refused the picture size: videos take 360 to 4096 pixels a side, photos at most 1080p.',
  },
  {
    name: 'video_pull_failed / photo_pull_failed (TikTok recommends a retry)',
    matches: codeIs('video_pull_failed', 'photo_pull_failed'),
    code: 'upstream_5xx',
    retryable: true,
    message: "TikTok could not download the media from its address within an hour. Check that the address is public and fast enough.",
  },
  { name: 'publish_cancelled', matches: codeIs('publish_cancelled'), code: 'upstream_unknown', retryable: false, message: 'The TikTok publication was cancelled before it finished.' },
  { name: 'rate_limit_exceeded (429)', matches: (e) => e.code === 'rate_limit_exceeded' || e.status === 429, code: 'upstream_5xx', retryable: true },
  { name: 'internal / internal_error / 5xx', matches: (e) => e.code === 'internal' || e.code === 'internal_error' || e.status >= 500, code: 'upstream_5xx', retryable: true },
  { name: 'HTTP 401 without a code', matches: (e) => e.status === 401, code: 'token_expired', retryable: false },
  { name: 'invalid_param and anything else (undocumented)', matches: () => true, code: 'upstream_unknown', retryable: false },
];

/**
 * The token endpoint (Login Kit "Error Handling": RFC 6749 categories). A refused grant (a used or expired code,
 * a dead refresh token) means the account must be connected again (token_expired, which expires the
 * connection); a refused client is our configuration (upstream_unknown).
 */
export const TIKTOK_OAUTH_ERROR_TABLE: readonly ErrorRow<TiktokErrorInfo>[] = [
  { name: 'no answer (network error or timeout)', matches: (e) => e.status === 0, code: 'upstream_5xx', retryable: true },
  { name: 'invalid_grant (code or refresh token invalid, expired or revoked)', matches: codeIs('invalid_grant'), code: 'token_expired', retryable: false },
  { name: 'access_denied by the account', matches: codeIs('access_denied'), code: 'permission_revoked', retryable: false },
  {
    name: 'server_error / temporarily_unavailable / 429 / 5xx',
    matches: (e) => e.code === 'server_error' || e.code === 'temporarily_unavailable' || e.status === 429 || e.status >= 500,
    code: 'upstream_5xx',
    retryable: true,
  },
  {
    name: 'invalid_client, invalid_request and anything else',
    matches: () => true,
    code: 'upstream_unknown',
    retryable: false,
    message: 'TikTok refused the sign-in request of this service (its client key, secret or redirect address). The operator must check the TikTok app settings.',
  },
];

/** Reads an API answer's status and body into the fields the tables match on. */
export function tiktokErrorInfo(httpStatus: number, body: string): TiktokErrorInfo {
  const o = jsonObject(body);
  if (!o) return { status: httpStatus, code: '', text: body };
  const e = obj(o.error);
  // The v2 API nests {code, message}; the OAuth endpoint puts {error, error_description} at the top.
  const code = str(e.code) ?? str(o.error) ?? '';
  const text = str(e.message) ?? str(o.error_description) ?? body;
  return { status: httpStatus, code, text };
}

/** A failed post's `fail_reason` (status/fetch), sorted by the same table. */
export const failReasonInfo = (reason: string | null): TiktokErrorInfo => ({ status: 200, code: reason ?? '', text: reason ?? '' });

/** Another run took over the job (its progress could not be saved): stop touching TikTok. */
export const LEASE_LOST = failure('upstream_5xx', true, 'Another run took over this job; this one stopped.');
