import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { nextSlots } from '../../src/core/scheduling/queue-slots.js';
import { localOf } from '../../src/core/scheduling/zoned-time.js';
import type { NewWorkspace } from '../../src/core/workspaces/workspaces.service.js';
import { testDatabaseKinds } from '../support/databases.js';
import { brandWithConnections } from '../support/factories.js';
import { startReceiver } from '../support/receiver.js';
import { contentEvents, earlySubmits, jobTrails, meterUsed, postedTwice } from '../support/scheduling.js';
import { describeEachDb, startTestServer, startTestServerOn, type TestServer } from '../support/server.js';
import { overrides, serviceEnv } from '../support/overrides.js';

/**
 * The scheduler in one process on an injected clock (README, Scheduling): never before publish_at, exactly
 * once at it, the grace after an outage, charging at publishing time, and wall times across DST transitions.
 * Workers are off: each test moves the clock and runs the scheduler and the publisher itself.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const PLATFORMS = ['facebook', 'threads', 'linkedin'];
const ENV = { RATE_LIMIT_PER_MINUTE: '1000000', ALLOW_LOCAL_URLS: 'true' };

type Body = Record<string, unknown>;

function paths(ws: NewWorkspace) {
  return { base: `/api/v1/workspaces/${ws.workspace_id}`, key: ws.api_key };
}

/** Creates a content through REST and returns its answer (201 expected). */
async function create(server: TestServer, ws: NewWorkspace, body: Body): Promise<Body> {
  const { base, key } = paths(ws);
  const res = await server.request('POST', `${base}/contents`, { key, body: { content_type: 'text', text: 'scheduled post', ...body } });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

async function statusOf(server: TestServer, ws: NewWorkspace, contentId: string): Promise<Body> {
  const { base, key } = paths(ws);
  const res = await server.request('GET', `${base}/contents/${contentId}`, { key });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** Containers the sandbox created so far (each is a job handed to its network). */
async function submitted(server: TestServer, contentIds: readonly string[]): Promise<number> {
  return (await jobTrails(server.container.db.kysely, contentIds)).reduce((n, t) => n + t.submits.length, 0);
}

describeEachDb(
  'scheduler: exactly once, never early',
  (server) => {
    const clock = () => server().container.clock as ManualClock;

    it('a content due at T: a tick at T − 1 ms starts nothing and hands nothing to a network; at T it starts once, every job is submitted at T exactly and posted once', async () => {
      clock().set(Date.UTC(2026, 2, 2, 12));
      const { ws, brandId } = await brandWithConnections(server(), PLATFORMS);
      const at = Date.UTC(2026, 2, 2, 13, 0, 0, 250);
      const created = await create(server(), ws, { brand_id: brandId, target_platforms: PLATFORMS, publish_at: '2026-03-02T14:00:00.250+01:00' });
      expect(created.publish_at).toBe(new Date(at).toISOString());
      const id = created.content_id as string;

      clock().set(at - 1);
      expect(await server().container.scheduler.tick()).toBe(0);
      await server().container.publisher.drain();
      expect(await submitted(server(), [id])).toBe(0);
      const waiting = await statusOf(server(), ws, id);
      expect(waiting.status).toBe('scheduled');
      expect((waiting.jobs as Body[]).map((j) => j.status)).toEqual(['scheduled', 'scheduled', 'scheduled']);

      clock().set(at);
      expect(await server().container.scheduler.tick()).toBe(1);
      expect(await server().container.scheduler.tick(), 'a started content is not taken again').toBe(0);
      await server().container.publisher.drain();
      const trails = await jobTrails(server().container.db.kysely, [id]);
      expect(trails.map((t) => t.submits)).toEqual([[at], [at], [at]]);

      await server().settle();
      clock().advance(2 * DAY);
      await server().settle();
      expect(await server().container.scheduler.drain()).toBe(0);
      const done = await jobTrails(server().container.db.kysely, [id]);
      expect(done.map((t) => [t.status, t.posts])).toEqual([['published', 1], ['published', 1], ['published', 1]]);
      expect((await statusOf(server(), ws, id)).status).toBe('published');
      expect((await contentEvents(server().container.db.kysely, id)).map((e) => e.type)).toEqual(['content.published']);
    });

    it('contents due at T, T + 1 ms and T + 1 min start each at its own instant, the two due together at T both at T, none with a later one', async () => {
      clock().set(Date.UTC(2026, 2, 3, 12));
      const { ws, brandId } = await brandWithConnections(server(), ['linkedin']);
      const t = Date.UTC(2026, 2, 3, 15);
      const times = [t, t, t + 1, t + 60_000];
      const ids: string[] = [];
      for (const instant of times) ids.push((await create(server(), ws, { brand_id: brandId, target_platforms: ['linkedin'], publish_at: new Date(instant).toISOString() })).content_id as string);

      const started = async (instant: number) => {
        clock().set(instant);
        await server().container.scheduler.drain();
        await server().container.publisher.drain();
        const rows = await server().container.db.kysely.selectFrom('contents').select(['id', 'status']).where('id', 'in', ids).execute();
        return ids.filter((id) => rows.find((r) => r.id === id)?.status !== 'scheduled');
      };
      expect(await started(t - 1)).toEqual([]);
      expect(await started(t)).toEqual(ids.slice(0, 2));
      expect(await started(t + 1)).toEqual(ids.slice(0, 3));
      expect(await started(t + 59_999)).toEqual(ids.slice(0, 3));
      expect(await started(t + 60_000)).toEqual(ids);
      await server().settle();
      const trails = await jobTrails(server().container.db.kysely, ids);
      expect(earlySubmits(trails)).toEqual([]);
      expect(trails.map((t) => t.submits[0]! - t.publishAt), 'each handed over at its own instant').toEqual([0, 0, 0, 0]);
      expect(trails.every((t) => t.posts === 1)).toBe(true);
    });

    it('a content canceled, one moved later and one of a deleted brand, all before their time, never start at it; the moved one starts at its new time', async () => {
      clock().set(Date.UTC(2026, 2, 4, 12));
      const { ws, brandId } = await brandWithConnections(server(), ['facebook', 'linkedin']);
      const other = await brandWithConnections(server(), ['facebook'], ws);
      const { base, key } = paths(ws);
      const at = '2026-03-04T18:00:00Z';
      const t = Date.parse(at);
      const canceled = (await create(server(), ws, { brand_id: brandId, target_platforms: ['facebook', 'linkedin'], publish_at: at })).content_id as string;
      const moved = (await create(server(), ws, { brand_id: brandId, target_platforms: ['facebook', 'linkedin'], publish_at: at })).content_id as string;
      const orphan = (await create(server(), ws, { brand_id: other.brandId, target_platforms: ['facebook'], publish_at: at })).content_id as string;

      clock().set(t - 1);
      expect((await server().request('POST', `${base}/contents/${canceled}/cancel`, { key })).status).toBe(200);
      const edit = await server().request('PATCH', `${base}/contents/${moved}`, { key, body: { publish_at: '2026-03-04T19:00:00Z', text: 'moved' } });
      expect(edit.status, edit.text).toBe(200);
      expect((await server().request('DELETE', `${base}/brands/${other.brandId}`, { key })).status).toBe(204);

      clock().set(t);
      expect(await server().container.scheduler.drain()).toBe(0);
      await server().settle();
      expect(await submitted(server(), [canceled, moved, orphan])).toBe(0);
      expect((await statusOf(server(), ws, canceled)).status).toBe('canceled');
      expect((await statusOf(server(), ws, orphan)).status).toBe('canceled');

      clock().set(t + HOUR - 1);
      expect(await server().container.scheduler.drain()).toBe(0);
      clock().set(t + HOUR);
      expect(await server().container.scheduler.drain()).toBe(1);
      await server().settle();
      const trails = await jobTrails(server().container.db.kysely, [canceled, moved, orphan]);
      expect(trails.filter((r) => r.posts > 0).map((r) => [r.contentId, r.submits[0]])).toEqual([
        [moved, t + HOUR],
        [moved, t + HOUR],
      ]);
      expect(await statusOf(server(), ws, moved)).toMatchObject({ status: 'published', text: 'moved' });
    });
  },
  ENV,
  () => ({ clock: new ManualClock(Date.UTC(2026, 2, 2, 12)), workers: false }),
);

for (const kind of testDatabaseKinds()) {
  describe(`scheduler: an outage, SCHEDULE_GRACE within and beyond [${kind.name}]`, () => {
    it('down from before T until T + grace: the one due exactly grace ago publishes at once on restart, the one due 1 ms earlier fails schedule_missed with content.failed and no charge, a later one waits for its time', async () => {
      const clock = new ManualClock(Date.UTC(2026, 4, 10, 8));
      let server = await startTestServer(kind, ENV, { clock, workers: false });
      try {
        const { ws, brandId } = await brandWithConnections(server, ['facebook', 'linkedin']);
        const receiver = await startReceiver();
        const { base, key } = paths(ws);
        const hook = await server.request('POST', `${base}/webhooks`, { key, body: { url: `${receiver.url}/hook`, description: 'outcomes', enabled_events: ['content.published', 'content.failed'] } });
        expect(hook.status, hook.text).toBe(201);
        const t = Date.UTC(2026, 4, 10, 9);
        const body = (at: number, text: string) => ({ brand_id: brandId, target_platforms: ['facebook', 'linkedin'], text, publish_at: new Date(at).toISOString() });
        const missed = (await create(server, ws, body(t, 'missed'))).content_id as string;
        const late = (await create(server, ws, body(t + 1, 'late'))).content_id as string;
        const later = (await create(server, ws, body(t + 2 * HOUR, 'later'))).content_id as string;

        // The service stops before T and comes back when `late` is exactly the grace (1 h) overdue.
        clock.set(t - 60_000);
        const mediaDir = server.container.config.mediaDir;
        await server.service.stop(1000);
        rmSync(mediaDir, { recursive: true, force: true });
        clock.set(t + 1 + HOUR);
        server = await startTestServerOn(server.database, ENV, { clock, workers: false });

        expect(await server.container.scheduler.drain()).toBe(2);
        await server.settle();
        await server.container.dispatcher.drain();
        const db = server.container.db.kysely;
        const trails = await jobTrails(db, [missed, late, later]);
        const of = (id: string) => trails.filter((r) => r.contentId === id);
        expect(of(missed).map((r) => [r.status, r.errorCode, r.posts, r.submits.length])).toEqual([
          ['failed', 'schedule_missed', 0, 0],
          ['failed', 'schedule_missed', 0, 0],
        ]);
        expect(of(late).map((r) => [r.status, r.posts, r.submits[0]])).toEqual([
          ['published', 1, t + 1 + HOUR],
          ['published', 1, t + 1 + HOUR],
        ]);
        expect(of(later).map((r) => [r.status, r.posts])).toEqual([
          ['scheduled', 0],
          ['scheduled', 0],
        ]);
        expect((await statusOf(server, ws, missed)).status).toBe('failed');
        const events = await contentEvents(db, missed);
        expect(events.map((e) => e.type)).toEqual(['content.failed']);
        expect(events[0]!.jobs.map((j) => j.error_code)).toEqual(['schedule_missed', 'schedule_missed']);
        const delivered = receiver.received.map((r) => JSON.parse(r.rawBody) as { type: string; data: { content_id: string } });
        expect(delivered.filter((e) => e.data.content_id === missed).map((e) => e.type)).toEqual(['content.failed']);
        // Only `late` was charged: the missed content is neither a creation nor a publication of this cycle.
        expect(await meterUsed(db, ws.workspace_id, 'publicacoes', '2026-05')).toBe(2);
        expect(await meterUsed(db, ws.workspace_id, 'criacao_de_conteudos', '2026-05')).toBe(1);

        clock.set(t + 2 * HOUR - 1);
        expect(await server.container.scheduler.drain()).toBe(0);
        clock.set(t + 2 * HOUR);
        expect(await server.container.scheduler.drain()).toBe(1);
        await server.settle();
        const after = await jobTrails(db, [later]);
        expect(after.map((r) => [r.status, r.submits[0], r.posts])).toEqual([
          ['published', t + 2 * HOUR, 1],
          ['published', t + 2 * HOUR, 1],
        ]);
        await receiver.close();
      } finally {
        await server.stop();
      }
    });

    it('with the workers running, a content due during an outage within the grace is started by the restarted worker loop itself', async () => {
      const clock = new ManualClock(Date.UTC(2026, 4, 11, 8));
      let server = await startTestServer(kind, serviceEnv(ENV, overrides({ WORKER_POLL: '20ms' }), { SCHEDULE_GRACE: '10m' }), { clock });
      try {
        const { ws, brandId } = await brandWithConnections(server, ['threads']);
        const t = Date.UTC(2026, 4, 11, 9);
        const id = (await create(server, ws, { brand_id: brandId, target_platforms: ['threads'], publish_at: new Date(t).toISOString() })).content_id as string;
        const mediaDir = server.container.config.mediaDir;
        await server.service.stop(1000);
        rmSync(mediaDir, { recursive: true, force: true });
        clock.set(t + 599_000);
        server = await startTestServerOn(server.database, serviceEnv(ENV, overrides({ WORKER_POLL: '20ms' }), { SCHEDULE_GRACE: '10m' }), { clock });
        const deadline = Date.now() + 10_000;
        while ((await submitted(server, [id])) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        const trails = await jobTrails(server.container.db.kysely, [id]);
        expect(trails.map((r) => r.submits)).toEqual([[t + 599_000]]);
      } finally {
        await server.stop();
      }
    });
  });
}

describeEachDb(
  'scheduler: charging at publishing time',
  (server) => {
    const clock = () => server().container.clock as ManualClock;
    const wallet = async (ws: NewWorkspace) => {
      const res = await server().request('GET', `/v1/workspaces/${ws.workspace_id}/wallet?limit=200`, { key: ws.api_key });
      expect(res.status, res.text).toBe(200);
      return res.body as { saldo: number; movimentos?: unknown[] };
    };
    const spends = async (ws: NewWorkspace) =>
      (await server().container.db.kysely.selectFrom('credit_ledger').select(['amount', 'reference']).where('workspace_id', '=', ws.workspace_id).where('kind', '=', 'spend').execute()).map((l) => ({
        amount: Number(l.amount),
        reference: l.reference,
      }));

    it('plan meter at its ceiling at the due time: the jobs fail limit_reached, content.failed reaches the webhook, nothing is counted', async () => {
      clock().set(Date.UTC(2026, 5, 3, 12));
      const ws = await server().workspace();
      await server().container.services.workspaces.setPlan(ws.workspace_id, 'three_posts');
      const { brandId } = await brandWithConnections(server(), ['facebook', 'linkedin'], ws);
      const { base, key } = paths(ws);
      const receiver = await startReceiver();
      await server().request('POST', `${base}/webhooks`, { key, body: { url: `${receiver.url}/hook`, description: 'failures', enabled_events: ['content.failed'] } });
      const t = Date.UTC(2026, 5, 3, 18);
      const id = (await create(server(), ws, { brand_id: brandId, target_platforms: ['facebook', 'linkedin'], publish_at: new Date(t).toISOString() })).content_id as string;
      // Scheduling took nothing: the meter still has room for three publications made now.
      for (const p of ['facebook', 'linkedin', 'facebook']) await create(server(), ws, { brand_id: brandId, target_platforms: [p], text: `now ${p}` });
      await server().settle();
      expect(await meterUsed(server().container.db.kysely, ws.workspace_id, 'publicacoes', '2026-06')).toBe(3);

      clock().set(t);
      await server().container.scheduler.drain();
      await server().settle();
      await server().container.dispatcher.drain();
      const content = await statusOf(server(), ws, id);
      expect(content.status).toBe('failed');
      expect((content.jobs as Body[]).map((j) => j.error_code)).toEqual(['limit_reached', 'limit_reached']);
      expect(await submitted(server(), [id])).toBe(0);
      const events = receiver.received.map((r) => JSON.parse(r.rawBody) as { type: string; data: { content_id: string; jobs: { error_code: string }[] } });
      expect(events.map((e) => [e.type, e.data.content_id, e.data.jobs.map((j) => j.error_code)])).toEqual([['content.failed', id, ['limit_reached', 'limit_reached']]]);
      expect(await meterUsed(server().container.db.kysely, ws.workspace_id, 'publicacoes', '2026-06')).toBe(3);
      await receiver.close();
    });

    it('modo creditos: scheduling, editing and canceling spend nothing (cancel has nothing to give back); a scheduled one is paid once, when it publishes; too few credits at the due time fail saldo_insuficiente', async () => {
      clock().set(Date.UTC(2026, 5, 10, 12));
      const { ws, brandId } = await brandWithConnections(server(), PLATFORMS);
      const { base, key } = paths(ws);
      await server().container.services.wallet.grant({ workspaceId: ws.workspace_id, amount: 10, source: 'grant', expiresAt: null });
      const t = Date.UTC(2026, 5, 10, 18);
      const body = { brand_id: brandId, target_platforms: PLATFORMS, modo: 'creditos', publish_at: new Date(t).toISOString() };
      const canceled = (await create(server(), ws, body)).content_id as string;
      const paid = (await create(server(), ws, body)).content_id as string;
      const unpaid = (await create(server(), ws, { ...body, publish_at: new Date(t + HOUR).toISOString() })).content_id as string;
      for (const patch of [{ text: 'edited once' }, { publish_at: new Date(t + 60_000).toISOString() }, { target_platforms: ['facebook', 'threads'] }]) {
        const res = await server().request('PATCH', `${base}/contents/${canceled}`, { key, body: patch });
        expect(res.status, res.text).toBe(200);
      }
      expect((await server().request('POST', `${base}/contents/${canceled}/cancel`, { key })).status).toBe(200);
      expect((await wallet(ws)).saldo).toBe(10);
      expect(await spends(ws)).toEqual([]);

      clock().set(t);
      await server().container.scheduler.drain();
      await server().settle();
      // Three publications at 2 credits; the creation is covered by the plan's criacao_de_conteudos.
      expect(await spends(ws)).toEqual([{ amount: -6, reference: paid }]);
      expect((await wallet(ws)).saldo).toBe(4);
      expect((await statusOf(server(), ws, paid)).status).toBe('published');

      clock().set(t + HOUR);
      await server().container.scheduler.drain();
      await server().settle();
      const refused = await statusOf(server(), ws, unpaid);
      expect(refused.status).toBe('failed');
      expect((refused.jobs as Body[]).map((j) => j.error_code)).toEqual(['saldo_insuficiente', 'saldo_insuficiente', 'saldo_insuficiente']);
      expect((await contentEvents(server().container.db.kysely, unpaid)).map((e) => e.type)).toEqual(['content.failed']);
      expect((await wallet(ws)).saldo).toBe(4);
      expect(await submitted(server(), [canceled, unpaid])).toBe(0);
    });

    it('a per-cycle meter counts in the cycle the post publishes: November full, scheduled on Nov 30 for Dec 1, it publishes and counts in December only', async () => {
      clock().set(Date.UTC(2026, 10, 30, 12));
      const ws = await server().workspace();
      await server().container.services.workspaces.setPlan(ws.workspace_id, 'three_posts');
      const { brandId } = await brandWithConnections(server(), PLATFORMS, ws);
      const db = server().container.db.kysely;
      await create(server(), ws, { brand_id: brandId, target_platforms: PLATFORMS, text: 'fills November' });
      await server().settle();
      const id = (await create(server(), ws, { brand_id: brandId, target_platforms: ['facebook', 'linkedin'], publish_at: '2026-12-01T09:00:00Z' })).content_id as string;
      const usageNow = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/usage`, { key: ws.api_key });
      expect((usageNow.body.meters as { meter: string; used: number }[]).find((m) => m.meter === 'publicacoes')?.used).toBe(3);

      clock().set(Date.UTC(2026, 11, 1, 9));
      await server().container.scheduler.drain();
      await server().settle();
      expect((await statusOf(server(), ws, id)).status).toBe('published');
      expect(await meterUsed(db, ws.workspace_id, 'publicacoes', '2026-11')).toBe(3);
      expect(await meterUsed(db, ws.workspace_id, 'criacao_de_conteudos', '2026-11')).toBe(1);
      expect(await meterUsed(db, ws.workspace_id, 'publicacoes', '2026-12')).toBe(2);
      expect(await meterUsed(db, ws.workspace_id, 'criacao_de_conteudos', '2026-12')).toBe(1);
      const usage = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/usage`, { key: ws.api_key });
      expect((usage.body.meters as { meter: string; used: number }[]).find((m) => m.meter === 'publicacoes')?.used).toBe(2);
    });

    it('edits never charge: five edits of a scheduled content count nothing; at its time it is counted once, for the targets it has then', async () => {
      clock().set(Date.UTC(2027, 0, 5, 12));
      const { ws, brandId } = await brandWithConnections(server(), PLATFORMS);
      const { base, key } = paths(ws);
      const db = server().container.db.kysely;
      const id = (await create(server(), ws, { brand_id: brandId, target_platforms: PLATFORMS, publish_at: '2027-01-06T10:00:00Z' })).content_id as string;
      const patches: Body[] = [
        { text: 'one' },
        { publish_at: '2027-01-06T11:00:00Z' },
        { target_platforms: ['threads', 'linkedin'] },
        { text: 'two' },
        { publish_at: '2027-01-06T12:00', time_zone: 'Europe/Berlin' },
      ];
      for (const [i, patch] of patches.entries()) {
        const res = await server().request('PATCH', `${base}/contents/${id}`, { key, body: patch, headers: { 'idempotency-key': `edit-${i}` } });
        expect(res.status, res.text).toBe(200);
        expect(await meterUsed(db, ws.workspace_id, 'publicacoes', '2027-01')).toBe(0);
        expect(await meterUsed(db, ws.workspace_id, 'criacao_de_conteudos', '2027-01')).toBe(0);
      }
      clock().set(Date.UTC(2027, 0, 6, 11) - 1);
      expect(await server().container.scheduler.drain()).toBe(0);
      clock().set(Date.UTC(2027, 0, 6, 11));
      expect(await server().container.scheduler.drain()).toBe(1);
      await server().settle();
      expect(await statusOf(server(), ws, id)).toMatchObject({ status: 'published', text: 'two', target_platforms: ['threads', 'linkedin'] });
      expect(await meterUsed(db, ws.workspace_id, 'publicacoes', '2027-01')).toBe(2);
      expect(await meterUsed(db, ws.workspace_id, 'criacao_de_conteudos', '2027-01')).toBe(1);
    });
  },
  {
    ...ENV,
    PLANS_JSON: JSON.stringify({
      three_posts: { brands: 10, connections: 50, media_storage: 1_000_000, webhooks: 5, inspiration_library: 1, criacao_de_conteudos: 100, publicacoes: 3 },
    }),
  },
  () => ({ clock: new ManualClock(Date.UTC(2026, 5, 1)), workers: false }),
);

/** Local wall time of an instant in a zone, as `YYYY-MM-DDTHH:MM`. */
function wall(instant: number, zone: string): string {
  const l = localOf(instant, zone);
  return `${l.date}T${l.time}`;
}

describeEachDb(
  'scheduler: wall times across DST',
  (server) => {
    const clock = () => server().container.clock as ManualClock;
    const EVERY_DAY = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

    it('daily 09:00 queues in America/New_York and Europe/Berlin through both 2026 transitions: each queued content starts at its 09:00 instant, checked instant by instant', async () => {
      clock().set(Date.UTC(2026, 2, 5, 12));
      const ws = await server().workspace();
      const zones = ['America/New_York', 'Europe/Berlin'] as const;
      const brands: Record<string, string> = {};
      for (const zone of zones) {
        const { brandId } = await brandWithConnections(server(), ['linkedin'], ws);
        brands[zone] = brandId;
        const q = await server().request('PUT', `/api/v1/workspaces/${ws.workspace_id}/brands/${brandId}/queue`, { key: ws.api_key, body: { time_zone: zone, slots: [{ days: EVERY_DAY, time: '09:00' }] } });
        expect(q.status, q.text).toBe(200);
      }
      // Spring: Mar 6–Apr 1 spans New York (Mar 8) and Berlin (Mar 29); autumn: Oct 22–Nov 4 spans Berlin (Oct 25)
      // and New York (Nov 1). Each window's contents are queued when the clock reaches it.
      const windows = [
        { from: Date.UTC(2026, 2, 5, 12), days: 27 },
        { from: Date.UTC(2026, 9, 21, 12), days: 14 },
      ];
      const expected: { id: string; zone: string; instant: number }[] = [];
      for (const window of windows) {
        clock().set(window.from);
        const batch: { id: string; zone: string; instant: number }[] = [];
        for (const zone of zones) {
          for (let i = 0; i < window.days; i++) {
            const c = await create(server(), ws, { brand_id: brands[zone], target_platforms: ['linkedin'], queue: true, text: `${zone} ${i}` });
            expect(c.local_publish_at).toMatch(/T09:00$/);
            batch.push({ id: c.content_id as string, zone, instant: Date.parse(c.publish_at as string) });
          }
        }
        batch.sort((a, b) => a.instant - b.instant);
        for (const slot of batch) {
          expect(wall(slot.instant, slot.zone), `${slot.zone} slot at ${new Date(slot.instant).toISOString()}`).toMatch(/T09:00$/);
          clock().set(slot.instant - 1);
          expect(await server().container.scheduler.drain(), `nothing before ${new Date(slot.instant).toISOString()}`).toBe(0);
          clock().set(slot.instant);
          expect(await server().container.scheduler.drain(), `one content at ${new Date(slot.instant).toISOString()}`).toBe(1);
          await server().container.publisher.drain();
        }
        await server().settle();
        expected.push(...batch);
      }
      const trails = await jobTrails(server().container.db.kysely, expected.map((e) => e.id));
      const submittedAt = new Map(trails.map((t) => [t.contentId, t.submits]));
      for (const e of expected) expect(submittedAt.get(e.id), `${e.zone} ${wall(e.instant, e.zone)}`).toEqual([e.instant]);
      expect(trails.every((t) => t.posts === 1)).toBe(true);
      // The offsets change where they should: UTC 14:00 → 13:00 in New York after Mar 8, 08:00 → 07:00 in Berlin after Mar 29.
      const utcHours = (zone: string) =>
        expected
          .filter((e) => e.zone === zone)
          .map((e) => new Date(e.instant).getUTCHours())
          .filter((h, i, all) => i === 0 || all[i - 1] !== h);
      expect(utcHours('America/New_York')).toEqual([14, 13, 14]);
      expect(utcHours('Europe/Berlin')).toEqual([8, 7, 8]);
      const nyDays = expected.filter((e) => e.zone === 'America/New_York').map((e) => wall(e.instant, e.zone).slice(0, 10));
      expect(nyDays).toContain('2026-03-08');
      expect(nyDays).toContain('2026-11-01');
    });

    it('New York: the nonexistent 02:30 of Mar 8 publishes at 03:00 EDT, the repeated 01:30 of Nov 1 once, at its first (EDT) occurrence', async () => {
      clock().set(Date.UTC(2026, 2, 7, 12));
      const { ws, brandId } = await brandWithConnections(server(), ['facebook']);
      const gap = await create(server(), ws, { brand_id: brandId, target_platforms: ['facebook'], publish_at: '2026-03-08T02:30', time_zone: 'America/New_York' });
      const twice = await create(server(), ws, { brand_id: brandId, target_platforms: ['facebook'], publish_at: '2026-11-01T01:30', time_zone: 'America/New_York' });
      expect(gap).toMatchObject({ publish_at: '2026-03-08T07:00:00.000Z', local_publish_at: '2026-03-08T02:30' });
      expect(twice).toMatchObject({ publish_at: '2026-11-01T05:30:00.000Z', local_publish_at: '2026-11-01T01:30' });
      await walkOnce(server(), [gap.content_id as string], Date.UTC(2026, 2, 8, 7));
      await walkOnce(server(), [twice.content_id as string], Date.UTC(2026, 10, 1, 5, 30));
      // The second 01:30 (EST, an hour later) does not publish it again.
      clock().set(Date.UTC(2026, 10, 1, 6, 30));
      expect(await server().container.scheduler.drain()).toBe(0);
      await server().settle();
      expect((await jobTrails(server().container.db.kysely, [gap.content_id as string, twice.content_id as string])).map((t) => t.posts)).toEqual([1, 1]);
    });

    it('Berlin: the nonexistent 02:30 of Mar 29 publishes at 03:00 CEST, the repeated 02:30 of Oct 25 once, at its first (CEST) occurrence', async () => {
      clock().set(Date.UTC(2026, 2, 28, 12));
      const { ws, brandId } = await brandWithConnections(server(), ['threads']);
      const gap = await create(server(), ws, { brand_id: brandId, target_platforms: ['threads'], publish_at: '2026-03-29T02:30', time_zone: 'Europe/Berlin' });
      const twice = await create(server(), ws, { brand_id: brandId, target_platforms: ['threads'], publish_at: '2026-10-25T02:30', time_zone: 'Europe/Berlin' });
      expect(gap.publish_at).toBe('2026-03-29T01:00:00.000Z');
      expect(twice.publish_at).toBe('2026-10-25T00:30:00.000Z');
      await walkOnce(server(), [gap.content_id as string], Date.UTC(2026, 2, 29, 1));
      await walkOnce(server(), [twice.content_id as string], Date.UTC(2026, 9, 25, 0, 30));
      clock().set(Date.UTC(2026, 9, 25, 1, 30));
      expect(await server().container.scheduler.drain()).toBe(0);
      await server().settle();
      expect((await jobTrails(server().container.db.kysely, [gap.content_id as string, twice.content_id as string])).map((t) => t.posts)).toEqual([1, 1]);
    });
  },
  ENV,
  () => ({ clock: new ManualClock(Date.UTC(2026, 2, 5, 12)), workers: false }),
);

/** Moves the clock to 1 ms before `instant` (nothing starts), then to it (exactly `ids` start and are submitted then). */
async function walkOnce(server: TestServer, ids: string[], instant: number): Promise<void> {
  const clock = server.container.clock as ManualClock;
  clock.set(instant - 1);
  expect(await server.container.scheduler.drain()).toBe(0);
  clock.set(instant);
  expect(await server.container.scheduler.drain()).toBe(ids.length);
  await server.settle();
  const trails = await jobTrails(server.container.db.kysely, ids);
  expect(trails.map((t) => t.submits)).toEqual(ids.map(() => [instant]));
  expect(postedTwice(trails)).toEqual([]);
}

describe('queue slots: a year of daily 09:00 without drift', () => {
  for (const zone of ['America/New_York', 'Europe/Berlin']) {
    it(`${zone}: 365 consecutive slots from 2026-01-01, each on the next local day at 09:00, exactly one per day, the UTC offset changing only on transition days`, () => {
      const slots = nextSlots({ time_zone: zone, slots: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], time: '09:00' }] }, Date.UTC(2026, 0, 1), 365);
      expect(slots).toHaveLength(365);
      let day = Date.UTC(2026, 0, 1);
      const gaps = new Map<number, number>();
      slots.forEach((instant, i) => {
        expect(wall(instant, zone)).toBe(`${new Date(day).toISOString().slice(0, 10)}T09:00`);
        day += DAY;
        if (i > 0) {
          const gap = instant - slots[i - 1]!;
          gaps.set(gap, (gaps.get(gap) ?? 0) + 1);
        }
      });
      // 362 gaps of exactly 24 h, one of 23 h (spring) and one of 25 h (autumn): no drift accumulates.
      expect(Object.fromEntries(gaps)).toEqual({ [DAY]: 362, [DAY - HOUR]: 1, [DAY + HOUR]: 1 });
    });
  }
});
