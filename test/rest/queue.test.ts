import { expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { describeEachDb, type TestServer } from '../support/server.js';

/**
 * Issue 16: a brand's publishing queue, weekly local times in one IANA zone. Times are exact: the server runs on a
 * ManualClock set around America/New_York's fall-back (2026-11-01, 02:00 EDT → 01:00 EST, at 06:00Z).
 */

type Fields = { path: string; message: string }[];
interface QueueBody {
  brand_id: string;
  time_zone: string;
  slots: { days: string[]; time: string }[];
  next_slots: { at: string; local_date: string; local_time: string }[];
}

/** Saturday 2026-10-31 08:00 EDT. */
const BEFORE_FALL_BACK = Date.UTC(2026, 9, 31, 12);
const EVERY_DAY = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

async function brandOf(s: TestServer, name: string): Promise<{ wsId: string; key: string; brandId: string }> {
  const ws = await s.workspace(name);
  const brand = await s.request<{ id: string }>('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name: `${name} brand` } });
  expect(brand.status).toBe(201);
  return { wsId: ws.workspace_id, key: ws.api_key, brandId: brand.body.id };
}

const queuePath = (wsId: string, brandId: string) => `/api/v1/workspaces/${wsId}/brands/${brandId}/queue`;

describeEachDb(
  'brand publishing queue',
  (server) => {
    const clock = () => server().container.clock as ManualClock;

    it('stores the queue with its canonical zone and lists the next 10 slots across the fall-back, each local time once', async () => {
      clock().set(BEFORE_FALL_BACK);
      const { wsId, key, brandId } = await brandOf(server(), 'fall back');
      const body = { time_zone: 'america/new_york', slots: [{ days: EVERY_DAY, time: '01:30' }, { days: ['sun'], time: '09:00' }] };
      const put = await server().request<QueueBody>('PUT', queuePath(wsId, brandId), { key, body });
      expect(put.status).toBe(200);
      expect(put.body.time_zone).toBe('America/New_York');
      expect(put.body.slots).toEqual(body.slots);

      const get = await server().request<QueueBody>('GET', queuePath(wsId, brandId), { key });
      expect(get.status).toBe(200);
      expect(get.body).toEqual(put.body);
      expect(get.body.brand_id).toBe(brandId);
      // 01:30 on 2026-11-01 happens twice: only its first occurrence (EDT) is a slot; from then on the offset is EST.
      expect(get.body.next_slots.map((s) => s.at)).toEqual([
        '2026-11-01T01:30:00-04:00',
        '2026-11-01T09:00:00-05:00',
        '2026-11-02T01:30:00-05:00',
        '2026-11-03T01:30:00-05:00',
        '2026-11-04T01:30:00-05:00',
        '2026-11-05T01:30:00-05:00',
        '2026-11-06T01:30:00-05:00',
        '2026-11-07T01:30:00-05:00',
        '2026-11-08T01:30:00-05:00',
        '2026-11-08T09:00:00-05:00',
      ]);
      expect(get.body.next_slots[1]).toEqual({ at: '2026-11-01T09:00:00-05:00', local_date: '2026-11-01', local_time: '09:00' });
      expect(Date.parse(get.body.next_slots[0]!.at)).toBe(Date.UTC(2026, 10, 1, 5, 30));

      // Between the two occurrences of 01:30 (01:45 EDT), the repeated 01:30 EST is not a second slot.
      clock().set(Date.UTC(2026, 10, 1, 5, 45));
      const between = await server().request<QueueBody>('GET', queuePath(wsId, brandId), { key });
      expect(between.body.next_slots[0]!.at).toBe('2026-11-01T09:00:00-05:00');
      expect(between.body.next_slots.map((s) => s.at)).not.toContain('2026-11-01T01:30:00-05:00');
    });

    it('answers an empty queue in UTC for a brand whose queue was never set', async () => {
      const { wsId, key, brandId } = await brandOf(server(), 'never set');
      const get = await server().request<QueueBody>('GET', queuePath(wsId, brandId), { key });
      expect(get.status).toBe(200);
      expect(get.body).toEqual({ brand_id: brandId, time_zone: 'UTC', slots: [], next_slots: [] });
    });

    it.each([
      ['an unknown zone', { time_zone: 'Mars/Olympus_Mons', slots: [{ days: ['mon'], time: '09:00' }] }, 'time_zone'],
      ['an offset instead of a zone', { time_zone: '+05:00', slots: [{ days: ['mon'], time: '09:00' }] }, 'time_zone'],
      ['an impossible time', { time_zone: 'UTC', slots: [{ days: ['mon'], time: '09:00' }, { days: ['mon'], time: '24:00' }] }, 'slots[1].time'],
      ['a time without minutes', { time_zone: 'UTC', slots: [{ days: ['mon'], time: '9' }] }, 'slots[0].time'],
      ['empty days', { time_zone: 'UTC', slots: [{ days: [], time: '09:00' }] }, 'slots[0].days'],
      ['a repeated day', { time_zone: 'UTC', slots: [{ days: ['mon', 'mon'], time: '09:00' }] }, 'slots[0].days'],
      ['an unknown day', { time_zone: 'UTC', slots: [{ days: ['monday'], time: '09:00' }] }, 'slots[0].days[0]'],
      ['too many slots', { time_zone: 'UTC', slots: Array.from({ length: 51 }, () => ({ days: ['mon'], time: '09:00' })) }, 'slots'],
    ])('refuses %s with 400 validation_failed naming the path, storing nothing', async (_label, body, path) => {
      const { wsId, key, brandId } = await brandOf(server(), 'invalid');
      const res = await server().request('PUT', queuePath(wsId, brandId), { key, body });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('validation_failed');
      expect((res.body.fields as Fields).map((f) => f.path)).toEqual([path]);
      expect(String(res.body.message)).toContain(path);
      const get = await server().request<QueueBody>('GET', queuePath(wsId, brandId), { key });
      expect(get.body.slots).toEqual([]);
    });

    it("refuses another workspace's brand: 404 through one's own workspace, 403 through the other's", async () => {
      const victim = await brandOf(server(), 'victim');
      const attacker = await brandOf(server(), 'attacker');
      const body = { time_zone: 'UTC', slots: [{ days: ['mon'], time: '09:00' }] };
      expect((await server().request('PUT', queuePath(victim.wsId, victim.brandId), { key: victim.key, body })).status).toBe(200);

      const own = await server().request('PUT', queuePath(attacker.wsId, victim.brandId), { key: attacker.key, body: { ...body, time_zone: 'Asia/Tokyo' } });
      expect([own.status, own.body.error]).toEqual([404, 'not_found']);
      const read = await server().request('GET', queuePath(attacker.wsId, victim.brandId), { key: attacker.key });
      expect([read.status, read.body.error]).toEqual([404, 'not_found']);
      const theirs = await server().request('GET', queuePath(victim.wsId, victim.brandId), { key: attacker.key });
      expect([theirs.status, theirs.body.error]).toEqual([403, 'forbidden']);
      const unknown = await server().request('GET', queuePath(victim.wsId, 'brand_unknown'), { key: victim.key });
      expect([unknown.status, unknown.body.error]).toEqual([404, 'not_found']);

      const kept = await server().request<QueueBody>('GET', queuePath(victim.wsId, victim.brandId), { key: victim.key });
      expect(kept.body.time_zone).toBe('UTC');
    });

    it('leaves exactly one of 10 concurrent bodies stored, whole', async () => {
      const { wsId, key, brandId } = await brandOf(server(), 'race');
      const zones = ['UTC', 'Europe/Berlin', 'Asia/Tokyo', 'America/New_York', 'America/Sao_Paulo'];
      const bodies = Array.from({ length: 10 }, (_, i) => ({
        time_zone: zones[i % zones.length]!,
        slots: Array.from({ length: i + 1 }, (_s, j) => ({ days: [EVERY_DAY[(i + j) % 7]!], time: `${String(i + 10).padStart(2, '0')}:${String(j).padStart(2, '0')}` })),
      }));
      const answers = await Promise.all(bodies.map((body) => server().request('PUT', queuePath(wsId, brandId), { key, body })));
      expect(answers.map((a) => a.status)).toEqual(bodies.map(() => 200));

      const get = await server().request<QueueBody>('GET', queuePath(wsId, brandId), { key });
      const stored = { time_zone: get.body.time_zone, slots: get.body.slots };
      expect(bodies).toContainEqual(stored);
      const rows = await server().container.db.kysely.selectFrom('brand_queues').select('brand_id').where('brand_id', '=', brandId).execute();
      expect(rows).toHaveLength(1);
    });
  },
  {},
  () => ({ clock: new ManualClock(BEFORE_FALL_BACK), workers: false }),
);
