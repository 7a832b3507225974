import { TEST_OVERRIDES_VARIABLE, type TestOverrides } from '../../src/config.js';

/**
 * The service's test-only knobs (leases, poll intervals, the networks' endpoints pointed at fakes) travel in one
 * variable, `SERVICE_TEST_OVERRIDES`, as a JSON object. These helpers build and merge it, so that environments
 * put together from several parts (a fake's, a suite's) keep every part's knobs.
 */

/** The environment that sets these knobs. */
export function overrides(knobs: TestOverrides): Record<string, string> {
  return { [TEST_OVERRIDES_VARIABLE]: JSON.stringify(knobs) };
}

/** Environments merged left to right; their `SERVICE_TEST_OVERRIDES` objects are merged key by key. */
export function serviceEnv(...parts: Record<string, string>[]): Record<string, string> {
  const out: Record<string, string> = {};
  let knobs: Record<string, unknown> | undefined;
  for (const part of parts) {
    for (const [name, value] of Object.entries(part)) {
      if (name === TEST_OVERRIDES_VARIABLE) knobs = { ...knobs, ...(JSON.parse(value) as Record<string, unknown>) };
      else out[name] = value;
    }
  }
  if (knobs !== undefined) out[TEST_OVERRIDES_VARIABLE] = JSON.stringify(knobs);
  return out;
}

/** Adds `parts` into `env` in place (a suite's shared environment, filled in `beforeAll`). */
export function addServiceEnv(env: Record<string, string>, ...parts: Record<string, string>[]): void {
  Object.assign(env, serviceEnv(env, ...parts));
}
