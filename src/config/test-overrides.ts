import { z } from 'zod';
import { ConfigError } from './errors.js';
import { duration, durationList } from './durations.js';
import { BLUESKY_VIDEO_SERVICE, NETWORK_ENDPOINT_KEYS, type NetworkEndpointKey } from './networks.js';

/**
 * Knobs that exist so that tests and benches can compress time or point the service at local fakes: poll
 * intervals, leases, confirmation and publishing deadlines, the sandbox's latency, the networks' endpoints. They
 * are not settings: an operator has no reason to touch them, and they are not supported. An in-process test
 * passes them to `parseConfig`; a spawned process reads them as one JSON object in `SERVICE_TEST_OVERRIDES`.
 */

export const TEST_OVERRIDES_VARIABLE = 'SERVICE_TEST_OVERRIDES';

const httpUrl = z.string().regex(/^https?:\/\/[^\s]+$/, { message: 'must be an http(s) URL' });

function count(fallback: number, max?: number) {
  const message = `must be a positive integer${max === undefined ? '' : ` up to ${max}`}`;
  const int = z.coerce.number({ message }).int({ message }).positive({ message });
  return (max === undefined ? int : int.max(max, { message })).default(fallback);
}

const endpointShape = Object.fromEntries(NETWORK_ENDPOINT_KEYS.map((key) => [key, httpUrl.optional()])) as Record<
  NetworkEndpointKey,
  z.ZodOptional<typeof httpUrl>
>;

const testOverridesSchema = z.strictObject({
  /** How often workers look for due work. */
  WORKER_POLL: duration('500ms'),
  /** How long a worker holds a job before another may take it over. */
  JOB_LEASE: duration('1m'),
  /** How long an Idempotency-Key stays blocked after the process running its first request died. */
  IDEMPOTENCY_LEASE: duration('1m'),
  /** Pause between checks that a post is live. */
  CONFIRM_INTERVAL: duration('10s'),
  /** After this, an unconfirmed job fails. */
  CONFIRM_DEADLINE: duration('5m'),
  /** Pace and length of the slower checks after a confirmation failure. */
  LATE_CHECK_INTERVAL: duration('10m'),
  LATE_CHECK_WINDOW: duration('1d'),
  /** How long a network may keep a container or upload processing before the job fails. */
  PUBLISH_DEADLINE: duration('2h'),
  /** Delays of the automatic retries of a transient network failure. */
  JOB_RETRY_DELAYS: durationList('5s,30s,2m'),
  /** Scheduled-content batches a process starts at once on PostgreSQL. */
  SCHEDULER_LANES: count(4, 32),
  /** Simulated network latency of the sandbox. */
  SANDBOX_DELAY: duration('50ms', { min: 0 }),
  /** How long `/readyz` waits for the database. */
  READY_TIMEOUT: duration('2s'),
  /** SQLite: how long `/readyz` answers not ready after a write met a storage failure. */
  SQLITE_WRITE_FAILURE_HOLD: duration('30s'),
  /** Limits on fetching OAuth client metadata documents (the draft suggests 5 KiB; the provider waits 2.5 s at most). */
  OAUTH_CIMD_FETCHES_PER_MINUTE: count(10),
  OAUTH_CIMD_MAX_BYTES: count(5_120),
  OAUTH_CIMD_TIMEOUT: duration('2500ms', { max: 2_500 }),
  OAUTH_CIMD_CACHE_MAX: duration('1h', { min: 1_000 }),
  OAUTH_CIMD_FAILURE_CACHE: duration('1m', { min: 1_000 }),
  /** Bluesky's video service. */
  BLUESKY_VIDEO_URL: httpUrl.default(BLUESKY_VIDEO_SERVICE),
  /** Each network's API, authorize and token addresses (`X_API_URL`, …). */
  ...endpointShape,
});

/** What a test may set (durations as text with a unit, `'20ms'`). */
export type TestOverrides = z.input<typeof testOverridesSchema>;
/** The knobs with their values, in milliseconds for durations. */
export type TestKnobs = z.output<typeof testOverridesSchema>;
export type TestOverrideKey = keyof TestOverrides;

export const TEST_OVERRIDE_KEYS = Object.keys(testOverridesSchema.shape) as TestOverrideKey[];

/**
 * The knobs: defaults, under what the environment's deprecated names still set (`fromEnv`, each key mapped to the
 * variable it came from), under `SERVICE_TEST_OVERRIDES`, under the in-process `overrides`.
 * @throws ConfigError naming the deprecated variable, or SERVICE_TEST_OVERRIDES and the key.
 */
export function testKnobs(fromEnv: { values: Record<string, string>; sources: Record<string, string> }, json: string | undefined, overrides: TestOverrides = {}): TestKnobs {
  const legacy = testOverridesSchema.partial().safeParse(fromEnv.values);
  if (!legacy.success) {
    const issue = legacy.error.issues[0];
    const key = String(issue?.path[0] ?? '');
    const variable = fromEnv.sources[key] ?? key;
    throw new ConfigError(variable, `${variable} ${issue?.message ?? 'is invalid'} (got ${JSON.stringify(fromEnv.values[key])})`);
  }
  let given: object = {};
  if (json !== undefined) {
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch {
      value = undefined;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new ConfigError(TEST_OVERRIDES_VARIABLE, `${TEST_OVERRIDES_VARIABLE} must be a JSON object`);
    }
    given = value;
  }
  // Only keys actually given replace the deprecated variables' values; the schema's defaults fill the rest.
  const merged = { ...fromEnv.values, ...given, ...overrides };
  const checked = testOverridesSchema.safeParse(merged);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const key = issue?.path.join('.') || (issue?.code === 'unrecognized_keys' ? issue.keys.join(', ') : '');
    throw new ConfigError(TEST_OVERRIDES_VARIABLE, `${TEST_OVERRIDES_VARIABLE}: ${key} ${issue?.message ?? 'is invalid'}`);
  }
  return checked.data;
}
