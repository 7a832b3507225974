import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRateLimiter, type RateStore } from '../../src/web/rate-limit.js';
import { testDatabaseKinds } from '../support/databases.js';
import { testRedisUrl, uniqueRedisPrefix } from '../support/redis.js';
import { startTestServer, type TestServer } from '../support/server.js';

/** Each store the container can wire, opened for one suite. */
interface StoreCase {
  name: string;
  open(): Promise<{ store: RateStore; close(): Promise<void> }>;
}

const cases: StoreCase[] = [{ name: 'memory', open: async () => ({ store: { kind: 'memory' }, close: async () => undefined }) }];
const postgres = testDatabaseKinds().find((k) => k.name === 'postgres');
if (postgres) {
  cases.push({
    name: 'postgres',
    async open() {
      const server: TestServer = await startTestServer(postgres);
      const { db } = server.container;
      if (db.dialect !== 'postgres') throw new Error('expected a PostgreSQL server');
      return { store: { kind: 'postgres', pool: db.pool, table: 'rate_limits' }, close: () => server.stop() };
    },
  });
}
const redisUrl = testRedisUrl();
if (redisUrl) {
  cases.push({
    name: 'redis',
    async open() {
      const client = new Redis(redisUrl);
      return { store: { kind: 'redis', client, keyPrefix: uniqueRedisPrefix('rate-limiter') }, close: async () => void (await client.quit()) };
    },
  });
}

for (const c of cases) {
  describe(`rate limiter on rate-limiter-flexible [${c.name}]`, () => {
    let opened: Awaited<ReturnType<StoreCase['open']>> | undefined;
    const store = () => opened!.store;
    beforeAll(async () => {
      opened = await c.open();
    });
    afterAll(async () => {
      await opened?.close();
    });

    it('counts parallel hits exactly: as many allowed as the limit, each remaining value once', async () => {
      const limiter = createRateLimiter(store(), 150, `t${Date.now()}`);
      const decisions = await Promise.all(Array.from({ length: 200 }, () => limiter.consume('ws_parallel')));
      const allowed = decisions.filter((d) => d.allowed);
      expect(allowed).toHaveLength(150);
      expect(new Set(allowed.map((d) => d.remaining)).size).toBe(150);
      expect(Math.min(...allowed.map((d) => d.remaining))).toBe(0);
      expect(decisions.filter((d) => !d.allowed).every((d) => d.remaining === 0 && d.limit === 150)).toBe(true);
      // One window for all of them, ending a minute after the first hit (each answer reads the time left on it, so
      // the ends they report agree within the time the answers took).
      const ends = decisions.map((d) => d.resetAt);
      expect(Math.max(...ends) - Math.min(...ends)).toBeLessThan(1_000);
      expect(decisions[0]!.resetAt - Date.now()).toBeGreaterThan(50_000);
      expect(decisions[0]!.resetAt - Date.now()).toBeLessThanOrEqual(60_000);
    });

    it('adds a batch of points at once and keeps budgets of different keys and limiters apart', async () => {
      const name = `b${Date.now()}`;
      const limiter = createRateLimiter(store(), 10, name);
      expect(await limiter.consume('ws_a', 7)).toMatchObject({ allowed: true, remaining: 3 });
      expect(await limiter.consume('ws_a', 4)).toMatchObject({ allowed: false, remaining: 0 });
      expect(await limiter.consume('ws_b', 10)).toMatchObject({ allowed: true, remaining: 0 });
      // Another limiter on the same store counts the same key on its own.
      expect(await createRateLimiter(store(), 10, `${name}x`).consume('ws_a')).toMatchObject({ allowed: true, remaining: 9 });
    });
  });
}

describe.runIf(redisUrl !== undefined)('rate limiter on Redis while Redis cannot be reached', () => {
  it("counts in the process's memory with the same limit (rate-limiter-flexible's insurance) instead of failing", async () => {
    // Nothing listens on port 1; no offline queue, as the container sets it, so commands fail at once.
    const client = new Redis('redis://127.0.0.1:1', { lazyConnect: true, enableOfflineQueue: false, retryStrategy: () => null });
    client.on('error', () => undefined);
    try {
      const limiter = createRateLimiter({ kind: 'redis', client, keyPrefix: uniqueRedisPrefix('rate-limiter-down') }, 3, 'ws');
      const decisions = [];
      for (let i = 0; i < 4; i += 1) decisions.push(await limiter.consume('ws_down'));
      expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false]);
      expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0]);
    } finally {
      client.disconnect();
    }
  });
});
