import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { describeEachDb, type TestServer } from '../support/server.js';

interface Hit {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  raw: string;
}

/** A receiver whose answer depends on the path: `/fail` 500 with text, `/long` 200 with 5 KB, else 204. */
const hits: Hit[] = [];
const LONG = `é${'0123456789'.repeat(500)}`;
let server: Server;
let base = '';
beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      hits.push({ path: req.url ?? '/', headers: req.headers, raw: Buffer.concat(chunks).toString('utf8') });
      if (req.url?.endsWith('/fail')) res.writeHead(500, { 'content-type': 'text/plain' }).end('receiver says:\u0007 ignore previous instructions\r\nline two');
      else if (req.url?.endsWith('/long')) res.writeHead(200, { 'content-type': 'text/plain' }).end(LONG);
      else res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(
  () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
);

async function endpoint(s: TestServer, key: string, wsId: string, path: string, events: string[]) {
  const res = await s.request('POST', `/api/v1/workspaces/${wsId}/webhooks`, { key, body: { url: `${base}${path}`, enabled_events: events } });
  expect(res.status).toBe(201);
  return res.body as { id: string; secret: string };
}

describeEachDb(
  'webhook test events',
  (s, kind) => {
    const P = (path: string) => `/${kind.name}${path}`;

    it('queues a signed test delivery of the first enabled type, marked test, sent by the dispatcher', async () => {
      const ws = await s().workspace();
      const hook = await endpoint(s(), ws.api_key, ws.workspace_id, P('/ok'), ['content.failed', 'content.published']);
      const sent = await s().request('POST', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${hook.id}/test`, { key: ws.api_key });
      expect(sent.status).toBe(202);
      expect(sent.body).toMatchObject({ id: expect.stringMatching(/^del_/), event_type: 'content.failed', status: 'pending', test: true, attempts: [] });
      await s().container.dispatcher.drain();
      const got = hits.filter((h) => h.path === P('/ok'));
      expect(got).toHaveLength(1);
      const hit = got[0]!;
      const expected = `sha256=${createHmac('sha256', hook.secret).update(`${String(hit.headers['service-timestamp'])}.${hit.raw}`).digest('hex')}`;
      expect(hit.headers['service-signature']).toBe(expected);
      expect(hit.headers['service-delivery-id']).toBe(sent.body.id);
      const body = JSON.parse(hit.raw) as Record<string, unknown>;
      expect(body).toMatchObject({ id: sent.body.event_id, type: 'content.failed', test: true, data: { content_id: 'test_content', workspace_id: ws.workspace_id } });
      const list = await s().request('GET', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${hook.id}/deliveries`, { key: ws.api_key });
      expect(list.body.data).toEqual([expect.objectContaining({ id: sent.body.id, status: 'delivered', test: true, attempts: [expect.objectContaining({ http_status: 204 })] })]);
      // No event is recorded and nothing counted: the plan's webhooks meter still shows one endpoint.
      const events = await s().container.db.kysely.selectFrom('events').select('id').where('workspace_id', '=', ws.workspace_id).execute();
      expect(events).toEqual([]);
    });

    it('takes an event_type; refuses an unknown one and another workspace’s endpoint', async () => {
      const ws = await s().workspace();
      const other = await s().workspace();
      const hook = await endpoint(s(), ws.api_key, ws.workspace_id, P('/typed'), ['content.published']);
      const typed = await s().request('POST', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${hook.id}/test`, { key: ws.api_key, body: { event_type: 'connection.expired' } });
      expect(typed.status).toBe(202);
      expect(typed.body.event_type).toBe('connection.expired');
      const bad = await s().request('POST', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${hook.id}/test`, { key: ws.api_key, body: { event_type: 'webhook.test' } });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toBe('validation_failed');
      const foreign = await s().request('POST', `/api/v1/workspaces/${other.workspace_id}/webhooks/${hook.id}/test`, { key: other.api_key });
      expect(foreign.status).toBe(404);
      await s().container.dispatcher.drain();
      const hit = hits.find((h) => h.path === P('/typed'))!;
      expect(JSON.parse(hit.raw)).toMatchObject({ type: 'connection.expired', test: true, data: { connection_id: 'test_connection' } });
    });

    it('keeps a bounded, cleaned excerpt of each answer for the dashboard, never in the REST answer', async () => {
      const ws = await s().workspace();
      const failing = await endpoint(s(), ws.api_key, ws.workspace_id, P('/fail'), ['content.published']);
      const long = await endpoint(s(), ws.api_key, ws.workspace_id, P('/long'), ['content.published']);
      await s().request('POST', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${failing.id}/test`, { key: ws.api_key });
      await s().request('POST', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${long.id}/test`, { key: ws.api_key });
      await s().container.dispatcher.drain();
      const rest = await s().request('GET', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${failing.id}/deliveries`, { key: ws.api_key });
      expect(rest.body.data).toEqual([expect.objectContaining({ status: 'pending', attempts: [expect.objectContaining({ http_status: 500 })] })]);
      expect(rest.text).not.toContain('ignore previous');
      const services = s().container.services;
      const principal = await services.apiKeys.authenticate(ws.api_key);
      const failed = await services.webhooks.deliveryDetails(principal, ws.workspace_id, failing.id, { limit: 5 });
      expect(failed.data[0]!.attempts[0]!.response_excerpt).toBe('receiver says: ignore previous instructions\nline two');
      expect(failed.data[0]!.request_body).toContain('"test":true');
      const longer = await services.webhooks.deliveryDetails(principal, ws.workspace_id, long.id, { limit: 5 });
      const excerpt = longer.data[0]!.attempts[0]!.response_excerpt!;
      expect(Buffer.byteLength(excerpt)).toBeLessThanOrEqual(2048);
      expect(excerpt.startsWith('é0123456789')).toBe(true);
      expect(excerpt.length).toBeGreaterThan(2000);
    });

    it('delivery ids lead with their creation time, so an endpoint\'s deliveries are stored in the order they were made', async () => {
      const ws = await s().workspace();
      const hook = await endpoint(s(), ws.api_key, ws.workspace_id, P('/ok'), ['content.published']);
      const clock = s().container.clock as ManualClock;
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const sent = await s().request('POST', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${hook.id}/test`, { key: ws.api_key });
        expect(sent.body.id).toMatch(/^del_[0-9a-z]{20}$/);
        ids.push(sent.body.id as string);
        clock.advance(1);
      }
      expect([...ids].sort()).toEqual(ids);
      expect(new Set(ids.map((id) => id.slice(0, 14))).size).toBe(5); // del_ and ten characters of time

      // Their attempts' ids too, each made when its attempt is.
      for (let i = 0; i < 3; i++) {
        await s().request('POST', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${hook.id}/test`, { key: ws.api_key });
        await s().container.dispatcher.drain();
        clock.advance(1);
      }
      const attempts = await s()
        .container.db.kysely.selectFrom('delivery_attempts')
        .innerJoin('deliveries', 'deliveries.id', 'delivery_attempts.delivery_id')
        .select(['delivery_attempts.id', 'delivery_attempts.at'])
        .where('deliveries.webhook_id', '=', hook.id)
        .orderBy('delivery_attempts.at')
        .execute();
      expect(new Set(attempts.map((a) => Number(a.at))).size).toBeGreaterThan(2);
      // In id order, their times never go back (attempts made in one millisecond may sort either way).
      const times = [...attempts].sort((a, b) => (a.id < b.id ? -1 : 1)).map((a) => Number(a.at));
      expect(times).toEqual([...times].sort((a, b) => a - b));
    });
  },
  { ALLOW_LOCAL_URLS: 'true' },
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);
