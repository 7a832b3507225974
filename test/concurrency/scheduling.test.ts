import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Db } from '../../db/connect.js';
import type { TestDatabase } from '../support/databases.js';
import { testDatabaseKinds } from '../support/databases.js';
import { type ServiceProcess, startServiceProcess } from '../support/process.js';
import { contentEvents, earlySubmits, jobTrails, postedTwice } from '../support/scheduling.js';
import { TEST_SECRET_KEY } from '../support/server.js';
import { overrides } from '../support/overrides.js';

/**
 * The scheduler with several worker processes on one database and the real clock (README, Scheduling):
 * three `src/main.ts` processes with every worker on when on PostgreSQL (one on SQLite, a single process by
 * design). Contents are due a few seconds after they are made; cancels, edits and a brand delete are sent in
 * parallel around the due instant, each through one of the processes.
 */

const PLATFORMS = ['facebook', 'threads', 'linkedin'];
const huge = 1_000_000_000;
const ENV = {
  ...overrides({ SANDBOX_DELAY: '0ms', CONFIRM_INTERVAL: '100ms', WORKER_POLL: '20ms' }),
  WORKER_CONCURRENCY: '16',
  WORKER_PER_CONNECTION: '8',
  RATE_LIMIT_PER_MINUTE: String(huge),
  PLANS_JSON: JSON.stringify({ default: { brands: huge, connections: huge, media_storage: huge, webhooks: huge, inspiration_library: huge, criacao_de_conteudos: huge, publicacoes: huge } }),
};

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

const sleepUntil = (at: number) => new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

for (const kind of testDatabaseKinds()) {
  const count = kind.name === 'postgres' ? 3 : 1;
  describe(`scheduled contents with ${count} worker process${count > 1 ? 'es' : ''} [${kind.name}]`, () => {
    let database: TestDatabase;
    let db: Db;
    const procs: ServiceProcess[] = [];
    let ws = '';
    let key = '';

    /** One call through process `i % count`. */
    async function call(i: number, method: string, path: string, body?: unknown): Promise<Answer> {
      const p = procs[i % procs.length]!;
      const res = await fetch(`${p.url}/api/v1/workspaces/${ws}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
    }

    async function brand(name: string): Promise<string> {
      const b = await call(0, 'POST', '/brands', { name });
      expect(b.status).toBe(201);
      for (const p of PLATFORMS) expect((await call(0, 'POST', `/brands/${b.body.id as string}/connections`, { platform_slug: p, mode: 'sandbox', name: p })).status).toBe(201);
      return b.body.id as string;
    }

    /** Makes `n` contents due at `at`, split over the processes; all must be made before `at`. */
    async function scheduleMany(brandId: string, n: number, at: number, label: string): Promise<string[]> {
      const made = await Promise.all(
        Array.from({ length: n }, (_, i) => call(i, 'POST', '/contents', { brand_id: brandId, target_platforms: PLATFORMS, content_type: 'text', text: `${label} ${i}`, publish_at: new Date(at).toISOString() })),
      );
      expect(made.filter((m) => m.status !== 201)).toEqual([]);
      expect(Date.now(), 'every content was made before its time (else the test proves nothing)').toBeLessThan(at);
      return made.map((m) => m.body.content_id as string);
    }

    const openJobs = async () =>
      Number((await db.kysely.selectFrom('jobs').select((eb) => eb.fn.countAll().as('n')).where('status', 'not in', ['published', 'failed', 'scheduled']).executeTakeFirst())?.n ?? 0);

    beforeAll(async () => {
      // Empty: the first process migrates it, as a fleet's first start does.
      database = await kind.create({ empty: true });
      const env = { ...ENV, DATABASE_URL: database.url, SECRET_KEY: TEST_SECRET_KEY };
      // The first process migrates and makes the workspace; the others then find the database ready.
      procs.push(await startServiceProcess(env));
      ws = /(ws_[0-9a-z]{20})/.exec(procs[0]!.stdout())![1]!;
      key = /(svc_live_[0-9a-f]{32})/.exec(procs[0]!.stdout())![1]!;
      procs.push(...(await Promise.all(Array.from({ length: count - 1 }, () => startServiceProcess(env)))));
      db = connect(kind.name === 'sqlite' ? { dialect: 'sqlite', file: database.url.replace(/^sqlite:/, '') } : { dialect: 'postgres', connectionString: database.url }, { poolSize: 2 });
    }, 60_000);

    afterAll(async () => {
      const codes = await Promise.all(procs.map((p) => p.stop('SIGTERM')));
      await db?.close();
      await database?.drop();
      expect(codes.every((c) => c === 0), procs.map((p) => p.stderr()).join('\n')).toBe(true);
    });

    it('100 contents × 3 networks due at one instant, 10 more 400 ms later: each job handed over once, none before its time, each content started and charged once', async () => {
      const brandId = await brand('burst');
      const t = Date.now() + 8000;
      const ids = await scheduleMany(brandId, 100, t, 'burst');
      const later = await scheduleMany(brandId, 10, t + 400, 'later');
      await until(async () => (await jobTrails(db.kysely, [...ids, ...later])).every((j) => j.status === 'published'), 60_000, 'every job published');

      const trails = await jobTrails(db.kysely, [...ids, ...later]);
      expect(trails).toHaveLength(110 * PLATFORMS.length);
      expect(earlySubmits(trails), 'no job is handed to its network before publish_at').toEqual([]);
      expect(postedTwice(trails)).toEqual([]);
      expect(trails.filter((j) => j.posts !== 1 || j.submits.length !== 1)).toEqual([]);
      for (const id of [...ids, ...later]) expect((await contentEvents(db.kysely, id)).map((e) => e.type)).toEqual(['content.published']);
      // A content's three jobs finish in whichever processes ran them, each process writing its final steps of the
      // moment in one batch: the outcome is still recorded once, and stands.
      const outcomes = await db.kysely.selectFrom('contents').select(['status', 'completed_at']).where('id', 'in', [...ids, ...later]).execute();
      expect(outcomes.filter((c) => c.status !== 'published' || c.completed_at === null)).toEqual([]);
      const usage = await call(0, 'GET', '/usage');
      const used = (m: string) => (usage.body.meters as { meter: string; used: number }[]).find((x) => x.meter === m)?.used;
      // Charged once per start: a content taken by two processes would count twice.
      expect(used('publicacoes')).toBe(110 * PLATFORMS.length);
      expect(used('criacao_de_conteudos')).toBe(110);
      const lateness = trails.map((j) => j.submits[0]! - j.publishAt).sort((a, b) => a - b);
      expect(lateness[lateness.length - 1], 'handed over within a minute of the time').toBeLessThan(60_000);
    }, 90_000);

    it('cancels, edits to a later time and a brand delete sent around the due instant: whichever commits first wins; a canceled content never posts, a started one is no longer editable', async () => {
      const brandId = await brand('race');
      const doomed = await brand('doomed');
      const t = Date.now() + 5000;
      const ids = await scheduleMany(brandId, 60, t, 'race');
      const orphans = await scheduleMany(doomed, 10, t, 'orphan');
      const moveTo = new Date(t + 3_600_000).toISOString();

      const deletion = (async () => {
        await sleepUntil(t);
        return call(1, 'DELETE', `/brands/${doomed}`);
      })();
      // Offsets from −300 ms to +1,200 ms around the due instant (the scheduler takes the 70 due contents one by
      // one, so later ones are still waiting a moment after it); even ones cancel, odd ones move the time later.
      const answers = await Promise.all(
        ids.map(async (id, i) => {
          await sleepUntil(t - 300 + Math.round((1500 * i) / (ids.length - 1)));
          return i % 2 === 0 ? call(i, 'POST', `/contents/${id}/cancel`) : call(i, 'PATCH', `/contents/${id}`, { publish_at: moveTo });
        }),
      );
      expect((await deletion).status).toBe(204);
      await until(async () => (await openJobs()) === 0, 60_000, 'every started job final');

      const outcome: Record<string, number> = {};
      for (const [i, id] of ids.entries()) {
        const answer = answers[i]!;
        const content = await call(0, 'GET', `/contents/${id}`);
        const trail = await jobTrails(db.kysely, [id]);
        const posts = trail.reduce((n, j) => n + j.posts, 0);
        const what = `${i % 2 === 0 ? 'cancel' : 'edit'} of content ${i}: answer ${answer.status} ${JSON.stringify(answer.body)}, content ${content.body.status as string}`;
        if (answer.status === 200) {
          // The change committed first: the scheduler never took the content.
          expect(content.body.status, what).toBe(i % 2 === 0 ? 'canceled' : 'scheduled');
          expect(posts, what).toBe(0);
          expect(trail.filter((j) => j.submits.length > 0), what).toEqual([]);
          if (i % 2 === 1) expect(content.body.publish_at, what).toBe(moveTo);
          outcome[`${i % 2 === 0 ? 'cancel' : 'edit'} won`] = (outcome[`${i % 2 === 0 ? 'cancel' : 'edit'} won`] ?? 0) + 1;
        } else {
          // The scheduler committed first: the change is refused and the content publishes, once per job.
          expect(answer.status, what).toBe(409);
          expect(answer.body.error, what).toBe('content_not_editable');
          expect(content.body.status, what).toBe('published');
          expect(trail.map((j) => j.posts), what).toEqual([1, 1, 1]);
          expect(earlySubmits(trail), what).toEqual([]);
          outcome['scheduler won'] = (outcome['scheduler won'] ?? 0) + 1;
        }
      }
      // Requests 300 ms early are committed before the due instant, those over a second late after the take.
      expect(Object.keys(outcome).sort(), JSON.stringify(outcome)).toEqual(['cancel won', 'edit won', 'scheduler won']);

      for (const id of orphans) {
        const content = await call(0, 'GET', `/contents/${id}`);
        const posts = (await jobTrails(db.kysely, [id])).reduce((n, j) => n + j.posts, 0);
        // The brand delete cancels what is still waiting; what had started goes on without its connections.
        if (content.body.status === 'canceled') expect(posts).toBe(0);
        else expect(['published', 'partial', 'failed']).toContain(content.body.status);
      }
      expect(postedTwice(await jobTrails(db.kysely))).toEqual([]);
    }, 90_000);
  });
}
