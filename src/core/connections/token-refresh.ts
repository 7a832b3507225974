/**
 * When a live connection's tokens are renewed (pure; the time is passed in). Two moments: just before a publish,
 * so a job does not fail with `token_expired` on a token about to lapse, and ahead of time in the maintenance
 * sweep, so a connection nobody publishes with stays usable.
 */

/** A publish refreshes the token first when it expires within this long. */
export const REFRESH_BEFORE_PUBLISH_MS = 5 * 60_000;

/** The maintenance sweep renews refreshable tokens that expire within this long. */
export const REFRESH_AHEAD_MS = 86_400_000;

/** True when a token expiring at `expiresAt` (null: never) should be renewed at `now`, within `windowMs` of expiry. */
export function refreshDue(expiresAt: number | null, now: number, windowMs: number): boolean {
  return expiresAt !== null && expiresAt - now < windowMs;
}
