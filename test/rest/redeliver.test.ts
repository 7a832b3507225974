import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { brandWithConnections } from '../support/factories.js';
import { describeEachDb, type TestServer } from '../support/server.js';

/**
 * Spec 4.4: a redeliver forces a new attempt. Asked while an attempt is in flight, the 202 must still lead to one
 * more attempt reaching the receiver, after the one in flight (never beside it).
 */

/** A receiver that holds the first request of each path until `release(path)`, and answers 200. */
let receiver: Server;
let base: string;
const hits: Record<string, string[]> = {};
const gates: Record<string, { wait: Promise<void>; open(): void }> = {};

function gate(path: string) {
  let open!: () => void;
  const wait = new Promise<void>((r) => (open = r));
  gates[path] = { wait, open };
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const path = req.url ?? '/';
      const seen = (hits[path] ??= []);
      seen.push(String(req.headers['service-delivery-id']));
      const held = seen.length === 1 ? gates[path]?.wait : undefined;
      void (held ?? Promise.resolve()).then(() => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(
  () =>
    new Promise<void>((r) => {
      receiver.closeAllConnections();
      receiver.close(() => r());
    }),
);

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A delivery whose first attempt is in flight at the receiver, held there; `drained` ends when nothing is due. */
async function inFlight(server: TestServer, path: string) {
  gate(path);
  const { ws, brandId } = await brandWithConnections(server, ['linkedin']);
  const hook = await server.request('POST', `/api/v1/workspaces/${ws.workspace_id}/webhooks`, {
    key: ws.api_key,
    body: { url: `${base}${path}`, description: 'held', enabled_events: ['content.published'] },
  });
  expect(hook.status).toBe(201);
  const content = await server.request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
    key: ws.api_key,
    body: { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: 'hi' },
  });
  expect(content.status).toBe(201);
  await server.settle();
  const drained = server.container.dispatcher.drain();
  await until(() => (hits[path]?.length ?? 0) === 1, 'the first attempt');
  const deliveryId = hits[path]![0]!;
  return { ws, deliveryId, drained };
}

describeEachDb(
  'redeliver during an in-flight attempt',
  (server) => {
    it('a redeliver asked while an attempt is in flight yields one more attempt reaching the receiver', async () => {
      const path = `/held-${server().container.db.dialect}-1`;
      const { ws, deliveryId, drained } = await inFlight(server(), path);

      const asked = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/deliveries/${deliveryId}/redeliver`, { key: ws.api_key });
      expect(asked.status).toBe(202);
      expect(asked.body).toMatchObject({ id: deliveryId, status: 'pending' });

      gates[path]!.open();
      await drained;
      await server().container.dispatcher.drain();

      expect(hits[path]).toEqual([deliveryId, deliveryId]);
      const done = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/deliveries/${deliveryId}`, { key: ws.api_key });
      expect(done.body).toMatchObject({ status: 'delivered', attempt_count: 2 });
      expect((done.body.attempts as { manual: boolean; http_status: number }[]).map((a) => [a.manual, a.http_status])).toEqual([
        [false, 200],
        [true, 200],
      ]);
    });

    it('several redelivers during one attempt make one more attempt, not one each, and never two at once', async () => {
      const path = `/held-${server().container.db.dialect}-2`;
      const { ws, deliveryId, drained } = await inFlight(server(), path);

      const asked = await Promise.all(
        Array.from({ length: 5 }, () => server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/deliveries/${deliveryId}/redeliver`, { key: ws.api_key })),
      );
      for (const r of asked) expect(r.status).toBe(202);
      // The lease of the attempt in flight still holds: nothing else is sent while it waits.
      await server().container.dispatcher.tick();
      expect(hits[path]).toHaveLength(1);

      gates[path]!.open();
      await drained;
      await server().container.dispatcher.drain();
      expect(hits[path]).toEqual([deliveryId, deliveryId]);
      const done = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/deliveries/${deliveryId}`, { key: ws.api_key });
      expect(done.body).toMatchObject({ status: 'delivered', attempt_count: 2 });
    });

    it('a redeliver of an idle delivery makes exactly one attempt, and the mark does not outlive it', async () => {
      const path = `/held-${server().container.db.dialect}-3`;
      const { ws, deliveryId, drained } = await inFlight(server(), path);
      gates[path]!.open();
      await drained;
      expect(hits[path]).toHaveLength(1);

      const asked = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/deliveries/${deliveryId}/redeliver`, { key: ws.api_key });
      expect(asked.status).toBe(202);
      await server().container.dispatcher.drain();
      await server().container.dispatcher.drain();
      expect(hits[path]).toHaveLength(2);
      const row = await server().container.db.kysely.selectFrom('deliveries').select(['status', 'redeliver_requested']).where('id', '=', deliveryId).executeTakeFirstOrThrow();
      expect({ status: row.status, mark: Number(row.redeliver_requested) }).toEqual({ status: 'delivered', mark: 0 });
    });
  },
  { ALLOW_LOCAL_URLS: 'true' },
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);
