import { createHmac, timingSafeEqual } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { publicUrlProblem } from '../../src/outbound/url-rule.js';
import { verifyWebhook } from '../../src/webhooks/signature.js';
import { walkDeliveries } from '../support/deliveries.js';
import { brandWithConnections } from '../support/factories.js';
import { startReceiver } from '../support/receiver.js';
import { describeEachDb, startTestServerOn, type TestServer } from '../support/server.js';

type Receiver = Awaited<ReturnType<typeof startReceiver>>;
const MIN = 60_000;

const mode: Record<string, number> = {};
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver((path) => mode[path] ?? 200);
});
afterAll(() => receiver.close());

/** Our own HMAC check, independent of the service's code. */
function signatureOk(secret: string, headers: Record<string, unknown>, raw: string): boolean {
  const expected = `sha256=${createHmac('sha256', secret).update(`${String(headers['service-timestamp'])}.${raw}`).digest('hex')}`;
  const given = String(headers['service-signature']);
  return given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}

async function endpoint(server: TestServer, key: string, wsId: string, path: string, events = ['content.published', 'content.partial', 'content.failed', 'connection.expired']) {
  const res = await server.request('POST', `/api/v1/workspaces/${wsId}/webhooks`, {
    key,
    body: { url: `${receiver.url}${path}`, description: 'test', enabled_events: events },
  });
  expect(res.status).toBe(201);
  return res.body as { id: string; secret: string };
}

async function publishText(server: TestServer, key: string, wsId: string, brandId: string, extra: Record<string, unknown> = {}) {
  const res = await server.request('POST', `/api/v1/workspaces/${wsId}/contents`, {
    key,
    body: { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: 'hi', ...extra },
  });
  expect(res.status).toBe(201);
  return res.body.content_id as string;
}

async function deliveriesOf(server: TestServer, key: string, wsId: string, whId: string, query = '') {
  const res = await server.request('GET', `/api/v1/workspaces/${wsId}/webhooks/${whId}/deliveries${query}`, { key });
  expect(res.status).toBe(200);
  return res.body.data as { id: string; status: string; event_id: string; attempt_count: number; next_attempt_at: string | null; attempts: { number: number; at: string; http_status: number | null; manual: boolean; error: string | null }[] }[];
}

describeEachDb(
  'webhooks',
  (server, kind) => {
    const P = (path: string) => `/${kind.name}${path}`;
    it('creates an endpoint with a whsec_ secret shown once and stored sealed; list, update and delete', async () => {
      const ws = await server().workspace();
      const created = await endpoint(server(), ws.api_key, ws.workspace_id, P('/crud'), ['content.published']);
      expect(created).toMatchObject({ id: expect.stringMatching(/^wh_/), secret: expect.stringMatching(/^whsec_[0-9a-f]{48}$/), active: true, enabled_events: ['content.published'] });
      const row = await server().container.db.kysely.selectFrom('webhooks').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
      expect(JSON.stringify(row)).not.toContain(created.secret);
      const list = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/webhooks`, { key: ws.api_key });
      expect(list.text).not.toContain(created.secret);
      const updated = await server().request('PATCH', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${created.id}`, {
        key: ws.api_key,
        body: { enabled_events: ['content.failed', 'connection.expired'], active: false },
      });
      expect(updated.body).toMatchObject({ enabled_events: ['content.failed', 'connection.expired'], active: false });
      const bad = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/webhooks`, {
        key: ws.api_key,
        body: { url: `${receiver.url}/x`, description: '', enabled_events: ['content.exploded'] },
      });
      expect(bad.status).toBe(400);
      expect(bad.body.message).toMatch(/^enabled_events\[0\] must be one of /);
      expect((await server().request('DELETE', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${created.id}`, { key: ws.api_key })).status).toBe(204);
      expect((await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${created.id}`, { key: ws.api_key })).status).toBe(404);
    });

    it('delivers a signed content.published event with exactly the spec headers; our own HMAC agrees', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['linkedin']);
      const hook = await endpoint(server(), ws.api_key, ws.workspace_id, P('/signed'));
      const contentId = await publishText(server(), ws.api_key, ws.workspace_id, brandId);
      await server().settle();
      await walkDeliveries(server());
      const got = receiver.received.filter((r) => r.path === P('/signed'));
      expect(got).toHaveLength(1);
      const { headers, rawBody } = got[0]!;
      expect(headers['content-type']).toBe('application/json');
      expect(headers['service-timestamp']).toBe(String(Math.floor((server().container.clock as ManualClock).now() / 1000)));
      expect(headers['service-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
      expect(headers['service-webhook-id']).toBe(hook.id);
      expect(headers['service-delivery-id']).toMatch(/^del_/);
      expect(signatureOk(hook.secret, headers, rawBody)).toBe(true);
      expect(signatureOk(`${hook.secret}x`, headers, rawBody)).toBe(false);
      expect(verifyWebhook({ secret: hook.secret, headers, rawBody, now: new Date((server().container.clock as ManualClock).now()) }).valid).toBe(true);
      const event = JSON.parse(rawBody) as Record<string, unknown>;
      expect(event).toMatchObject({
        id: expect.stringMatching(/^evt_/),
        type: 'content.published',
        created_at: expect.stringMatching(/Z$/),
        data: { content_id: contentId, workspace_id: ws.workspace_id, jobs: [{ platform_slug: 'linkedin', status: 'published', external_post_url: expect.stringMatching(/^https:/), error_code: null }] },
      });
      const [delivery] = await deliveriesOf(server(), ws.api_key, ws.workspace_id, hook.id);
      expect(delivery).toMatchObject({ id: headers['service-delivery-id'], status: 'delivered', event_id: event.id, attempt_count: 1 });
    });

    it('walks the whole retry schedule, goes dead, and a redelivery then succeeds on the same delivery id', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['linkedin']);
      const hook = await endpoint(server(), ws.api_key, ws.workspace_id, P('/always-500'), ['content.published']);
      mode[P('/always-500')] = 500;
      await publishText(server(), ws.api_key, ws.workspace_id, brandId);
      await server().settle();
      await walkDeliveries(server());
      const [dead] = await deliveriesOf(server(), ws.api_key, ws.workspace_id, hook.id);
      expect(dead?.status).toBe('dead');
      const times = dead!.attempts.map((a) => Date.parse(a.at));
      const gaps = times.slice(1).map((t, i) => t - times[i]!);
      expect(gaps).toEqual([1 * MIN, 5 * MIN, 30 * MIN, 120 * MIN, 720 * MIN]);
      expect(dead!.attempts.map((a) => a.http_status)).toEqual([500, 500, 500, 500, 500, 500]);
      expect(dead!.attempts[0]?.error).toBe('The endpoint answered HTTP 500.');
      expect((await deliveriesOf(server(), ws.api_key, ws.workspace_id, hook.id, '?status=failed')).map((d) => d.id)).toEqual([dead!.id]);

      mode[P('/always-500')] = 200;
      const again = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/deliveries/${dead!.id}/redeliver`, { key: ws.api_key });
      expect(again.status).toBe(202);
      expect(again.body).toMatchObject({ id: dead!.id, status: 'pending' });
      await walkDeliveries(server());
      const done = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/deliveries/${dead!.id}`, { key: ws.api_key });
      expect(done.body).toMatchObject({ status: 'delivered', attempt_count: 7 });
      const last = (done.body.attempts as { manual: boolean; http_status: number }[]).at(-1);
      expect(last).toEqual(expect.objectContaining({ manual: true, http_status: 200 }));
      const ids = receiver.received.filter((r) => r.path === P('/always-500')).map((r) => r.headers['service-delivery-id']);
      expect(new Set(ids)).toEqual(new Set([dead!.id]));
      expect(ids).toHaveLength(7);
    });

    it.each([
      [408, 'pending'],
      [429, 'pending'],
      [503, 'pending'],
      [302, 'pending'],
      [400, 'failed'],
      [410, 'failed'],
    ])('an answer %i leaves the delivery %s after one attempt', async (status, expected) => {
      const { ws, brandId } = await brandWithConnections(server(), ['linkedin']);
      const path = P(`/answer-${status}`);
      mode[path] = status;
      const hook = await endpoint(server(), ws.api_key, ws.workspace_id, path, ['content.published']);
      await publishText(server(), ws.api_key, ws.workspace_id, brandId);
      await server().settle();
      await server().container.dispatcher.drain();
      const [d] = await deliveriesOf(server(), ws.api_key, ws.workspace_id, hook.id);
      expect(d).toMatchObject({ status: expected, attempt_count: 1 });
      if (expected === 'pending') expect(Date.parse(d!.next_attempt_at!) - Date.parse(d!.attempts[0]!.at)).toBe(MIN);
      else expect(d!.next_attempt_at).toBeNull();
      expect(receiver.received.filter((r) => r.path === path)).toHaveLength(1);
    });

    it('a refused connection is retried', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['linkedin']);
      const res = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/webhooks`, {
        key: ws.api_key,
        body: { url: 'http://127.0.0.1:9/closed', description: '', enabled_events: ['content.published'] },
      });
      await publishText(server(), ws.api_key, ws.workspace_id, brandId);
      await server().settle();
      await server().container.dispatcher.drain();
      const [d] = await deliveriesOf(server(), ws.api_key, ws.workspace_id, res.body.id as string);
      expect(d).toMatchObject({ status: 'pending', attempt_count: 1 });
      expect(d!.attempts[0]).toMatchObject({ http_status: null, error: 'The connection was refused.' });
    });

    it('a late confirmation sends a second event with corrected: true and previous_status', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['linkedin']);
      await endpoint(server(), ws.api_key, ws.workspace_id, P('/late'));
      const contentId = await publishText(server(), ws.api_key, ws.workspace_id, brandId, { sandbox_outcomes: { linkedin: 'late_confirmation' } });
      await server().settle();
      await walkDeliveries(server());
      // Deliveries are concurrent, so arrival order is not guaranteed: receivers order by created_at (spec 6.2).
      const events = receiver.received
        .filter((r) => r.path === P('/late'))
        .map((r) => JSON.parse(r.rawBody) as Record<string, unknown>)
        .sort((a, b) => String(a.created_at).localeCompare(String(b.created_at)));
      expect(events.map((e) => [e.type, e.corrected, e.previous_status])).toEqual([
        ['content.failed', undefined, undefined],
        ['content.published', true, 'failed'],
      ]);
      expect(events.every((e) => (e.data as { content_id: string }).content_id === contentId)).toBe(true);
    });

    it('connection.expired is delivered once per expiry with its data', async () => {
      const { ws, brandId, connections } = await brandWithConnections(server(), ['linkedin']);
      await endpoint(server(), ws.api_key, ws.workspace_id, P('/expired'), ['connection.expired']);
      await publishText(server(), ws.api_key, ws.workspace_id, brandId, { sandbox_outcomes: { linkedin: 'permission_revoked' } });
      await publishText(server(), ws.api_key, ws.workspace_id, brandId);
      await server().settle();
      await walkDeliveries(server());
      const events = receiver.received.filter((r) => r.path === P('/expired')).map((r) => JSON.parse(r.rawBody) as { type: string; data: unknown });
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        type: 'connection.expired',
        data: { workspace_id: ws.workspace_id, connection_id: connections.linkedin, brand_id: brandId, platform_slug: 'linkedin', reason: 'permission_revoked' },
      });
    });

    it('verify agrees with the dispatcher and names each failed check', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['linkedin']);
      const hook = await endpoint(server(), ws.api_key, ws.workspace_id, P('/verify'));
      await publishText(server(), ws.api_key, ws.workspace_id, brandId);
      await server().settle();
      await walkDeliveries(server());
      const got = receiver.received.find((r) => r.path === P('/verify'))!;
      const payload = `${String(got.headers['service-timestamp'])}.${got.rawBody}`;
      const signature = String(got.headers['service-signature']);
      const verify = (body: Record<string, unknown>) => server().request('POST', '/api/v1/webhooks/verify', { body });
      const ok = await verify({ secret: hook.secret, signature_header: signature, payload, tolerance_seconds: 300 });
      expect(ok.body).toEqual({ valid: true, checks: { signature_format: true, timestamp_within_tolerance: true, hmac_matches: true }, reason: null });
      const wrong = await verify({ secret: 'whsec_wrong', signature_header: signature, payload, tolerance_seconds: 300 });
      expect(wrong.body).toMatchObject({ valid: false, checks: { signature_format: true, timestamp_within_tolerance: true, hmac_matches: false }, reason: expect.stringMatching(/^hmac_matches/) });
      const format = await verify({ secret: hook.secret, signature_header: signature.replace('sha256=', 'sha1='), payload, tolerance_seconds: 300 });
      expect(format.body).toMatchObject({ valid: false, checks: { signature_format: false }, reason: expect.stringMatching(/^signature_format/) });
      (server().container.clock as ManualClock).advance(301_000);
      const stale = await verify({ secret: hook.secret, signature_header: signature, payload, tolerance_seconds: 300 });
      expect(stale.body).toMatchObject({ valid: false, checks: { signature_format: true, timestamp_within_tolerance: false, hmac_matches: true }, reason: expect.stringMatching(/^timestamp_within_tolerance/) });
      const invalid = await verify({ secret: hook.secret, signature_header: signature, payload, tolerance_seconds: 'soon' });
      expect(invalid.status).toBe(400);
      expect(invalid.body.error).toBe('validation_failed');
    });
  },
  { ALLOW_LOCAL_URLS: 'true' },
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);

describeEachDb(
  'webhook restart',
  (server, kind) => {
    const P = (path: string) => `/${kind.name}${path}`;
    it('pending deliveries survive a restart; a delivered one is never sent again', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['linkedin', 'threads']);
      mode[P('/restart')] = 503;
      const hook = await endpoint(server(), ws.api_key, ws.workspace_id, P('/restart'));
      await endpoint(server(), ws.api_key, ws.workspace_id, P('/restart-ok'));
      await publishText(server(), ws.api_key, ws.workspace_id, brandId);
      await server().settle();
      await server().container.dispatcher.drain();
      expect(receiver.received.filter((r) => r.path === P('/restart-ok'))).toHaveLength(1);
      const clockAt = (server().container.clock as ManualClock).now();
      await server().service.stop(1000);

      mode[P('/restart')] = 200;
      const clock = new ManualClock(clockAt + 2 * MIN);
      const restarted = await startTestServerOn(server().database, { ALLOW_LOCAL_URLS: 'true' }, { clock, workers: false });
      try {
        await restarted.container.dispatcher.drain();
        clock.advance(48 * 60 * MIN);
        await restarted.container.dispatcher.drain();
        expect(receiver.received.filter((r) => r.path === P('/restart'))).toHaveLength(2);
        expect(receiver.received.filter((r) => r.path === P('/restart-ok'))).toHaveLength(1);
        const [d] = await deliveriesOf(restarted, ws.api_key, ws.workspace_id, hook.id);
        expect(d).toMatchObject({ status: 'delivered', attempt_count: 2 });
      } finally {
        await restarted.service.stop(1000);
      }
    });
  },
  { ALLOW_LOCAL_URLS: 'true' },
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);

const LOCAL = 'must be a public address; a receiver on this machine or a private network is accepted only when the service is started with ALLOW_LOCAL_URLS=true, which is meant for testing';

describe('webhook URL rule', () => {
  it.each([
    ['http://example.com/hook', 'must be a public HTTPS URL'],
    ['https://127.0.0.1/hook', LOCAL],
    ['https://[::1]/hook', LOCAL],
    ['https://10.0.0.1/hook', LOCAL],
    ['https://169.254.169.254/latest', LOCAL],
    ['https://localhost/hook', LOCAL],
    ['http://localhost:8080/hook', LOCAL],
    ['https://user:pw@example.com/hook', 'must not contain credentials'],
    ['https://example.com/hook', null],
  ])('%s → %s', (url, problem) => {
    expect(publicUrlProblem(url, false)).toBe(problem);
  });
});

describeEachDb('webhook URL refusals on a service without ALLOW_LOCAL_URLS', (server) => {
  it('a local receiver is refused with how the operator allows one for testing; a plain http address is refused without that hint', async () => {
    const ws = await server().workspace();
    const create = (url: string) =>
      server().request<{ error: string; message: string }>('POST', `/api/v1/workspaces/${ws.workspace_id}/webhooks`, {
        key: ws.api_key,
        body: { url, enabled_events: ['content.published'] },
      });
    const local = await create('http://localhost:3000/hook');
    expect([local.status, local.body.error]).toEqual([400, 'validation_failed']);
    expect(local.body.message).toBe(`url: ${LOCAL}`);
    const plain = await create('http://example.com/hook');
    expect(plain.body.message).toBe('url: must be a public HTTPS URL');
  });
});
