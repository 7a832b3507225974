import { expect, it } from 'vitest';
import { sql } from 'kysely';
import { ConfigError, parseConfig, type TestOverrides } from '../../src/config.js';
import { ManualClock } from '../../src/core/clock.js';
import type { NetworkAdapter } from '../../src/networks/adapter.js';
import type { PublisherSettings } from '../../src/workers/publisher.js';
import { testPublisher } from '../support/publisher.js';
import { sandboxPostsPerJob } from '../../db/repositories/sandbox.repo.js';
import { brandWithConnections } from '../support/factories.js';
import { testDatabaseKinds } from '../support/databases.js';
import { describeEachDb, startTestServer, TEST_SECRET_KEY, type TestServer } from '../support/server.js';
import { overrides } from '../support/overrides.js';

/**
 * A job's lease covers its run, not its wait in the connection's queue. Several jobs queue behind one
 * connection on a sandbox that is slow in the service's own time (each call moves the manual clock), with a
 * short lease, while a second worker polls for jobs whose lease ran out. Every job must be submitted once, posted
 * once, and counted once in `publish_job_outcomes_total`.
 */

const LEASE_MS = 1_000;

type Worker = ReturnType<typeof testPublisher>;

interface SlowWorker {
  worker: Worker;
  /** Network calls this worker made, by kind. */
  calls: { submit: number; publish: number; confirm: number };
  /** Set when the worker made far more calls than the jobs need (a livelock: claims lost and taken again). */
  runaway: boolean;
}

/** More network calls than this in one test means jobs are being run again and again. */
const MAX_CALLS = 100;

/**
 * A publisher on the test server's database whose sandbox calls each take `stepMs` of manual-clock time; after
 * each call's time has passed, `between()` runs (another worker polling, say).
 */
function slowWorker(s: TestServer, args: { stepMs: number; between?: () => Promise<unknown>; settings?: Partial<PublisherSettings> }): SlowWorker {
  const c = s.container;
  const clock = c.clock as ManualClock;
  const calls = { submit: 0, publish: 0, confirm: 0 };
  const self: SlowWorker = { worker: undefined as unknown as Worker, calls, runaway: false };
  const step = async (kind: keyof typeof calls) => {
    calls[kind] += 1;
    if (calls.submit + calls.publish + calls.confirm > MAX_CALLS) {
      self.runaway = true;
      throw new Error('runaway: jobs are run again and again');
    }
    // Let timers run between calls, as a real network call would.
    await new Promise((r) => setImmediate(r));
    clock.advance(args.stepMs);
    await args.between?.();
  };
  const adapterFor = (mode: string, platform: Parameters<typeof c.networks.adapterFor>[1]): NetworkAdapter => {
    const real = c.networks.adapterFor(mode, platform);
    return {
      submit: async (req) => (await step('submit'), real.submit(req)),
      publish: async (req, id) => (await step('publish'), real.publish(req, id)),
      confirm: async (req, id, context) => (await step('confirm'), real.confirm(req, id, context)),
    };
  };
  self.worker = testPublisher(s, adapterFor, { perConnection: 1, ...args.settings });
  return self;
}

/** `publish_job_outcomes_total` by `status/code`, read from the process's registry. */
async function outcomeMetric(s: TestServer): Promise<Record<string, number>> {
  const metric = s.container.metrics.registry.getSingleMetric('publish_job_outcomes_total');
  const out: Record<string, number> = {};
  for (const v of (await metric!.get()).values) out[`${String(v.labels.status)}/${String(v.labels.code)}`] = v.value;
  return out;
}

function delta(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) if (v - (before[k] ?? 0) > 0) out[k] = v - (before[k] ?? 0);
  return out;
}

/** Runs both workers until no job is active, moving the clock to each next due moment (like `settle`). */
async function settleAll(s: TestServer, slow: SlowWorker[]): Promise<void> {
  const clock = s.container.clock as ManualClock;
  const workers = slow.map((w) => w.worker);
  for (let i = 0; i < 200; i++) {
    for (const w of workers) await w.drain();
    for (const w of workers) await w.drain();
    if (slow.some((w) => w.runaway)) throw new Error(`runaway: more than ${MAX_CALLS} network calls, jobs are run again and again`);
    const next = await s.container.db.kysely.selectFrom('jobs').select((eb) => eb.fn.min('run_at').as('at')).where('active', '=', 1).executeTakeFirst();
    if (next?.at === null || next?.at === undefined) return;
    // A job still held (lease not run out) is due once its lease ends.
    const locked = await s.container.db.kysely
      .selectFrom('jobs')
      .select((eb) => eb.fn.max('locked_until').as('until'))
      .where('active', '=', 1)
      .where('locked_by', 'is not', null)
      .executeTakeFirst();
    clock.set(Math.max(clock.now(), Number(next.at), locked?.until == null ? 0 : Number(locked.until) + 1));
  }
  throw new Error('jobs did not settle');
}

async function queueContents(s: TestServer, n: number, outcomes: (i: number) => string | undefined = () => undefined) {
  const { ws, brandId } = await brandWithConnections(s, ['linkedin']);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const outcome = outcomes(i);
    const res = await s.request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
      key: ws.api_key,
      body: { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: `queued ${i}`, ...(outcome ? { sandbox_outcomes: { linkedin: outcome } } : {}) },
    });
    if (res.status !== 201) throw new Error(`create content: ${res.status} ${res.text}`);
    ids.push(res.body.content_id as string);
  }
  return ids;
}

async function jobsOf(s: TestServer, contentIds: string[]) {
  return s.container.db.kysely.selectFrom('jobs').select(['id', 'status', 'error_code', 'locked_by']).where('content_id', 'in', contentIds).execute();
}

async function containersPerJob(s: TestServer, jobIds: string[]): Promise<Map<string, number>> {
  const rows = await s.container.db.kysely
    .selectFrom('sandbox_containers')
    .select(['job_id', sql<number | string>`count(*)`.as('n')])
    .where('job_id', 'in', jobIds)
    .groupBy('job_id')
    .execute();
  return new Map(rows.map((r) => [r.job_id, Number(r.n)]));
}

/** The invariant: each job submitted (one container), posted and counted exactly once. */
async function expectEachJobOnce(s: TestServer, contentIds: string[], metricsBefore: Record<string, number>) {
  const jobs = await jobsOf(s, contentIds);
  expect(jobs.every((j) => j.status === 'published' || j.status === 'failed')).toBe(true);
  expect(jobs.every((j) => j.locked_by === null)).toBe(true);
  const containers = await containersPerJob(s, jobs.map((j) => j.id));
  const posts = new Map((await sandboxPostsPerJob(s.container.db.kysely)).map((p) => [p.jobId, p.posts]));
  for (const job of jobs) {
    if (job.status === 'published') {
      expect(containers.get(job.id), `containers of ${job.id}`).toBe(1);
      expect(posts.get(job.id), `posts of ${job.id}`).toBe(1);
    } else {
      expect(posts.get(job.id), `posts of ${job.id}`).toBeUndefined();
    }
  }
  // The metric equals the outcomes written: one per job, by status and code.
  const written: Record<string, number> = {};
  for (const j of jobs) written[`${j.status}/${j.error_code ?? 'none'}`] = (written[`${j.status}/${j.error_code ?? 'none'}`] ?? 0) + 1;
  expect(delta(await outcomeMetric(s), metricsBefore)).toEqual(written);
}

describeEachDb(
  'job leases cover the run, not the queue wait',
  (server) => {
    it('one worker, 6 jobs behind one connection, runs of 0.8 lease: its own poll never runs a job twice', async () => {
      const s = server();
      const before = await outcomeMetric(s);
      const contentIds = await queueContents(s, 6, (i) => (i === 3 ? 'quota_exceeded' : undefined));
      // The claim loop polls between the calls of a run (it runs on its own timer in production).
      const a: SlowWorker = slowWorker(s, { stepMs: 400, between: () => a.worker.tick() });
      await settleAll(s, [a]);
      expect(a.calls.submit).toBe(6);
      await expectEachJobOnce(s, contentIds, before);
    });

    it('two workers: a job whose claim ran out while it waited is run by the worker that re-claimed it, never by both', async () => {
      const s = server();
      const before = await outcomeMetric(s);
      const contentIds = await queueContents(s, 6, (i) => (i === 1 ? 'quota_exceeded' : undefined));
      // B is fast (its calls take no time) and polls whenever A's slow calls have let time pass.
      const b = slowWorker(s, { stepMs: 0 });
      const a = slowWorker(s, { stepMs: 400, between: () => b.worker.tick() });
      expect(await a.worker.tick()).toBe(6);
      await settleAll(s, [a, b]);
      expect(b.calls.submit).toBeGreaterThan(0); // the scenario did hand jobs over
      expect(a.calls.submit + b.calls.submit).toBe(6);
      await expectEachJobOnce(s, contentIds, before);
    });

    it('confirmations queued behind one connection are counted once each: a stale claim confirms nothing and counts nothing', async () => {
      const s = server();
      const before = await outcomeMetric(s);
      const contentIds = await queueContents(s, 5);
      // Publish everything first (fast), so the next round is all confirmations.
      const fast = slowWorker(s, { stepMs: 0 });
      await fast.worker.drain();
      expect((await jobsOf(s, contentIds)).every((j) => j.status === 'confirming')).toBe(true);
      const clock = s.container.clock as ManualClock;
      clock.advance(s.container.config.publisher.confirmIntervalMs);
      const b = slowWorker(s, { stepMs: 0 });
      const a = slowWorker(s, { stepMs: 450, between: () => b.worker.tick() });
      expect(await a.worker.tick()).toBe(5);
      await settleAll(s, [a, b]);
      expect(a.calls.confirm + b.calls.confirm).toBe(5);
      await expectEachJobOnce(s, contentIds, before);
    });

    it('a run longer than the lease keeps its job: renewals while it runs, so a polling worker claims nothing', async () => {
      const s = server();
      const before = await outcomeMetric(s);
      // One job: a second one waiting behind it would rightly be taken over once its claim ran out.
      const contentIds = await queueContents(s, 1);
      const db = s.container.db.kysely;
      const clock = s.container.clock as ManualClock;
      const claimedByB: number[] = [];
      const b = slowWorker(s, { stepMs: 0 });
      /** Waits (real time) for the running job's renewal to cover the manual clock's new now. */
      const renewed = async () => {
        const end = performance.now() + 1_500;
        while (performance.now() < end) {
          const row = await db.selectFrom('jobs').select((eb) => eb.fn.max('locked_until').as('until')).where('content_id', 'in', contentIds).where('locked_by', 'is not', null).executeTakeFirst();
          if (row?.until != null && Number(row.until) > clock.now()) return;
          await new Promise((r) => setTimeout(r, 5));
        }
      };
      // Each call takes 2.5 leases; a renewal every 5 ms of real time.
      const a = slowWorker(s, {
        stepMs: 2.5 * LEASE_MS,
        settings: { renewEveryMs: 5 },
        between: async () => {
          await renewed();
          claimedByB.push(await b.worker.tick());
        },
      });
      await settleAll(s, [a]);
      expect(claimedByB.length).toBeGreaterThan(0);
      expect(claimedByB.every((n) => n === 0)).toBe(true);
      expect(a.calls.submit).toBe(1);
      expect(b.calls.submit + b.calls.publish + b.calls.confirm).toBe(0);
      await expectEachJobOnce(s, contentIds, before);
    });
  },
  overrides({ JOB_LEASE: `${LEASE_MS}ms` }),
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);

it('JOB_LEASE shorter than one call is a configuration error that names the variable and the limit', () => {
  const base = { DATABASE_URL: 'sqlite::memory:', SECRET_KEY: TEST_SECRET_KEY };
  const fails = (knobs: TestOverrides) => {
    try {
      parseConfig(base, knobs);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).variable).toBe('JOB_LEASE');
      return (err as Error).message;
    }
    throw new Error(`accepted ${JSON.stringify(knobs)}`);
  };
  expect(fails({ JOB_LEASE: '999ms' })).toMatch(/^JOB_LEASE must be at least 1000 ms/);
  // The finding's reproduction scaled down: a 2 s sandbox call (up to 3 s with jitter) under a 3 s lease.
  expect(fails({ JOB_LEASE: '3s', SANDBOX_DELAY: '2s' })).toBe(
    'JOB_LEASE (3000 ms) must be longer than the longest sandbox call, 3000 ms (1.5 × SANDBOX_DELAY 2000 ms): a lease shorter than one call is lost while the call runs',
  );
  expect(parseConfig(base, { JOB_LEASE: '4s', SANDBOX_DELAY: '2s' }).publisher.leaseMs).toBe(4000);
  expect(parseConfig(base, { JOB_LEASE: '1s' }).publisher.leaseMs).toBe(1000);
  expect(parseConfig(base).publisher.leaseMs).toBe(60_000);
});

/**
 * The finding's reproduction in real time and scaled down (JOB_LEASE 4s and SANDBOX_DELAY 2s → 1s and 200ms):
 * the real claim loop, the real sandbox delay, 8 jobs behind one connection that runs one at a time, so the last
 * waits about three leases before it starts.
 */
for (const kind of testDatabaseKinds()) {
  it(`real time: 8 jobs behind one slow connection with a 1 s lease all finish, each posted and counted once [${kind.name}]`, async () => {
    const s = await startTestServer(kind, {
      WORKER_PER_CONNECTION: '1',
      ...overrides({ JOB_LEASE: `${LEASE_MS}ms`, SANDBOX_DELAY: '200ms', WORKER_POLL: '20ms', CONFIRM_INTERVAL: '50ms' }),
    });
    try {
      const before = await outcomeMetric(s);
      const contentIds = await queueContents(s, 8);
      const end = performance.now() + 25_000;
      for (;;) {
        const jobs = await jobsOf(s, contentIds);
        if (jobs.every((j) => j.status === 'published' && j.locked_by === null)) break;
        if (performance.now() > end) throw new Error(`jobs did not finish: ${JSON.stringify(jobs.map((j) => j.status))}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      await expectEachJobOnce(s, contentIds, before);
    } finally {
      await s.stop();
    }
  }, 40_000);
}
