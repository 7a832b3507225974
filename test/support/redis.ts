import { randomBytes } from 'node:crypto';

/**
 * The Redis the rate limiter's Redis store is tested on: TEST_REDIS_URL (CI sets it; `.ci/run` starts Redis on
 * 127.0.0.1:6379 when it is down). Unset outside CI, the Redis cases are skipped; under CI=true they run and fail
 * if Redis is missing, so a missing server cannot turn them off silently.
 */
export function testRedisUrl(): string | undefined {
  return process.env.TEST_REDIS_URL ?? (process.env.CI === 'true' ? 'redis://127.0.0.1:6379' : undefined);
}

/** A key prefix of this suite's own, so suites running at once on one Redis never count into each other's keys. */
export function uniqueRedisPrefix(suite: string): string {
  return `test:${suite}:${randomBytes(6).toString('hex')}`;
}
