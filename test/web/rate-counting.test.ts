import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { type Kysely, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { connect, type Db } from '../../db/connect.js';
import { migrateToLatest } from '../../db/migrate.js';
import type { Database } from '../../db/schema.js';
import { rateCounter } from '../../db/repositories/rate-limits.repo.js';
import { countingPlace, type CountingPlace } from '../../src/web/rate-counting.js';
import { createRateLimiter } from '../../src/web/rate-limiter.js';

/**
 * Where a process counts its rate limits on SQLite (src/web/rate-counting.ts). Two connections to one file stand for
 * two processes; the suite's process tests (test/rest/rate-limit.test.ts) run the same with real processes.
 */
describe('rate counting on one SQLite file', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function file(): Promise<string> {
    const dir = mkdtempSync(join(tmpdir(), 'publisher-counting-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'service.db');
    const db = connect({ dialect: 'sqlite', file: path });
    await migrateToLatest(db.kysely as unknown as Kysely<unknown>, 'sqlite');
    await db.close();
    return path;
  }

  function processOn(path: string): { db: Db; place: CountingPlace; limiter: ReturnType<typeof createRateLimiter> } {
    const db = connect({ dialect: 'sqlite', file: path });
    const place = countingPlace(db, { checkMs: 10, heartbeatMs: 50, staleMs: 10_000 });
    cleanups.push(async () => {
      place.leave();
      await db.close();
    });
    return { db, place, limiter: createRateLimiter(db, 100, 'ws', place) };
  }

  const stored = async (db: Db, key: string) =>
    (await db.kysely.selectFrom('rate_limits').select('points').where('key', '=', key).executeTakeFirst())?.points;
  const counting = async (db: Db) => (await db.kysely.selectFrom('rate_limit_processes').select('counting').orderBy('counting').execute()).map((r) => r.counting);

  /**
   * Opens a transaction on `db` that runs `write`, starts `meanwhile` while it is still open, then rolls the
   * transaction back; gives what `meanwhile` gave, once both have ended.
   */
  async function aroundRolledBack<T>(db: Db, write: (tx: Kysely<Database>) => Promise<unknown>, meanwhile: () => Promise<T>): Promise<T> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inside!: () => void;
    const entered = new Promise<void>((resolve) => (inside = resolve));
    const transaction = db.kysely
      .transaction()
      .execute(async (tx) => {
        await write(tx);
        inside();
        await held;
        throw new Error('rolled back');
      })
      .catch(() => 'rolled back');
    await entered;
    const result = meanwhile();
    await new Promise((r) => setTimeout(r, 20));
    release();
    expect(await transaction).toBe('rolled back');
    return result;
  }

  it('counts in memory while alone, and hands its count over to a process that joins, which waits for it', async () => {
    const path = await file();
    const a = processOn(path);
    await a.place.join();
    for (let i = 1; i <= 80; i++) expect((await a.limiter.consume('w1')).remaining).toBe(100 - i);
    expect(a.place.inMemory()).toBe(true);
    expect(await stored(a.db, 'ws:w1')).toBeUndefined();

    const b = processOn(path);
    await b.place.join();
    // The join returned after the hand-over: the count is in the table and the first counts there too.
    expect(await stored(b.db, 'ws:w1')).toBe(80);
    expect(await counting(b.db)).toEqual(['database', 'database']);
    expect(a.place.inMemory()).toBe(false);

    // 30 more requests, through both at once: exactly 20 fit.
    const decisions = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? a : b).limiter.consume('w1')));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(20);
    expect(await stored(a.db, 'ws:w1')).toBe(110);
  });

  it('hands over only once a transaction open on its connection has ended, with what it counted meanwhile', async () => {
    const path = await file();
    const a = processOn(path);
    await a.place.join();
    for (let i = 0; i < 10; i++) await a.limiter.consume('w1');

    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inside!: () => void;
    const entered = new Promise<void>((resolve) => (inside = resolve));
    // A read transaction (no write lock, so the newcomer can register) held open on the first's connection.
    const transaction = a.db.kysely.transaction().execute(async (tx) => {
      await sql`select count(*) from rate_limits`.execute(tx);
      inside();
      await held;
    });
    await entered;

    const b = processOn(path);
    let joined = false;
    const joining = b.place.join().then(() => (joined = true));
    await new Promise((r) => setTimeout(r, 100));
    expect(joined).toBe(false);
    // Counted in memory while the hand-over waits.
    for (let i = 0; i < 5; i++) expect((await a.limiter.consume('w1')).allowed).toBe(true);
    expect(joined).toBe(false);

    release();
    await transaction;
    await joining;
    expect(await stored(b.db, 'ws:w1')).toBe(15);
    expect((await b.limiter.consume('w1')).remaining).toBe(100 - 16);
  });

  it("neither waits for nor fails on another process's long write: its timers try again once the file is free", async () => {
    const path = await file();
    const a = processOn(path);
    await a.place.join();
    for (let i = 0; i < 7; i++) await a.limiter.consume('w1');
    // Another process's long write (a bulk import): the write lock held for 400 ms, with heartbeats due every 50 ms.
    const writer = new BetterSqlite3(path);
    cleanups.push(() => {
      writer.close();
    });
    writer.exec('BEGIN IMMEDIATE');
    writer.prepare('DELETE FROM rate_limits').run();
    const started = performance.now();
    let latest = 0;
    for (let i = 0; i < 20; i++) {
      const before = performance.now();
      await new Promise((r) => setTimeout(r, 20));
      latest = Math.max(latest, performance.now() - before);
    }
    // The event loop was never held for the busy timeout (5 s), and nothing threw out of a timer.
    expect(performance.now() - started).toBeLessThan(2000);
    expect(latest).toBeLessThan(1000);
    expect((await a.limiter.consume('w1')).remaining).toBe(100 - 8);
    writer.exec('COMMIT');

    const b = processOn(path);
    await b.place.join();
    expect(await stored(b.db, 'ws:w1')).toBe(8);
  });

  it('takes no account of a process that is gone, and removes its row', async () => {
    const path = await file();
    const a = processOn(path);
    // A row left by a process that died without leaving: its pid runs no more.
    await a.db.kysely.insertInto('rate_limit_processes').values({ id: 'gone', pid: 2 ** 22 + 17, heartbeat_at: Date.now(), counting: 'memory' }).execute();
    await a.place.join();
    expect(a.place.inMemory()).toBe(true);
    expect(await counting(a.db)).toEqual(['memory']);
  });

  it('a hit counted in the table while a transaction is open on the connection waits for it, and is not undone with it', async () => {
    const path = await file();
    const a = processOn(path);
    const hit = await aroundRolledBack(a.db, (tx) => sql`delete from rate_limits`.execute(tx), () => a.limiter.consume('w1'));
    expect(hit.remaining).toBe(99);
    expect(await stored(a.db, 'ws:w1')).toBe(1);
  });

  it("the sweep of ended windows made while a transaction is open waits for it, and is not undone with it", async () => {
    const path = await file();
    const a = processOn(path);
    const now = Date.now();
    await sql`insert into rate_limits (key, points, expire) values ('ws:ended', 5, ${now - 1}), ('ws:live', 5, ${now + 60_000})`.execute(a.db.kysely);
    await aroundRolledBack(a.db, (tx) => sql`update rate_limits set points = points + 1`.execute(tx), () => rateCounter(a.db).sweep(now));
    expect(await stored(a.db, 'ws:ended')).toBeUndefined();
    expect(await stored(a.db, 'ws:live')).toBe(5);
  });

  it('counts in the table until it has joined (a worker never does)', async () => {
    const path = await file();
    const a = processOn(path);
    await a.limiter.consume('w1');
    expect(await stored(a.db, 'ws:w1')).toBe(1);
  });
});
