/**
 * LinkedIn's API versions are months (`YYYYMM`, sent as the `LinkedIn-Version` header). LinkedIn serves each
 * version for about a year after its release and then answers 426 to every call that names it (LinkedIn's
 * "Versioning" guide for the Marketing and Community Management APIs). Warning a month before that leaves the
 * operator time to move `LINKEDIN_API_VERSION` on before posts start failing.
 */
export const LINKEDIN_VERSION_WARN_AFTER_MONTHS = 11;

/** The months between a `YYYYMM` version and `now` (UTC), or null when the text is not such a version. */
export function linkedinVersionAgeMonths(version: string, now: number): number | null {
  const match = /^(\d{4})(0[1-9]|1[0-2])$/.exec(version);
  if (!match) return null;
  const released = Number(match[1]) * 12 + (Number(match[2]) - 1);
  const today = new Date(now);
  return today.getUTCFullYear() * 12 + today.getUTCMonth() - released;
}

/**
 * The warning to log at start about the configured LinkedIn version, or null when it is recent enough. A pure
 * function of the version and the clock's time, so the rule is tested without waiting a year.
 */
export function linkedinVersionWarning(version: string, now: number): string | null {
  const age = linkedinVersionAgeMonths(version, now);
  if (age === null) return `LINKEDIN_API_VERSION is ${JSON.stringify(version)}, not a LinkedIn version (YYYYMM, e.g. 202610): LinkedIn will refuse every call.`;
  if (age <= LINKEDIN_VERSION_WARN_AFTER_MONTHS) return null;
  return (
    `LINKEDIN_API_VERSION ${version} is ${age} months old; LinkedIn serves a version for about a year, then refuses it (426) ` +
    'and no LinkedIn post goes out. Set LINKEDIN_API_VERSION to a recent month (YYYYMM) listed in LinkedIn\'s API versioning guide.'
  );
}
