/**
 * The one gate for tests that need a piece of the machine a developer may lack (Chromium, PostgreSQL, the
 * reference Bluesky PDS). On a laptop a missing piece skips those tests, with the reason in the title; under
 * CI=true it fails the file instead, so a CI machine without Chromium or PostgreSQL cannot turn tests off while
 * the run stays green (.ci/run installs every piece and sets CI=true).
 *
 * Use it for the condition of `describe.runIf`/`it.runIf` (or negated, `skipIf`): `runIf(present(missingReason))`.
 * @param missing why the piece is absent, or null when it is there
 * @returns whether the tests can run
 * @throws under CI=true when `missing` is not null
 */
export function present(missing: string | null): boolean {
  if (missing === null) return true;
  if (process.env.CI === 'true') throw new Error(`CI=true but ${missing}: CI runs every test, none is skipped for a missing piece`);
  return false;
}

/** `present` for a yes/no check, with what is missing when it is false. */
export function presentIf(ok: boolean, missing: string): boolean {
  return present(ok ? null : missing);
}
