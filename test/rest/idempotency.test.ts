import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Db } from '../../db/connect.js';
import type { Database } from '../../db/schema.js';
import { parseConfig } from '../../src/config.js';
import { ManualClock } from '../../src/core/clock.js';
import { planContent } from '../../src/core/contents/content-plan.js';
import { createContentInputSchema } from '../../src/core/contents/contents.schema.js';
import { ServiceError } from '../../src/core/errors.js';
import { createIdempotencyService, type IdempotencySettings } from '../../src/core/idempotency/idempotency.service.js';
import type { Timers } from '../../src/core/lease.js';
import { probeMedia } from '../../src/media/probe.js';
import { createSafeDispatcher } from '../../src/outbound/safe-fetch.js';
import { brandWithConnections } from '../support/factories.js';
import { type ApiResponse, describeEachDb, TEST_SECRET_KEY, type TestServer } from '../support/server.js';
import { overrides } from '../support/overrides.js';

// A running request keeps its key; a fixable error releases it. Time is the server's ManualClock; the holder's
// heartbeat runs on short real timers (HTTP suite) or on timers the test ticks itself (service suite), so a lease of
// 30 s is walked past in milliseconds.

const LOCK_MS = 30_000;
const HTTP_SETTINGS: Partial<IdempotencySettings> = { lockMs: LOCK_MS, heartbeatMs: 10, waitMs: 1_000, pollMs: 10 };

/** A media host whose answers wait until the test opens the gate: a probe takes exactly as long as the test wants. */
interface GatedHost {
  origin: string;
  /** Requests that arrived and wait (HEAD included). */
  waiting(): number;
  arrived(): number;
  open(): void;
  close(): Promise<void>;
}

async function gatedHost(): Promise<GatedHost> {
  let isOpen = false;
  let arrived = 0;
  const held: { req: IncomingMessage; res: ServerResponse }[] = [];
  const answer = (req: IncomingMessage, res: ServerResponse) => {
    if (res.destroyed) return;
    res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': '10' });
    res.end(req.method === 'HEAD' ? undefined : Buffer.alloc(10));
  };
  const server = createServer((req, res) => {
    arrived++;
    if (isOpen) answer(req, res);
    else held.push({ req, res });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    waiting: () => held.filter((h) => !h.res.destroyed && !h.req.destroyed).length,
    arrived: () => arrived,
    open() {
      isOpen = true;
      for (const h of held.splice(0)) answer(h.req, h.res);
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

// Generous: on a loaded two-core machine a renewal or a database write can take seconds; the wait ends as soon as it happens.
async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const lockedUntil = async (db: Kysely<Database>, workspaceId: string, key: string) =>
  Number((await db.selectFrom('idempotency_keys').select('locked_until').where('workspace_id', '=', workspaceId).where('key', '=', key).executeTakeFirst())?.locked_until ?? 0);

async function countContents(server: TestServer, workspaceId: string): Promise<number> {
  const row = await server.container.db.kysely
    .selectFrom('contents')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describeEachDb(
  'Idempotency-Key: a running request keeps its key; fixable errors release it',
  (server) => {
    let host: GatedHost;
    beforeAll(async () => {
      host = await gatedHost();
    });
    afterAll(async () => {
      await host.close();
    });

    const clock = () => server().container.clock as ManualClock;
    const post = (key: string, workspaceId: string, body: unknown, idempotencyKey: string): Promise<ApiResponse> =>
      server().request('POST', `/api/v1/workspaces/${workspaceId}/contents`, { key, body, headers: { 'idempotency-key': idempotencyKey } });

    /** Moves the clock `totalMs` forward in steps shorter than a lease, letting the holder's heartbeat renew after each. */
    async function walkClock(workspaceId: string, key: string, totalMs: number): Promise<void> {
      const db = server().container.db.kysely;
      for (let moved = 0; moved < totalMs; moved += LOCK_MS / 2) {
        clock().advance(LOCK_MS / 2);
        const now = clock().now();
        await until('the heartbeat to renew the lease', async () => (await lockedUntil(db, workspaceId, key)) >= now + LOCK_MS);
      }
    }

    it('a retry while the first runs past the old 30 s lock gets 409 in progress, a different body 409, and after the first ends the retry replays: one content', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads']);
      const media = [0, 1, 2, 3].map((i) => ({ url: `${host.origin}/slow/${i}.jpg` }));
      const body = { brand_id: brandId, target_platforms: ['threads'], content_type: 'photo', text: 'slow idem', media };
      const before = host.arrived();
      const first = post(ws.api_key, ws.workspace_id, body, 'K1');
      // The four probes run together: all four reach the host while none has been answered.
      await until('the four probes to arrive together', () => host.arrived() - before === 4 && host.waiting() === 4);

      await walkClock(ws.workspace_id, 'K1', 4 * LOCK_MS);
      const retry = await post(ws.api_key, ws.workspace_id, body, 'K1');
      expect(retry.status).toBe(409);
      expect(retry.body.error).toBe('idempotency_conflict');
      expect(retry.body.message).toMatch(/still in progress/);
      const other = await post(ws.api_key, ws.workspace_id, { ...body, text: 'another body' }, 'K1');
      expect(other.status).toBe(409);
      expect(other.body.message).toMatch(/different request body/);
      expect(host.arrived() - before).toBe(4); // neither the retry nor the other body got as far as probing

      host.open();
      const done = await first;
      expect(done.status).toBe(201);
      const replay = await post(ws.api_key, ws.workspace_id, body, 'K1');
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body.content_id).toBe(done.body.content_id);
      const conflict = await post(ws.api_key, ws.workspace_id, { ...body, text: 'another body' }, 'K1');
      expect(conflict.status).toBe(409);
      expect(await countContents(server(), ws.workspace_id)).toBe(1);
    });

    it('20 parallel requests with one key create one content; 19 are replays', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['linkedin']);
      const fast = { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: 'twenty at once' };
      const results = await Promise.all(Array.from({ length: 20 }, () => post(ws.api_key, ws.workspace_id, fast, 'P20')));
      expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
      expect(new Set(results.map((r) => r.body.content_id)).size).toBe(1);
      expect(results.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(19);
      expect(await countContents(server(), ws.workspace_id)).toBe(1);
    });

    it('20 parallel requests with one key and slow media: one content, every other answer a 409 in progress or the replay', async () => {
      const slowHost = await gatedHost();
      try {
        const { ws, brandId } = await brandWithConnections(server(), ['threads']);
        const body = { brand_id: brandId, target_platforms: ['threads'], content_type: 'photo', text: 'slow twenty', media: [{ url: `${slowHost.origin}/p.jpg` }] };
        const pending = Array.from({ length: 20 }, () => post(ws.api_key, ws.workspace_id, body, 'S20'));
        await until('the one holder to probe', () => slowHost.waiting() === 1);
        await walkClock(ws.workspace_id, 'S20', 3 * LOCK_MS);
        await new Promise((r) => setTimeout(r, HTTP_SETTINGS.waitMs! + 200));
        slowHost.open();
        const results = await Promise.all(pending);
        const created = results.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') !== 'true');
        expect(created).toHaveLength(1);
        for (const r of results) {
          if (r.status === 201) expect(r.body.content_id).toBe(created[0]!.body.content_id);
          else expect([r.status, r.body.error, r.body.message]).toEqual([409, 'idempotency_conflict', expect.stringMatching(/still in progress/)]);
        }
        expect(slowHost.arrived()).toBe(1);
        expect(await countContents(server(), ws.workspace_id)).toBe(1);
      } finally {
        await slowHost.close();
      }
    });

    it('402 saldo_insuficiente is not kept: after a credit grant the same key and body create the content (201, not a replay)', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads', 'linkedin']);
      const grant = (amount: number) => server().container.services.wallet.grant({ workspaceId: ws.workspace_id, amount, source: 'grant', expiresAt: null });
      await grant(1);
      const body = { brand_id: brandId, target_platforms: ['threads', 'linkedin'], content_type: 'text', text: 'hi', modo: 'creditos' };
      const refused = await post(ws.api_key, ws.workspace_id, body, 'K402');
      expect(refused.status).toBe(402);
      expect(refused.body.error).toBe('saldo_insuficiente');
      expect(refused.body.recoverable).toBe(true);
      expect(await countContents(server(), ws.workspace_id)).toBe(0);

      await grant(10);
      const retried = await post(ws.api_key, ws.workspace_id, body, 'K402');
      expect(retried.status).toBe(201);
      expect(retried.headers.get('idempotent-replayed')).toBeNull();
      const replay = await post(ws.api_key, ws.workspace_id, body, 'K402');
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body.content_id).toBe(retried.body.content_id);
      expect(await countContents(server(), ws.workspace_id)).toBe(1);
    });

    it('an error the caller cannot fix by retrying (caption_too_long) is still replayed', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads']);
      const body = { brand_id: brandId, target_platforms: ['threads'], content_type: 'text', text: 'x'.repeat(600) };
      expect((await post(ws.api_key, ws.workspace_id, body, 'K422')).status).toBe(422);
      const again = await post(ws.api_key, ws.workspace_id, body, 'K422');
      expect(again.status).toBe(422);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
    });

    it('the media probes of one request share one deadline: an address that never answers fails the request in time', async () => {
      const silent = await gatedHost();
      const fine = await gatedHost();
      fine.open();
      const dispatcher = createSafeDispatcher({ allowLocal: true });
      try {
        const { ws, brandId } = await brandWithConnections(server(), ['threads']);
        const input = createContentInputSchema.parse({
          brand_id: brandId,
          target_platforms: ['threads'],
          content_type: 'photo',
          media: [{ url: `${fine.origin}/a.jpg` }, { url: `${silent.origin}/b.jpg` }, { url: `${silent.origin}/c.jpg` }],
        });
        const started = performance.now();
        const err = await planContent(server().container.db.kysely, ws.workspace_id, input, (url, signal) => probeMedia(url, { allowLocal: true }, { dispatcher, signal }), {
          probeDeadlineMs: 300,
        }).then(
          () => null,
          (e: unknown) => e,
        );
        const elapsed = performance.now() - started;
        expect(err).toBeInstanceOf(ServiceError);
        expect((err as ServiceError).code).toBe('validation_failed');
        expect((err as ServiceError).message).toMatch(/^media\[1\]\.url: the address did not answer within 0.3 s/);
        expect(silent.arrived()).toBe(2); // both silent addresses were asked at once
        expect(elapsed).toBeLessThan(2_000);
        await until('the aborted probes to hang up', () => silent.waiting() === 0);
      } finally {
        await dispatcher.close();
        await silent.close();
        await fine.close();
      }
    });
  },
  { ALLOW_LOCAL_URLS: 'true' },
  () => ({ clock: new ManualClock(Date.UTC(2026, 0, 5, 12)), workers: false, idempotency: HTTP_SETTINGS }),
);

/** Timers the test fires by hand: a heartbeat beats only when told to (or never, for a crashed holder). */
class ManualTimers implements Timers {
  private readonly ticks = new Set<() => void>();
  every(_ms: number, tick: () => void): () => void {
    this.ticks.add(tick);
    return () => this.ticks.delete(tick);
  }
  beat(): void {
    for (const tick of this.ticks) tick();
  }
  /** Heartbeats registered: a holder registers its own right after its claim commits, a moment later. */
  get running(): number {
    return this.ticks.size;
  }
}

const deferred = <T = void>() => {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
};

describeEachDb('Idempotency claims in the database: fenced by the owner token, across two processes', (server) => {
  const WS_ROWS = new Map<string, string>();
  let second: Db;
  beforeAll(async () => {
    const db = server().container.db.kysely;
    await sql`create table idem_effects (key text not null, value text not null)`.execute(db);
    // A second process: its own connection (pool) to the same database.
    second = connect(parseConfig({ DATABASE_URL: server().database.url, SECRET_KEY: TEST_SECRET_KEY }).database);
  });
  afterAll(async () => {
    await second.close();
  });

  async function workspace(name: string): Promise<string> {
    const id = WS_ROWS.get(name) ?? (await server().workspace(name)).workspace_id;
    WS_ROWS.set(name, id);
    return id;
  }

  const effects = async (key: string) =>
    (await sql<{ value: string }>`select value from idem_effects where key = ${key}`.execute(server().container.db.kysely)).rows.map((r) => r.value);

  /** The shape of content creation: the effect and the recorded answer in one transaction. */
  const effect =
    (db: Kysely<Database>, key: string, value: string, gate?: Promise<void>) =>
    async (record: (tx: Kysely<Database>, v: string) => Promise<void>): Promise<string> => {
      await gate;
      return db.transaction().execute(async (tx) => {
        await sql`insert into idem_effects (key, value) values (${key}, ${value})`.execute(tx);
        await record(tx, value);
        return value;
      });
    };

  const settings: Partial<IdempotencySettings> = { lockMs: LOCK_MS, heartbeatMs: 1_000, waitMs: 200, pollMs: 5 };

  it('a holder that keeps beating is never taken over, however long it runs; the identical retry gets 409 in progress', async () => {
    const ws = await workspace('beating');
    const clock = new ManualClock();
    const timers = new ManualTimers();
    const a = createIdempotencyService({ db: server().container.db.kysely, clock, timers, settings });
    const b = createIdempotencyService({ db: second.kysely, clock, timers: new ManualTimers(), settings });
    const gate = deferred();
    const first = a.run(ws, 'beat', 'h1', effect(server().container.db.kysely, 'beat', 'first', gate.promise));
    await until('the claim', async () => (await lockedUntil(server().container.db.kysely, ws, 'beat')) > 0);
    await until('the holder to start its heartbeat', () => timers.running === 1);
    for (let i = 0; i < 10; i++) {
      clock.advance(LOCK_MS / 2);
      // Beats until the renewal lands: a beat that comes while the previous renewal is still settling is skipped.
      await until('the renewal', async () => {
        timers.beat();
        return (await lockedUntil(server().container.db.kysely, ws, 'beat')) >= clock.now() + LOCK_MS;
      });
    }
    await expect(b.run(ws, 'beat', 'h1', effect(second.kysely, 'beat', 'retry'))).rejects.toThrow(/still in progress/);
    await expect(b.run(ws, 'beat', 'h2', effect(second.kysely, 'beat', 'other'))).rejects.toThrow(/different request body/);
    gate.resolve();
    expect((await first).outcome).toEqual({ ok: true, value: 'first' });
    expect(await b.run(ws, 'beat', 'h1', effect(second.kysely, 'beat', 'retry'))).toEqual({ replayed: true, outcome: { ok: true, value: 'first' } });
    expect(await effects('beat')).toEqual(['first']);
  });

  it('a holder gone silent (crashed) is taken over after its lease by the identical body only, and its late write rolls back', async () => {
    const ws = await workspace('crashed');
    const clock = new ManualClock();
    const a = createIdempotencyService({ db: server().container.db.kysely, clock, timers: new ManualTimers(), settings });
    const b = createIdempotencyService({ db: second.kysely, clock, timers: new ManualTimers(), settings });
    const stalled = deferred();
    const first = a.run(ws, 'crash', 'h1', effect(server().container.db.kysely, 'crash', 'first', stalled.promise));
    await until('the claim', async () => (await lockedUntil(server().container.db.kysely, ws, 'crash')) > 0);

    clock.advance(LOCK_MS - 1);
    await expect(b.run(ws, 'crash', 'h1', effect(second.kysely, 'crash', 'early'))).rejects.toThrow(/still in progress/);
    clock.advance(1);
    // Lease over, no renewal: the holder is presumed gone. A different body still may not take the key.
    await expect(b.run(ws, 'crash', 'h2', effect(second.kysely, 'crash', 'other'))).rejects.toThrow(/different request body/);
    expect(await b.run(ws, 'crash', 'h1', effect(second.kysely, 'crash', 'taker'))).toEqual({ replayed: false, outcome: { ok: true, value: 'taker' } });

    // The stalled holder wakes up: its fenced record fails, its transaction (and effect) rolls back, it answers with the taker's outcome.
    stalled.resolve();
    expect(await first).toEqual({ replayed: true, outcome: { ok: true, value: 'taker' } });
    expect(await effects('crash')).toEqual(['taker']);
  });

  it('20 parallel runs of one key, half in each process, with the clock past several leases: the work runs once', async () => {
    const ws = await workspace('parallel');
    const clock = new ManualClock();
    const timersA = new ManualTimers();
    const timersB = new ManualTimers();
    // The duplicates wait (in real time) for as long as the test holds the first run, however loaded the machine.
    const a = createIdempotencyService({ db: server().container.db.kysely, clock, timers: timersA, settings: { ...settings, waitMs: 60_000 } });
    const b = createIdempotencyService({ db: second.kysely, clock, timers: timersB, settings: { ...settings, waitMs: 60_000 } });
    const gate = deferred();
    const runs = Array.from({ length: 20 }, (_, i) =>
      (i % 2 === 0 ? a : b).run(ws, 'par', 'h1', effect(i % 2 === 0 ? server().container.db.kysely : second.kysely, 'par', `run${i}`, gate.promise)),
    );
    await until('the claim', async () => (await lockedUntil(server().container.db.kysely, ws, 'par')) > 0);
    await until('the holder to start its heartbeat', () => timersA.running + timersB.running === 1);
    for (let i = 0; i < 6; i++) {
      clock.advance(LOCK_MS / 2);
      await until('the renewal', async () => {
        timersA.beat();
        timersB.beat();
        return (await lockedUntil(server().container.db.kysely, ws, 'par')) >= clock.now() + LOCK_MS;
      });
    }
    gate.resolve();
    const results = await Promise.all(runs);
    const values = new Set(results.map((r) => (r.outcome.ok ? r.outcome.value : null)));
    expect(values.size).toBe(1);
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
    expect(await effects('par')).toHaveLength(1);
  });

  it('a recoverable error releases the key (same key runs again); a fault releases it too; other errors are kept', async () => {
    const ws = await workspace('errors');
    const clock = new ManualClock();
    const svc = createIdempotencyService({ db: server().container.db.kysely, clock, timers: new ManualTimers(), settings });
    const fail = (error: Error) => async () => {
      throw error;
    };
    const short = await svc.run(ws, 'pay', 'h1', fail(new ServiceError('saldo_insuficiente', 'short', { meter: 'publicacoes', modo: 'creditos', preco_unitario: 1, custo_estimado: 2, saldo_disponivel: 1, recoverable: true })));
    expect(short.outcome.ok).toBe(false);
    const vencido = await svc.run(ws, 'pay', 'h1', fail(new ServiceError('lote_vencido', 'expired batch', { lote_id: 'lot_1', recoverable: true })));
    expect(vencido).toMatchObject({ replayed: false, outcome: { ok: false, error: { code: 'lote_vencido' } } });
    const limited = await svc.run(ws, 'pay', 'h1', fail(new ServiceError('rate_limited', 'slow down')));
    expect(limited).toMatchObject({ replayed: false, outcome: { ok: false, error: { code: 'rate_limited' } } });
    await expect(svc.run(ws, 'pay', 'h1', fail(new Error('boom')))).rejects.toThrow('boom');
    expect(await svc.run(ws, 'pay', 'h1', effect(server().container.db.kysely, 'pay', 'paid'))).toEqual({ replayed: false, outcome: { ok: true, value: 'paid' } });

    const kept = await svc.run(ws, 'long', 'h1', fail(new ServiceError('caption_too_long', 'too long', { platform_slug: 'threads', limit: 500, fields: [{ path: 'text', message: 'too long' }] })));
    expect(kept.replayed).toBe(false);
    expect(await svc.run(ws, 'long', 'h1', effect(server().container.db.kysely, 'long', 'never'))).toMatchObject({ replayed: true, outcome: { ok: false, error: { code: 'caption_too_long' } } });
    expect(await effects('long')).toEqual([]);
  });
});

describeEachDb(
  'IDEMPOTENCY_LEASE sets how long a key stays blocked after its holder died',
  (server) => {
    it('a request claims its key for the configured lease', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['threads']);
      const body = { brand_id: brandId, target_platforms: ['threads'], content_type: 'text', text: 'leased' };
      const res = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, { key: ws.api_key, body, headers: { 'idempotency-key': 'L1' } });
      expect(res.status).toBe(201);
      // The clock stands still, so the claim's lease is exactly the setting past it.
      expect(await lockedUntil(server().container.db.kysely, ws.workspace_id, 'L1')).toBe(server().container.clock.now() + 5_000);
    });
  },
  overrides({ IDEMPOTENCY_LEASE: '5s' }),
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 24, 9)) }),
);

describe('Idempotency settings', () => {
  it('IDEMPOTENCY_LEASE is 60 s by default, and under 2 s is a configuration error naming it', () => {
    const base = { DATABASE_URL: 'sqlite::memory:', SECRET_KEY: TEST_SECRET_KEY };
    expect(parseConfig(base).idempotencyLeaseMs).toBe(60_000);
    expect(parseConfig(base, { IDEMPOTENCY_LEASE: '2s' }).idempotencyLeaseMs).toBe(2_000);
    expect(() => parseConfig(base, { IDEMPOTENCY_LEASE: '1999ms' })).toThrow(
      expect.objectContaining({ variable: 'IDEMPOTENCY_LEASE', message: expect.stringMatching(/^IDEMPOTENCY_LEASE must be at least 2000 ms/) }),
    );
  });


  it('the lease outlasts the media probe deadline several times over, and a few heartbeats fit in one lease', async () => {
    const { DEFAULT_IDEMPOTENCY_SETTINGS } = await import('../../src/core/idempotency/idempotency.service.js');
    const { MEDIA_PROBE_DEADLINE_MS } = await import('../../src/core/contents/content-plan.js');
    expect(DEFAULT_IDEMPOTENCY_SETTINGS.lockMs).toBeGreaterThanOrEqual(4 * MEDIA_PROBE_DEADLINE_MS);
    expect(DEFAULT_IDEMPOTENCY_SETTINGS.heartbeatMs * 3).toBeLessThanOrEqual(DEFAULT_IDEMPOTENCY_SETTINGS.lockMs);
  });
});
