import { expect, it } from 'vitest';
import { rateCounter } from '../../db/repositories/rate-limits.repo.js';
import { createRateLimiter } from '../../src/web/rate-limiter.js';
import { describeEachDb } from '../support/server.js';

describeEachDb('rate limit counter (one upsert per hit)', (server) => {
  it('counts parallel hits exactly: as many allowed as the limit, each remaining value once', async () => {
    const limiter = createRateLimiter(server().container.db, 150, `t${Date.now()}`);
    const decisions = await Promise.all(Array.from({ length: 200 }, () => limiter.consume('ws_parallel')));
    const allowed = decisions.filter((d) => d.allowed);
    expect(allowed).toHaveLength(150);
    expect(new Set(allowed.map((d) => d.remaining)).size).toBe(150);
    expect(Math.min(...allowed.map((d) => d.remaining))).toBe(0);
    expect(decisions.filter((d) => !d.allowed).every((d) => d.remaining === 0 && d.limit === 150)).toBe(true);
    // One window for all of them, ending a minute after the first hit.
    expect(new Set(decisions.map((d) => d.resetAt)).size).toBe(1);
    expect(decisions[0]!.resetAt - Date.now()).toBeGreaterThan(50_000);
    expect(decisions[0]!.resetAt - Date.now()).toBeLessThanOrEqual(60_000);
  });

  it('adds a batch of points at once and keeps budgets of different keys apart', async () => {
    const limiter = createRateLimiter(server().container.db, 10, `b${Date.now()}`);
    expect(await limiter.consume('ws_a', 7)).toMatchObject({ allowed: true, remaining: 3 });
    expect(await limiter.consume('ws_a', 4)).toMatchObject({ allowed: false, remaining: 0 });
    expect(await limiter.consume('ws_b', 10)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('restarts a window that has ended, and a sweep deletes only ended windows', async () => {
    const counter = rateCounter(server().container.db);
    const key = `restart:${Date.now()}`;
    expect(await counter.hit(key, 5, 60_000, 1_000)).toEqual({ points: 5, expire: 61_000 });
    expect(await counter.hit(key, 2, 60_000, 60_999)).toEqual({ points: 7, expire: 61_000 });
    expect(await counter.hit(key, 1, 60_000, 61_000)).toEqual({ points: 1, expire: 121_000 });
    const live = `live:${Date.now()}`;
    await counter.hit(live, 1, 60_000, Date.now());
    await counter.sweep(121_001);
    const keys = (await server().container.db.kysely.selectFrom('rate_limits').select('key').where('key', 'in', [key, live]).execute()).map((r) => r.key);
    expect(keys).toEqual([live]);
  });
});
