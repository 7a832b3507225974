import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { Content, CreatedContent } from '../../src/core/contents/contents.schema.js';
import { brandWithConnections, startMediaHost } from '../support/factories.js';
import { type ApiResponse, describeEachDb, type TestServer } from '../support/server.js';

/**
 * Issue 16 through REST: scheduling at an instant or a local time, queues, drafts, edits, cancel, publish-now, the
 * calendar feed and the charging rule (at publishing, never at scheduling). Time is the server's ManualClock; no
 * worker runs on its own, so a content starts only when a test drains the scheduler or settles.
 */

/** Monday 2026-11-23 12:00 UTC (07:00 in New York, 13:00 in Berlin). */
const T0 = Date.UTC(2026, 10, 23, 12);
const DAY = 86_400_000;
const EVERY_DAY = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

type ErrorBody = { error: string; message: string; request_id: string; status?: string; fields?: { path: string; message: string }[] } & Record<string, unknown>;
type QueueBody = { time_zone: string; next_slots: { at: string; local_date: string; local_time: string }[] };
type Usage = { meters: { meter: string; used: number; cycle_end: string | null }[] };

let media: Awaited<ReturnType<typeof startMediaHost>>;
beforeAll(async () => {
  media = await startMediaHost();
});
afterAll(() => media.close());

function expectError(res: ApiResponse<unknown>, status: number, code: string, extra: Record<string, unknown> = {}): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body).toEqual({ error: code, message: expect.any(String), request_id: res.headers.get('x-request-id'), ...extra });
}

/** The single field path a validation_failed answer names. */
function refusedPaths(res: ApiResponse<unknown>): string[] {
  expect(res.status, res.text).toBe(400);
  const body = res.body as ErrorBody;
  expect(body.error).toBe('validation_failed');
  return (body.fields ?? []).map((f) => f.path);
}

/** A workspace with one brand and sandbox connections, and its REST calls. */
async function tenant(s: TestServer, platforms: readonly string[] = ['facebook', 'linkedin']) {
  const { ws, brandId, connections } = await brandWithConnections(s, platforms);
  const base = `/api/v1/workspaces/${ws.workspace_id}`;
  const key = ws.api_key;
  const withKey = (idempotencyKey?: string): Record<string, string> => (idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey });
  return {
    ws,
    base,
    key,
    brandId,
    connections,
    /** A text post on the tenant's platforms (or `targets`), plus `extra`. */
    post: (text: string, extra: Record<string, unknown> = {}, targets: readonly string[] = platforms) => ({ brand_id: brandId, target_platforms: targets, content_type: 'text', text, ...extra }),
    create: (body: unknown, idempotencyKey?: string) => s.request<CreatedContent>('POST', `${base}/contents`, { key, body, headers: withKey(idempotencyKey) }),
    patch: (id: string, body: unknown, idempotencyKey?: string) => s.request<Content>('PATCH', `${base}/contents/${id}`, { key, body, headers: withKey(idempotencyKey) }),
    cancel: (id: string, idempotencyKey?: string) => s.request<Content>('POST', `${base}/contents/${id}/cancel`, { key, headers: withKey(idempotencyKey) }),
    publish: (id: string, idempotencyKey?: string) => s.request<Content>('POST', `${base}/contents/${id}/publish`, { key, headers: withKey(idempotencyKey) }),
    get: (id: string) => s.request<Content>('GET', `${base}/contents/${id}`, { key }),
    list: (query: string) => s.request<{ data: Content[]; next_cursor: string | null }>('GET', `${base}/contents?${query}`, { key }),
    setQueue: async (time_zone: string, slots: { days: string[]; time: string }[]) => {
      const res = await s.request('PUT', `${base}/brands/${brandId}/queue`, { key, body: { time_zone, slots } });
      expect(res.status, res.text).toBe(200);
    },
    queue: () => s.request<QueueBody>('GET', `${base}/brands/${brandId}/queue`, { key }),
    /** Used counts of the two per-cycle meters a publication charges. */
    usage: async () => {
      const res = await s.request<Usage>('GET', `${base}/usage`, { key });
      expect(res.status).toBe(200);
      const used = (meter: string) => res.body.meters.find((m) => m.meter === meter)!.used;
      return { criacao_de_conteudos: used('criacao_de_conteudos'), publicacoes: used('publicacoes') };
    },
    /** An upload of this workspace, to name in `media`. */
    upload: async (contentType: string, bytes: number) => {
      const res = await fetch(`${s.url}${base}/media`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': contentType }, body: new Uint8Array(bytes).fill(7) });
      expect(res.status).toBe(201);
      return ((await res.json()) as { id: string }).id;
    },
  };
}
type Tenant = Awaited<ReturnType<typeof tenant>>;

/** Creates a content and returns its answer, failing the test unless it is 201. */
async function created(t: Tenant, body: unknown): Promise<CreatedContent> {
  const res = await t.create(body);
  expect(res.status, res.text).toBe(201);
  return res.body;
}

describeEachDb(
  'scheduling',
  (server) => {
    const clock = () => server().container.clock as ManualClock;
    const drain = () => server().container.scheduler.drain();

    // ── creation ────────────────────────────────────────────────────────────────────────────────────────────

    it('publish_at with an offset names the instant: 201 scheduled, one scheduled job per platform, the time in UTC and as meant', async () => {
      clock().set(T0);
      const t = await tenant(server());
      const res = await t.create(t.post('offset', { publish_at: '2026-11-24T09:00:00-05:00' }));
      expect(res.status, res.text).toBe(201);
      expect(res.body).toEqual({
        content_id: expect.any(String),
        status: 'scheduled',
        publish_at: '2026-11-24T14:00:00.000Z',
        // No zone named and the brand has no queue: the local time is shown in UTC.
        time_zone: 'UTC',
        local_publish_at: '2026-11-24T14:00',
        queued: false,
        created_at: '2026-11-23T12:00:00.000Z',
        jobs: [
          { job_id: expect.stringMatching(/^job_/), platform_slug: 'facebook', connection_id: t.connections.facebook, status: 'scheduled' },
          { job_id: expect.stringMatching(/^job_/), platform_slug: 'linkedin', connection_id: t.connections.linkedin, status: 'scheduled' },
        ],
      });
      const got = await t.get(res.body.content_id);
      expect(got.body).toMatchObject({ status: 'scheduled', publish_at: '2026-11-24T14:00:00.000Z', time_zone: 'UTC', local_publish_at: '2026-11-24T14:00', queued: false, completed_at: null, text: 'offset' });
      const byId = (a: { job_id: string }, b: { job_id: string }) => a.job_id.localeCompare(b.job_id);
      expect([...got.body.jobs].sort(byId).map((j) => [j.job_id, j.status, j.error_code, j.published_at])).toEqual([...res.body.jobs].sort(byId).map((j) => [j.job_id, 'scheduled', null, null]));

      const zoned = await created(t, t.post('offset in a zone', { publish_at: '2026-11-24T09:00:00-05:00', time_zone: 'America/New_York' }));
      expect(zoned).toMatchObject({ publish_at: '2026-11-24T14:00:00.000Z', time_zone: 'America/New_York', local_publish_at: '2026-11-24T09:00' });
      const utc = await created(t, t.post('zulu', { publish_at: '2026-11-24T14:00:00.5Z' }));
      expect(utc).toMatchObject({ publish_at: '2026-11-24T14:00:00.500Z', time_zone: 'UTC', local_publish_at: '2026-11-24T14:00' });
      // draft: false and queue: false are no timing: with publish_at they still schedule.
      const explicit = await created(t, t.post('falses', { publish_at: '2026-11-24T14:00:00Z', draft: false, queue: false }));
      expect(explicit.status).toBe('scheduled');
    });

    it("a local publish_at is read in time_zone, else in the brand queue's zone, else in UTC", async () => {
      clock().set(T0);
      const t = await tenant(server());
      expect(await created(t, t.post('tokyo', { publish_at: '2026-11-24T09:00', time_zone: 'Asia/Tokyo' }))).toMatchObject({
        status: 'scheduled',
        publish_at: '2026-11-24T00:00:00.000Z',
        time_zone: 'Asia/Tokyo',
        local_publish_at: '2026-11-24T09:00',
      });
      // The zone's canonical name is kept, whatever its case; seconds of :00 are accepted.
      expect(await created(t, t.post('case', { publish_at: '2026-11-24T09:00:00', time_zone: 'asia/tokyo' }))).toMatchObject({ publish_at: '2026-11-24T00:00:00.000Z', time_zone: 'Asia/Tokyo' });
      expect(await created(t, t.post('utc', { publish_at: '2026-11-24T09:00' }))).toMatchObject({ publish_at: '2026-11-24T09:00:00.000Z', time_zone: 'UTC', local_publish_at: '2026-11-24T09:00' });

      await t.setQueue('Europe/Berlin', [{ days: ['sat'], time: '07:00' }]);
      expect(await created(t, t.post('berlin', { publish_at: '2026-11-24T09:00' }))).toMatchObject({
        publish_at: '2026-11-24T08:00:00.000Z',
        time_zone: 'Europe/Berlin',
        local_publish_at: '2026-11-24T09:00',
        queued: false,
      });
      // An instant with an offset is shown in the queue's zone too.
      expect(await created(t, t.post('berlin offset', { publish_at: '2026-11-24T09:00:00-05:00' }))).toMatchObject({ publish_at: '2026-11-24T14:00:00.000Z', time_zone: 'Europe/Berlin', local_publish_at: '2026-11-24T15:00' });
    });

    it('accepts a time one millisecond ahead and one exactly 365 days ahead', async () => {
      clock().set(T0);
      const t = await tenant(server());
      expect((await created(t, t.post('soon', { publish_at: '2026-11-23T12:00:00.001Z' }))).publish_at).toBe('2026-11-23T12:00:00.001Z');
      expect((await created(t, t.post('far', { publish_at: new Date(T0 + 365 * DAY).toISOString() }))).publish_at).toBe('2027-11-23T12:00:00.000Z');
    });

    it.each([
      ['a local time', { publish_at: '2026-11-01T09:30', time_zone: 'Europe/Oslo' }, 'it is 1 Nov 2026 09:30 in Europe/Oslo; now it is 23 Nov 2026 13:00'],
      ['a time with an offset', { publish_at: '2026-11-23T06:30:00-05:00' }, 'it is 23 Nov 2026 06:30 UTC-05:00; now it is 23 Nov 2026 07:00 UTC-05:00'],
      ['a UTC time', { publish_at: '2026-11-23T11:59:59Z' }, 'it is 23 Nov 2026 11:59 UTC; now it is 23 Nov 2026 12:00 UTC'],
    ])('refuses %s in the past in the clock it was written in', async (_label, timing, words) => {
      clock().set(T0);
      const t = await tenant(server());
      const res = await t.create(t.post('too late', timing));
      expect((res.body as unknown as ErrorBody).message).toBe(`publish_at: must be in the future (${words})`);
    });

    it.each([
      ['a past time', { publish_at: '2026-11-23T11:59:59Z' }, 'publish_at'],
      ['the current instant', { publish_at: '2026-11-23T12:00:00Z' }, 'publish_at'],
      ['a local time that is now in its zone', { publish_at: '2026-11-23T07:00', time_zone: 'America/New_York' }, 'publish_at'],
      ['a time more than 365 days ahead', { publish_at: '2027-11-23T12:00:00.001Z' }, 'publish_at'],
      ['a date that does not exist', { publish_at: '2027-02-30T09:00:00Z' }, 'publish_at'],
      ['hour 24', { publish_at: '2026-11-24T24:00:00Z' }, 'publish_at'],
      ['a local hour 24', { publish_at: '2026-12-01T24:00', time_zone: 'UTC' }, 'publish_at'],
      ['a local date that does not exist', { publish_at: '2026-02-30T09:00', time_zone: 'Europe/Berlin' }, 'publish_at'],
      ['a local minute 60', { publish_at: '2026-12-01T09:60', time_zone: 'America/New_York' }, 'publish_at'],
      ['a local hour 24 read in the queue zone', { publish_at: '2026-12-01T24:00' }, 'publish_at'],
      ['a date without a time', { publish_at: '2026-11-24' }, 'publish_at'],
      ['a space instead of T', { publish_at: '2026-11-24 09:00' }, 'publish_at'],
      ['words', { publish_at: 'tomorrow at 9' }, 'publish_at'],
      ['a number', { publish_at: T0 + DAY }, 'publish_at'],
      ['an unknown time zone', { publish_at: '2026-11-24T09:00', time_zone: 'Mars/Olympus_Mons' }, 'time_zone'],
      ['an offset as a time zone', { publish_at: '2026-11-24T09:00', time_zone: '+05:00' }, 'time_zone'],
      ['time_zone without publish_at', { time_zone: 'Europe/Berlin' }, 'time_zone'],
      ['time_zone with queue', { queue: true, time_zone: 'Europe/Berlin' }, 'time_zone'],
      ['publish_at and queue', { publish_at: '2026-11-24T09:00:00Z', queue: true }, 'queue'],
      ['publish_at and draft', { publish_at: '2026-11-24T09:00:00Z', draft: true }, 'draft'],
      ['queue and draft', { queue: true, draft: true }, 'draft'],
      ['queue for a brand without a queue', { queue: true }, 'queue'],
    ])('refuses %s (%j): 400 validation_failed naming %s, storing nothing', async (_label, timing, path) => {
      clock().set(T0);
      const t = await tenant(server());
      const res = await t.create(t.post('refused', timing));
      expect(refusedPaths(res)).toEqual([path]);
      expect((res.body as unknown as ErrorBody).message).toContain(path);
      expect((await t.list('')).body.data).toEqual([]);
    });

    it.each([
      ['publish_at', { publish_at: '2026-11-24T09:00:00Z' }],
      ['queue', { queue: true }],
      ['draft', { draft: true }],
    ])('runs every content check (spec 7.2) for a %s content, storing nothing when one fails', async (_label, timing) => {
      clock().set(T0);
      const t = await tenant(server(), ['threads', 'instagram', 'linkedin']);
      await t.setQueue('UTC', [{ days: EVERY_DAY, time: '09:00' }]);
      const slotsBefore = (await t.queue()).body.next_slots;

      const long = await t.create(t.post('x'.repeat(501), timing, ['threads']));
      expectError(long, 422, 'caption_too_long', { platform_slug: 'threads', limit: 500, fields: [{ path: 'text', message: expect.stringContaining('501 characters') }] });
      expectError(await t.create(t.post('no text on the photo network', timing, ['instagram'])), 422, 'platform_not_supported', { platform_slug: 'instagram' });
      const big = await t.create({ brand_id: t.brandId, target_platforms: ['instagram'], content_type: 'photo', media: [{ url: `${media.url}/big-photo.jpg` }], ...timing });
      expectError(big, 422, 'media_too_large', { platform_slug: 'instagram', limit: 8 * 1024 * 1024, fields: [{ path: 'media[0].url', message: expect.any(String) }] });
      expect(refusedPaths(await t.create(t.post(' \u200B ', timing, ['linkedin'])))).toEqual(['text']);
      expectError(await t.create({ ...t.post('unknown brand', timing), brand_id: 'brand_doesnotexist' }), 404, 'not_found');
      const second = await server().request('POST', `${t.base}/brands/${t.brandId}/connections`, { key: t.key, body: { platform_slug: 'linkedin', mode: 'sandbox', name: 'second page' } });
      expect(second.status).toBe(201);
      expectError(await t.create(t.post('which page?', timing, ['linkedin'])), 422, 'connections_required', { connections: expect.any(Array) });

      expect((await t.list('')).body.data).toEqual([]);
      // A refused queued content holds no slot.
      expect((await t.queue()).body.next_slots).toEqual(slotsBefore);
      const fine = await t.create(t.post('fine', { ...timing, target_connections: [second.body.id] }, ['linkedin']));
      expect(fine.status, fine.text).toBe(201);
    });

    it('charges nothing at scheduling, queueing, drafting, editing or canceling; a content is charged when it starts, in the cycle it publishes in', async () => {
      clock().set(T0);
      const t = await tenant(server());
      await t.setQueue('UTC', [{ days: EVERY_DAY, time: '10:00' }]);
      const nothing = { criacao_de_conteudos: 0, publicacoes: 0 };
      expect(await t.usage()).toEqual(nothing);

      const december = await created(t, t.post('in December', { publish_at: '2026-12-01T09:00:00Z' }));
      const draft = await created(t, t.post('a draft', { draft: true }));
      const queued = await created(t, t.post('queued', { queue: true }));
      const doomed = await created(t, t.post('doomed', { publish_at: '2026-11-30T09:00:00Z' }));
      expect((await t.patch(december.content_id, { text: 'in December, edited' })).status).toBe(200);
      expect((await t.patch(draft.content_id, { text: 'a draft, edited' })).status).toBe(200);
      expect((await t.patch(queued.content_id, { queue: true })).status).toBe(200);
      expect((await t.cancel(doomed.content_id)).status).toBe(200);
      expect((await t.cancel(queued.content_id)).status).toBe(200);
      expect(await t.usage()).toEqual(nothing);

      clock().set(Date.UTC(2026, 11, 1, 8, 59));
      await server().settle();
      expect(await t.usage()).toEqual(nothing);
      clock().set(Date.UTC(2026, 11, 1, 9));
      await server().settle();
      expect((await t.get(december.content_id)).body.status).toBe('published');
      // One content, two publications, counted in December's cycle ...
      expect(await t.usage()).toEqual({ criacao_de_conteudos: 1, publicacoes: 2 });
      // ... and not in November's, when it was scheduled.
      clock().set(Date.UTC(2026, 10, 30, 23));
      expect(await t.usage()).toEqual(nothing);
    });

    it('a content due while the service was down publishes within the grace and fails with schedule_missed beyond it, uncharged', async () => {
      clock().set(T0);
      const t = await tenant(server());
      const late = await created(t, t.post('late but in grace', { publish_at: '2026-11-23T13:00:00Z' }));
      const missed = await created(t, t.post('missed', { publish_at: '2026-11-23T12:30:00Z' }));
      // 14:00: the first is one hour late (the default grace), the second more.
      clock().set(Date.UTC(2026, 10, 23, 14));
      await server().settle();
      expect((await t.get(late.content_id)).body.status).toBe('published');
      const failed = (await t.get(missed.content_id)).body;
      expect(failed.status).toBe('failed');
      expect(failed.jobs.map((j) => [j.status, j.error_code])).toEqual([
        ['failed', 'schedule_missed'],
        ['failed', 'schedule_missed'],
      ]);
      expect(await t.usage()).toEqual({ criacao_de_conteudos: 1, publicacoes: 2 });
    });

    // ── time zones across DST ───────────────────────────────────────────────────────────────────────────────

    it('a local time in the spring-forward gap publishes at the first instant after it, shown as asked; never earlier', async () => {
      clock().set(Date.UTC(2026, 2, 1, 12));
      const t = await tenant(server());
      // America/New_York, 2026-03-08: 02:00 EST → 03:00 EDT (07:00Z); 02:30 does not exist.
      const gap = await created(t, t.post('in the gap', { publish_at: '2026-03-08T02:30', time_zone: 'America/New_York' }));
      expect(gap).toMatchObject({ publish_at: '2026-03-08T07:00:00.000Z', time_zone: 'America/New_York', local_publish_at: '2026-03-08T02:30' });
      expect(await created(t, t.post('before', { publish_at: '2026-03-08T01:59', time_zone: 'America/New_York' }))).toMatchObject({ publish_at: '2026-03-08T06:59:00.000Z' });
      expect(await created(t, t.post('after', { publish_at: '2026-03-08T03:00', time_zone: 'America/New_York' }))).toMatchObject({ publish_at: '2026-03-08T07:00:00.000Z', local_publish_at: '2026-03-08T03:00' });
      // Europe/Berlin, 2026-03-29: 02:00 CET → 03:00 CEST (01:00Z).
      expect(await created(t, t.post('berlin gap', { publish_at: '2026-03-29T02:30', time_zone: 'Europe/Berlin' }))).toMatchObject({ publish_at: '2026-03-29T01:00:00.000Z', local_publish_at: '2026-03-29T02:30' });

      clock().set(Date.UTC(2026, 2, 8, 6, 59, 59, 999));
      await drain();
      expect((await t.get(gap.content_id)).body.status).toBe('scheduled');
      clock().set(Date.UTC(2026, 2, 8, 7));
      await drain();
      expect((await t.get(gap.content_id)).body.status).toBe('publishing');
      await server().settle();
      expect((await t.get(gap.content_id)).body.status).toBe('published');
    });

    it('a local time that occurs twice publishes at its first occurrence; an offset picks the second', async () => {
      clock().set(Date.UTC(2026, 9, 20, 12));
      const t = await tenant(server());
      // America/New_York, 2026-11-01: 02:00 EDT → 01:00 EST; 01:30 is 05:30Z, then 06:30Z.
      expect(await created(t, t.post('first', { publish_at: '2026-11-01T01:30', time_zone: 'America/New_York' }))).toMatchObject({
        publish_at: '2026-11-01T05:30:00.000Z',
        local_publish_at: '2026-11-01T01:30',
      });
      expect(await created(t, t.post('second', { publish_at: '2026-11-01T01:30:00-05:00', time_zone: 'America/New_York' }))).toMatchObject({
        publish_at: '2026-11-01T06:30:00.000Z',
        local_publish_at: '2026-11-01T01:30',
      });
      // Europe/Berlin, 2026-10-25: 03:00 CEST → 02:00 CET; 02:30 is 00:30Z, then 01:30Z.
      expect(await created(t, t.post('berlin', { publish_at: '2026-10-25T02:30', time_zone: 'Europe/Berlin' }))).toMatchObject({ publish_at: '2026-10-25T00:30:00.000Z', local_publish_at: '2026-10-25T02:30' });
    });

    // ── queues ──────────────────────────────────────────────────────────────────────────────────────────────

    it("a queued content takes the brand's earliest free slot; next_slots leave out held slots; a cancel or a new time frees the slot", async () => {
      clock().set(T0);
      const t = await tenant(server());
      // Berlin is at 13:00: today's 18:00 comes first, then tomorrow's 10:00.
      await t.setQueue('Europe/Berlin', [{ days: EVERY_DAY, time: '10:00' }, { days: EVERY_DAY, time: '18:00' }]);
      const free = (await t.queue()).body.next_slots.map((s) => s.at);
      expect(free.slice(0, 3)).toEqual(['2026-11-23T18:00:00+01:00', '2026-11-24T10:00:00+01:00', '2026-11-24T18:00:00+01:00']);

      const first = await created(t, t.post('first', { queue: true }));
      expect(first).toMatchObject({ status: 'scheduled', publish_at: '2026-11-23T17:00:00.000Z', time_zone: 'Europe/Berlin', local_publish_at: '2026-11-23T18:00', queued: true });
      expect(first.jobs.map((j) => j.status)).toEqual(['scheduled', 'scheduled']);
      const second = await created(t, t.post('second', { queue: true }));
      expect(second).toMatchObject({ publish_at: '2026-11-24T09:00:00.000Z', local_publish_at: '2026-11-24T10:00', queued: true });
      expect((await t.queue()).body.next_slots.map((s) => s.at).slice(0, 2)).toEqual(['2026-11-24T18:00:00+01:00', '2026-11-25T10:00:00+01:00']);
      // A content scheduled at a slot's instant by publish_at holds no slot.
      expect(await created(t, t.post('not queued', { publish_at: '2026-11-24T18:00', time_zone: 'Europe/Berlin' }))).toMatchObject({ queued: false });
      expect((await t.queue()).body.next_slots[0]!.at).toBe('2026-11-24T18:00:00+01:00');

      expect((await t.cancel(first.content_id)).body.queued).toBe(false);
      expect((await t.queue()).body.next_slots[0]!.at).toBe('2026-11-23T18:00:00+01:00');
      const third = await created(t, t.post('third', { queue: true }));
      expect(third.publish_at).toBe('2026-11-23T17:00:00.000Z');

      // Moved to a time of its own, the second lets its slot go.
      const moved = await t.patch(second.content_id, { publish_at: '2026-11-30T12:00:00Z' });
      expect(moved.body).toMatchObject({ status: 'scheduled', publish_at: '2026-11-30T12:00:00.000Z', queued: false });
      expect((await t.queue()).body.next_slots[0]!.at).toBe('2026-11-24T10:00:00+01:00');
    });

    it('20 queued contents created at once take 20 distinct, consecutive slots', async () => {
      clock().set(T0);
      const t = await tenant(server(), ['linkedin']);
      await t.setQueue('America/New_York', [{ days: EVERY_DAY, time: '09:00' }, { days: ['mon', 'wed', 'fri'], time: '17:30' }]);
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => t.create(t.post(`queued ${i}`, { queue: true }))));
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 201));
      const taken = answers.map((a) => Date.parse(a.body.publish_at!)).sort((a, b) => a - b);
      expect(new Set(taken).size).toBe(20);

      // The same 20 slots, one after another, from an empty queue of the same shape.
      const expected: string[] = [];
      const u = await tenant(server(), ['linkedin']);
      await u.setQueue('America/New_York', [{ days: EVERY_DAY, time: '09:00' }, { days: ['mon', 'wed', 'fri'], time: '17:30' }]);
      for (let i = 0; i < 20; i++) expected.push((await created(u, u.post(`one by one ${i}`, { queue: true }))).publish_at!);
      expect(taken.map((ms) => new Date(ms).toISOString())).toEqual(expected);
      expect(expected.slice(0, 3)).toEqual(['2026-11-23T14:00:00.000Z', '2026-11-23T22:30:00.000Z', '2026-11-24T14:00:00.000Z']);

      // The queue's next free slot is the 21st.
      const next = (await t.queue()).body.next_slots[0]!.at;
      expect(Date.parse(next)).toBeGreaterThan(taken.at(-1)!);
      expect(Date.parse(next)).toBe(Date.parse((await created(u, u.post('21st', { queue: true }))).publish_at!));
    });

    // ── edits ───────────────────────────────────────────────────────────────────────────────────────────────

    it('PATCH changes text, targets, connections, content type and media of a scheduled content, rebuilding its jobs; null clears an optional field', async () => {
      clock().set(T0);
      const t = await tenant(server(), ['facebook', 'linkedin']);
      const content = await created(t, t.post('before', { publish_at: '2026-11-25T09:00:00Z' }));
      const id = content.content_id;

      const text = await t.patch(id, { text: 'after' });
      expect(text.status, text.text).toBe(200);
      expect(text.body).toMatchObject({ content_id: id, status: 'scheduled', text: 'after', publish_at: '2026-11-25T09:00:00.000Z', target_platforms: ['facebook', 'linkedin'] });
      expect(text.body.updated_at).toBe('2026-11-23T12:00:00.000Z');

      const narrowed = await t.patch(id, { target_platforms: ['linkedin'] });
      expect(narrowed.body.target_platforms).toEqual(['linkedin']);
      expect(narrowed.body.jobs.map((j) => [j.platform_slug, j.connection_id, j.status])).toEqual([['linkedin', t.connections.linkedin, 'scheduled']]);

      const page = await server().request<{ id: string }>('POST', `${t.base}/brands/${t.brandId}/connections`, { key: t.key, body: { platform_slug: 'linkedin', mode: 'sandbox', name: 'second page' } });
      expectError(await t.patch(id, { text: 'which page?' }), 422, 'connections_required', { connections: expect.any(Array) });
      const chosen = await t.patch(id, { target_connections: [page.body.id] });
      expect(chosen.body.jobs.map((j) => j.connection_id)).toEqual([page.body.id]);
      expectError(await t.patch(id, { target_connections: null }), 422, 'connections_required', { connections: expect.any(Array) });

      const photo = await t.upload('image/jpeg', 1024);
      const asPhoto = await t.patch(id, { content_type: 'photo', media: [{ media_id: photo }], target_platforms: ['facebook'], target_connections: null });
      expect(asPhoto.status, asPhoto.text).toBe(200);
      expect(asPhoto.body).toMatchObject({ content_type: 'photo', target_platforms: ['facebook'], text: 'after', media: [{ media_id: photo }] });
      expect(asPhoto.body.jobs.map((j) => [j.platform_slug, j.connection_id])).toEqual([['facebook', t.connections.facebook]]);
      // A photo needs its media: clearing it is refused and changes nothing.
      expect(refusedPaths(await t.patch(id, { media: null }))).toEqual(['media']);
      const captionless = await t.patch(id, { text: null });
      expect(captionless.body).toMatchObject({ content_type: 'photo', text: null });
      expect((await t.get(id)).body).toMatchObject({ content_type: 'photo', text: null, status: 'scheduled', publish_at: '2026-11-25T09:00:00.000Z' });
    });

    it('PATCH checks the edited content again: caption_too_long, titles, overrides; a refused edit changes nothing', async () => {
      clock().set(T0);
      const t = await tenant(server(), ['threads', 'linkedin', 'youtube']);
      const short = await created(t, t.post('short', { publish_at: '2026-11-25T09:00:00Z' }, ['threads', 'linkedin']));
      const id = short.content_id;
      expectError(await t.patch(id, { text: 'x'.repeat(501) }), 422, 'caption_too_long', { platform_slug: 'threads', limit: 500, fields: [{ path: 'text', message: expect.any(String) }] });
      expect((await t.get(id)).body.text).toBe('short');

      // An override is what its platform publishes: too long there is refused at its path ...
      expectError(await t.patch(id, { overrides: { threads: { text: 'y'.repeat(501) } } }), 422, 'caption_too_long', {
        platform_slug: 'threads',
        limit: 500,
        fields: [{ path: 'overrides.threads.text', message: expect.any(String) }],
      });
      // ... and a short one lets a long shared text through, until it is cleared.
      expect((await t.patch(id, { overrides: { threads: { text: 'short on threads' } } })).status).toBe(200);
      expect((await t.patch(id, { text: 'x'.repeat(600) })).body.text).toBe('x'.repeat(600));
      expectError(await t.patch(id, { overrides: null }), 422, 'caption_too_long', { platform_slug: 'threads', limit: 500, fields: [{ path: 'text', message: expect.any(String) }] });
      expect(refusedPaths(await t.patch(id, { overrides: { youtube: { text: 'not a target' } } }))).toEqual(['overrides.youtube']);

      const video = await t.upload('video/mp4', 2048);
      const clip = await created(t, { brand_id: t.brandId, target_platforms: ['youtube'], content_type: 'video', title: 'First', media: [{ media_id: video }], draft: true });
      expect((await t.patch(clip.content_id, { title: 'Second' })).body.title).toBe('Second');
      expectError(await t.patch(clip.content_id, { title: 't'.repeat(101) }), 422, 'caption_too_long', { platform_slug: 'youtube', limit: 100, fields: [{ path: 'title', message: expect.any(String) }] });
      expect(refusedPaths(await t.patch(clip.content_id, { title: null }))).toEqual(['title']);
      expect((await t.get(clip.content_id)).body).toMatchObject({ title: 'Second', status: 'draft' });

      // An edit names at least one field, and never the brand.
      expect((await t.patch(id, {})).status).toBe(400);
      expect((await t.patch(id, { brand_id: t.brandId })).status).toBe(400);
      expect(refusedPaths(await t.patch(id, { text: '   ' }))).toEqual(['text']);
    });

    it('PATCH moves the time: a draft gets a time, joins the queue, goes back to draft; a local time keeps the content zone', async () => {
      clock().set(T0);
      const t = await tenant(server());
      await t.setQueue('UTC', [{ days: EVERY_DAY, time: '15:00' }]);
      const draft = await created(t, t.post('draft', { draft: true }));
      expect(draft).toMatchObject({ status: 'draft', publish_at: null, time_zone: null, local_publish_at: null, queued: false, jobs: [] });
      const id = draft.content_id;

      const timed = await t.patch(id, { publish_at: '2026-11-25T09:00', time_zone: 'Asia/Tokyo' });
      expect(timed.body).toMatchObject({ status: 'scheduled', publish_at: '2026-11-25T00:00:00.000Z', time_zone: 'Asia/Tokyo', local_publish_at: '2026-11-25T09:00', queued: false });
      expect(timed.body.jobs.map((j) => [j.platform_slug, j.status]).sort()).toEqual([
        ['facebook', 'scheduled'],
        ['linkedin', 'scheduled'],
      ]);
      // A new local time without a zone is read in the content's zone, not the queue's.
      expect((await t.patch(id, { publish_at: '2026-11-26T10:00' })).body).toMatchObject({ publish_at: '2026-11-26T01:00:00.000Z', time_zone: 'Asia/Tokyo', local_publish_at: '2026-11-26T10:00' });
      // An edit of other fields keeps the time.
      expect((await t.patch(id, { text: 'still at its time' })).body).toMatchObject({ publish_at: '2026-11-26T01:00:00.000Z', time_zone: 'Asia/Tokyo' });

      const queued = await t.patch(id, { queue: true });
      expect(queued.body).toMatchObject({ status: 'scheduled', publish_at: '2026-11-23T15:00:00.000Z', time_zone: 'UTC', local_publish_at: '2026-11-23T15:00', queued: true });
      // Asking for the queue again keeps the slot it holds.
      expect((await t.patch(id, { queue: true })).body.publish_at).toBe('2026-11-23T15:00:00.000Z');

      const back = await t.patch(id, { draft: true });
      expect(back.body).toMatchObject({ status: 'draft', publish_at: null, time_zone: null, local_publish_at: null, queued: false, jobs: [] });
      expect((await t.queue()).body.next_slots[0]!.at).toBe('2026-11-23T15:00:00+00:00');

      expect(refusedPaths(await t.patch(id, { publish_at: '2026-11-22T09:00:00Z' }))).toEqual(['publish_at']);
      expect(refusedPaths(await t.patch(id, { publish_at: '2026-11-25T09:00:00Z', queue: true }))).toEqual(['queue']);
      expect(refusedPaths(await t.patch(id, { time_zone: 'Europe/Berlin' }))).toEqual(['time_zone']);
      // An impossible local time is refused under the field it was written in, with or without a zone.
      for (const publish_at of ['2026-12-01T24:00', '2026-02-30T09:00', '2026-12-01T09:60']) {
        expect(refusedPaths(await t.patch(id, { publish_at, time_zone: 'Asia/Tokyo' })), publish_at).toEqual(['publish_at']);
        expect(refusedPaths(await t.patch(id, { publish_at })), publish_at).toEqual(['publish_at']);
      }
      expect((await t.get(id)).body.status).toBe('draft');
    });

    it('409 content_not_editable, with the status, once publishing started, finished or the content was canceled', async () => {
      clock().set(T0);
      const t = await tenant(server());
      const soon = await created(t, t.post('soon', { publish_at: '2026-11-23T13:00:00Z' }));
      const id = soon.content_id;
      clock().set(Date.UTC(2026, 10, 23, 13));
      await drain();
      const refusedAs = async (contentId: string, status: string) => {
        expectError(await t.patch(contentId, { text: 'too late' }), 409, 'content_not_editable', { status });
        expectError(await t.publish(contentId), 409, 'content_not_editable', { status });
        if (status !== 'canceled') expectError(await t.cancel(contentId), 409, 'content_not_editable', { status });
      };
      await refusedAs(id, 'publishing');
      await server().settle();
      await refusedAs(id, 'published');
      expect((await t.get(id)).body.text).toBe('soon');

      const now = await created(t, t.post('now'));
      await refusedAs(now.content_id, 'publishing');

      const failing = await created(t, t.post('fails', { publish_at: '2026-11-23T14:00:00Z', sandbox_outcomes: { facebook: 'media_unsupported_format', linkedin: 'media_unsupported_format' } }));
      clock().set(Date.UTC(2026, 10, 23, 14));
      await server().settle();
      await refusedAs(failing.content_id, 'failed');

      const doomed = await created(t, t.post('doomed', { draft: true }));
      const canceledAt = new Date(clock().now()).toISOString();
      const canceled = await t.cancel(doomed.content_id);
      expect(canceled.body).toMatchObject({ status: 'canceled', completed_at: canceledAt });
      await refusedAs(doomed.content_id, 'canceled');
      // Canceling a canceled content answers it again.
      const again = await t.cancel(doomed.content_id);
      expect([again.status, again.body.status]).toEqual([200, 'canceled']);
    });

    it('Idempotency-Key on PATCH, cancel and publish: the same request replays the first answer, another one conflicts', async () => {
      clock().set(T0);
      const t = await tenant(server());
      const a = await created(t, t.post('a', { publish_at: '2026-11-25T09:00:00Z' }));
      const b = await created(t, t.post('b', { publish_at: '2026-11-25T10:00:00Z' }));
      const c = await created(t, t.post('c', { draft: true }));

      const edit = await t.patch(a.content_id, { text: 'a, edited' }, 'edit-1');
      expect([edit.status, edit.headers.get('idempotent-replayed')]).toEqual([200, null]);
      clock().advance(1000);
      // Changed meanwhile: the replay still answers the first outcome, and does not apply it again.
      expect((await t.patch(a.content_id, { text: 'a, edited twice' })).status).toBe(200);
      const replay = await t.patch(a.content_id, { text: 'a, edited' }, 'edit-1');
      expect([replay.status, replay.headers.get('idempotent-replayed')]).toEqual([200, 'true']);
      expect(replay.body).toEqual(edit.body);
      expect((await t.get(a.content_id)).body.text).toBe('a, edited twice');
      expectError(await t.patch(a.content_id, { text: 'something else' }, 'edit-1'), 409, 'idempotency_conflict');
      expectError(await t.patch(b.content_id, { text: 'a, edited' }, 'edit-1'), 409, 'idempotency_conflict');
      expect((await t.get(b.content_id)).body.text).toBe('b');
      // A malformed key is refused before anything runs.
      expect(refusedPaths(await t.patch(a.content_id, { text: 'x' }, 'two words'))).toEqual(['Idempotency-Key']);

      const cancel = await t.cancel(a.content_id, 'cancel-1');
      expect(cancel.status).toBe(200);
      const cancelReplay = await t.cancel(a.content_id, 'cancel-1');
      expect([cancelReplay.status, cancelReplay.headers.get('idempotent-replayed')]).toEqual([200, 'true']);
      expect(cancelReplay.body).toEqual(cancel.body);
      expectError(await t.cancel(b.content_id, 'cancel-1'), 409, 'idempotency_conflict');
      expectError(await t.publish(a.content_id, 'cancel-1'), 409, 'idempotency_conflict');
      expect((await t.get(b.content_id)).body.status).toBe('scheduled');

      const publish = await t.publish(c.content_id, 'publish-1');
      expect([publish.status, publish.body.status]).toEqual([200, 'publishing']);
      const publishReplay = await t.publish(c.content_id, 'publish-1');
      expect([publishReplay.status, publishReplay.headers.get('idempotent-replayed')]).toEqual([200, 'true']);
      expect(publishReplay.body).toEqual(publish.body);
      expectError(await t.publish(b.content_id, 'publish-1'), 409, 'idempotency_conflict');
      expectError(await t.cancel(c.content_id, 'publish-1'), 409, 'idempotency_conflict');
      expect((await t.get(b.content_id)).body.status).toBe('scheduled');
      // Published and charged once.
      expect(await t.usage()).toEqual({ criacao_de_conteudos: 1, publicacoes: 2 });
      // An error is replayed too: the first answer under a key is the answer.
      expectError(await t.publish(c.content_id, 'publish-2'), 409, 'content_not_editable', { status: 'publishing' });
      await server().settle();
      const errorReplay = await t.publish(c.content_id, 'publish-2');
      expectError(errorReplay, 409, 'content_not_editable', { status: 'publishing' });
      expect(errorReplay.headers.get('idempotent-replayed')).toBe('true');
    });

    it('parallel PATCHes of different fields are all kept (none is lost to another)', async () => {
      clock().set(T0);
      const t = await tenant(server(), ['linkedin', 'facebook', 'youtube']);
      const video = await t.upload('video/mp4', 2048);
      for (let round = 0; round < 3; round++) {
        const content = await created(t, { brand_id: t.brandId, target_platforms: ['linkedin'], content_type: 'video', text: 'v0', title: 'T0', media: [{ media_id: video }], publish_at: '2026-11-25T09:00:00Z' });
        const id = content.content_id;
        const edits = [
          { text: `text ${round}` },
          { title: `title ${round}` },
          { publish_at: `2026-11-2${6 + round}T09:00:00Z` },
          { target_platforms: ['linkedin', 'youtube'] },
        ];
        const answers = await Promise.all(edits.map((body) => t.patch(id, body)));
        expect(answers.map((a) => a.status), answers.map((a) => a.text).join('\n')).toEqual(edits.map(() => 200));
        const final = (await t.get(id)).body;
        expect(final).toMatchObject({ text: `text ${round}`, title: `title ${round}`, publish_at: `2026-11-2${6 + round}T09:00:00.000Z`, target_platforms: ['linkedin', 'youtube'], status: 'scheduled' });
        // The jobs follow the last write: one per target, all waiting for the final time.
        expect(final.jobs.map((j) => [j.platform_slug, j.status]).sort()).toEqual([
          ['linkedin', 'scheduled'],
          ['youtube', 'scheduled'],
        ]);
      }
    });

    // ── cancel and publish now ──────────────────────────────────────────────────────────────────────────────

    it('cancel removes the jobs and frees nothing charged; a canceled content never publishes after its time', async () => {
      clock().set(T0);
      const t = await tenant(server());
      const content = await created(t, t.post('never', { publish_at: '2026-11-23T13:00:00Z' }));
      const canceled = await t.cancel(content.content_id);
      expect(canceled.status).toBe(200);
      expect(canceled.body).toMatchObject({ content_id: content.content_id, status: 'canceled', queued: false, jobs: [], completed_at: '2026-11-23T12:00:00.000Z' });
      const jobs = await server().container.db.kysely.selectFrom('jobs').select('id').where('content_id', '=', content.content_id).execute();
      expect(jobs).toEqual([]);

      clock().set(Date.UTC(2026, 10, 23, 13));
      await server().settle();
      clock().set(Date.UTC(2026, 10, 24, 13));
      await server().settle();
      expect((await t.get(content.content_id)).body).toMatchObject({ status: 'canceled', jobs: [] });
      expect(await t.usage()).toEqual({ criacao_de_conteudos: 0, publicacoes: 0 });
      const posts = await server().container.db.kysely.selectFrom('sandbox_posts').select('id').where('connection_id', 'in', Object.values(t.connections)).execute();
      expect(posts).toEqual([]);
    });

    it('publish now starts a scheduled content at once, on its own jobs, charged once; its old time passes without a second start', async () => {
      clock().set(T0);
      const t = await tenant(server());
      await t.setQueue('UTC', [{ days: EVERY_DAY, time: '15:00' }]);
      const content = await created(t, t.post('early', { queue: true }));
      expect(content.publish_at).toBe('2026-11-23T15:00:00.000Z');
      clock().advance(60_000);
      const now = await t.publish(content.content_id);
      expect(now.status, now.text).toBe(200);
      expect(now.body).toMatchObject({ status: 'publishing', publish_at: '2026-11-23T12:01:00.000Z', time_zone: null, local_publish_at: null, queued: false });
      expect(now.body.jobs.map((j) => [j.job_id, j.status]).sort()).toEqual(content.jobs.map((j) => [j.job_id, 'queued']).sort());
      expect(await t.usage()).toEqual({ criacao_de_conteudos: 1, publicacoes: 2 });
      // Its slot is free again.
      expect((await t.queue()).body.next_slots[0]!.at).toBe('2026-11-23T15:00:00+00:00');

      await server().settle();
      clock().set(Date.UTC(2026, 10, 23, 16));
      await server().settle();
      const after = (await t.get(content.content_id)).body;
      expect(after.status).toBe('published');
      expect(after.jobs).toHaveLength(2);
      expect(await t.usage()).toEqual({ criacao_de_conteudos: 1, publicacoes: 2 });
      expectError(await t.publish(content.content_id), 409, 'content_not_editable', { status: 'published' });
    });

    it('publish now checks a draft again first; then publishes and charges it', async () => {
      clock().set(T0);
      const t = await tenant(server(), ['linkedin']);
      const draft = await created(t, t.post('draft', { draft: true }));
      // Saved while the brand had one page; a second page makes the target ambiguous.
      const page = await server().request<{ id: string }>('POST', `${t.base}/brands/${t.brandId}/connections`, { key: t.key, body: { platform_slug: 'linkedin', mode: 'sandbox', name: 'second page' } });
      expectError(await t.publish(draft.content_id), 422, 'connections_required', { connections: expect.any(Array) });
      expect((await t.get(draft.content_id)).body.status).toBe('draft');
      expect(await t.usage()).toEqual({ criacao_de_conteudos: 0, publicacoes: 0 });

      expect((await t.patch(draft.content_id, { target_connections: [page.body.id] })).body.status).toBe('draft');
      const now = await t.publish(draft.content_id);
      expect(now.status, now.text).toBe(200);
      expect(now.body).toMatchObject({ status: 'publishing', publish_at: '2026-11-23T12:00:00.000Z' });
      expect(now.body.jobs.map((j) => [j.connection_id, j.status])).toEqual([[page.body.id, 'queued']]);
      expect(await t.usage()).toEqual({ criacao_de_conteudos: 1, publicacoes: 1 });
      await server().settle();
      expect((await t.get(draft.content_id)).body.status).toBe('published');
      expectError(await t.publish(draft.content_id), 409, 'content_not_editable', { status: 'published' });
    });

    // ── calendar feed ───────────────────────────────────────────────────────────────────────────────────────

    it('the calendar feed lists publish_at in [from, to), earliest first, filtered by status, with a stable cursor', async () => {
      clock().set(T0);
      const t = await tenant(server(), ['linkedin']);
      const at = async (text: string, publish_at: string) => (await created(t, t.post(text, { publish_at }))).content_id;
      const edge = await at('at from', '2026-11-24T00:00:00Z');
      const tied = [await at('tie 1', '2026-11-24T09:00:00Z'), await at('tie 2', '2026-11-24T09:00:00Z'), await at('tie 3', '2026-11-24T09:00:00Z')].sort();
      const later = await at('later', '2026-11-25T18:00:00Z');
      await at('at to', '2026-11-26T00:00:00Z');
      await at('before', '2026-11-23T23:59:59.999Z');
      const canceled = await at('canceled', '2026-11-24T12:00:00Z');
      await t.cancel(canceled);
      await created(t, t.post('a draft', { draft: true }));
      const now = await created(t, t.post('published now'));

      const window = 'from=2026-11-24T00:00:00Z&to=2026-11-26T00:00:00Z';
      const scheduled = await t.list(`status=scheduled&${window}`);
      expect(scheduled.status, scheduled.text).toBe(200);
      expect(scheduled.body.data.map((c) => c.content_id)).toEqual([edge, ...tied, later]);
      expect(scheduled.body.next_cursor).toBeNull();
      expect((await t.list(`status=canceled&${window}`)).body.data.map((c) => c.content_id)).toEqual([canceled]);
      // Without a status: every content with a time in the window, drafts (no time) never.
      expect((await t.list(window)).body.data.map((c) => c.content_id)).toEqual([edge, ...tied, canceled, later]);
      // Offsets in the window name the same instants.
      expect((await t.list(`status=scheduled&from=${encodeURIComponent('2026-11-23T19:00:00-05:00')}&to=${encodeURIComponent('2026-11-26T01:00:00+01:00')}`)).body.data.map((c) => c.content_id)).toEqual([edge, ...tied, later]);
      // One bound alone.
      expect((await t.list('status=publishing&to=2026-11-24T00:00:00Z')).body.data.map((c) => c.content_id)).toEqual([now.content_id]);
      expect((await t.list('status=scheduled&from=2026-11-25T00:00:00Z')).body.data.map((c) => c.text)).toEqual(['later', 'at to']);

      // Page by page, two at a time: the same order, nothing twice, nothing skipped, even as contents are added.
      const seen: string[] = [];
      let cursor: string | null = null;
      let ahead = '';
      let pages = 0;
      do {
        const page: ApiResponse<{ data: Content[]; next_cursor: string | null }> = await t.list(`status=scheduled&${window}&limit=2${cursor === null ? '' : `&cursor=${cursor}`}`);
        expect(page.status, page.text).toBe(200);
        seen.push(...page.body.data.map((c) => c.content_id));
        cursor = page.body.next_cursor;
        if (pages === 0) {
          // Behind the cursor (before the page just read): not shown; ahead of it: shown in its place.
          await at('behind', '2026-11-24T00:00:00Z');
          ahead = await at('ahead', '2026-11-25T12:00:00Z');
        }
        pages++;
      } while (cursor !== null);
      expect(seen).toEqual([edge, ...tied, ahead, later]);
      expect(pages).toBe(3);
    });

    it('the calendar feed refuses to <= from, a malformed bound, and a cursor of the other order; another workspace sees nothing', async () => {
      clock().set(T0);
      const t = await tenant(server(), ['linkedin']);
      for (let i = 0; i < 3; i++) await created(t, t.post(`c${i}`, { publish_at: `2026-11-2${4 + i}T09:00:00Z` }));
      expect(refusedPaths(await t.list('from=2026-11-25T00:00:00Z&to=2026-11-24T00:00:00Z'))).toEqual(['to']);
      expect(refusedPaths(await t.list('from=2026-11-25T00:00:00Z&to=2026-11-25T00:00:00Z'))).toEqual(['to']);
      expect(refusedPaths(await t.list('from=tomorrow'))).toEqual(['from']);
      expect(refusedPaths(await t.list('to=2026-11-25'))).toEqual(['to']);

      const calendar = (await t.list('from=2026-11-24T00:00:00Z&limit=1')).body.next_cursor;
      const plain = (await t.list('limit=1')).body.next_cursor;
      expect(calendar).not.toBeNull();
      expect(plain).not.toBeNull();
      expect(refusedPaths(await t.list(`limit=1&cursor=${calendar}`))).toEqual(['cursor']);
      expect(refusedPaths(await t.list(`from=2026-11-24T00:00:00Z&limit=1&cursor=${plain}`))).toEqual(['cursor']);

      const other = await tenant(server(), ['linkedin']);
      const theirs = await other.list('status=scheduled&from=2026-11-01T00:00:00Z&to=2026-12-01T00:00:00Z');
      expect([theirs.status, theirs.body.data]).toEqual([200, []]);
      const foreign = await server().request('GET', `${t.base}/contents?status=scheduled&from=2026-11-01T00:00:00Z`, { key: other.key });
      expectError(foreign, 403, 'forbidden');
    });

    // ── brands and authorization ────────────────────────────────────────────────────────────────────────────

    it("deleting a brand cancels its scheduled, queued and draft contents, which never publish; another brand's stay", async () => {
      clock().set(T0);
      const t = await tenant(server(), ['linkedin']);
      await t.setQueue('UTC', [{ days: EVERY_DAY, time: '14:00' }]);
      const scheduled = await created(t, t.post('scheduled', { publish_at: '2026-11-23T13:00:00Z' }));
      const queued = await created(t, t.post('queued', { queue: true }));
      const draft = await created(t, t.post('draft', { draft: true }));
      const published = await created(t, t.post('published'));
      await server().settle();

      const kept = await server().request<{ id: string }>('POST', `${t.base}/brands`, { key: t.key, body: { name: 'Kept' } });
      await server().request('POST', `${t.base}/brands/${kept.body.id}/connections`, { key: t.key, body: { platform_slug: 'linkedin', mode: 'sandbox', name: '@kept' } });
      const other = await created(t, { ...t.post('other brand', { publish_at: '2026-11-23T13:00:00Z' }), brand_id: kept.body.id });

      const deletedAt = new Date(clock().now()).toISOString();
      const deleted = await server().request('DELETE', `${t.base}/brands/${t.brandId}`, { key: t.key });
      expect(deleted.status, deleted.text).toBe(204);
      for (const c of [scheduled, queued, draft]) expect((await t.get(c.content_id)).body).toMatchObject({ status: 'canceled', queued: false, jobs: [], completed_at: deletedAt });
      expect((await t.get(published.content_id)).body.status).toBe('published');

      clock().set(Date.UTC(2026, 10, 23, 14));
      await server().settle();
      for (const c of [scheduled, queued, draft]) expect((await t.get(c.content_id)).body.status).toBe('canceled');
      expect((await t.get(other.content_id)).body.status).toBe('published');
      expect(await t.usage()).toEqual({ criacao_de_conteudos: 2, publicacoes: 2 });
    });

    it("another workspace's key is refused (403) on PATCH, cancel and publish; an unknown content is 404", async () => {
      clock().set(T0);
      const victim = await tenant(server(), ['linkedin']);
      const attacker = await tenant(server(), ['linkedin']);
      const content = await created(victim, victim.post('mine', { publish_at: '2026-11-25T09:00:00Z' }));
      const id = content.content_id;
      const call = (key: string, method: string, path: string, body?: unknown) => server().request(method, path, { key, body });
      const mine = `${victim.base}/contents/${id}`;
      expectError(await call(attacker.key, 'PATCH', mine, { text: 'hijacked' }), 403, 'forbidden');
      expectError(await call(attacker.key, 'POST', `${mine}/cancel`), 403, 'forbidden');
      expectError(await call(attacker.key, 'POST', `${mine}/publish`), 403, 'forbidden');
      // Through its own workspace, the victim's content does not exist.
      const theirs = `${attacker.base}/contents/${id}`;
      expectError(await call(attacker.key, 'PATCH', theirs, { text: 'hijacked' }), 404, 'not_found');
      expectError(await call(attacker.key, 'POST', `${theirs}/cancel`), 404, 'not_found');
      expectError(await call(attacker.key, 'POST', `${theirs}/publish`), 404, 'not_found');
      expect((await victim.get(id)).body).toMatchObject({ text: 'mine', status: 'scheduled' });
      expect(await victim.usage()).toEqual({ criacao_de_conteudos: 0, publicacoes: 0 });

      for (const unknown of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
        const path = `${victim.base}/contents/${unknown}`;
        expectError(await victim.patch(unknown, { text: 'x' }), 404, 'not_found');
        expectError(await victim.cancel(unknown), 404, 'not_found');
        expectError(await victim.publish(unknown), 404, 'not_found');
        expectError(await call(victim.key, 'GET', path), 404, 'not_found');
      }
    });
  },
  // The media host listens on 127.0.0.1.
  { ALLOW_LOCAL_URLS: 'true' },
  () => ({ clock: new ManualClock(T0), workers: false }),
);
