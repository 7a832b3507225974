import { afterAll, beforeAll, expect, it } from 'vitest';
import type { NewWorkspace } from '../../src/core/workspaces/workspaces.service.js';
import { brandWithConnections } from '../support/factories.js';
import { startReceiver } from '../support/receiver.js';
import { type Cluster, describeCluster, statuses } from './support.js';

/**
 * Spec 4.4 and 3.3: a redeliver forces one new attempt, however many ask at once and whenever they ask; an
 * endpoint changed by parallel requests ends in a state one of them asked for, and a deleted endpoint receives
 * nothing more.
 */

type Receiver = Awaited<ReturnType<typeof startReceiver>>;
const HOLD_MS = 3_000;

let receiver: Receiver;
/** Paths whose answer the receiver holds back for HOLD_MS, to keep an attempt in flight. */
const slow = new Set<string>();
beforeAll(async () => {
  receiver = await startReceiver((path) => (slow.has(path) ? { delayMs: HOLD_MS, status: 200 } : 200));
});
afterAll(() => receiver.close());

const hits = (path: string) => receiver.received.filter((r) => r.path === path);

interface DeliveryView {
  id: string;
  status: string;
  attempt_count: number;
  attempts: { number: number; manual: boolean; http_status: number | null }[];
}

describeCluster('concurrent redelivery and webhook endpoint changes', (cluster) => {
  let round = 0;
  /** A workspace whose endpoint at a fresh receiver path subscribes to content.failed, and a pending delivery to it. */
  async function pendingDelivery(): Promise<{ ws: NewWorkspace; path: string; webhookId: string; deliveryId: string }> {
    const { ws, brandId } = await brandWithConnections(cluster().server, ['linkedin']);
    const path = `/${cluster().kind.name}/${++round}`;
    const hook = await cluster().doors[0]!.request('POST', `/api/v1/workspaces/${ws.workspace_id}/webhooks`, {
      key: ws.api_key,
      body: { url: `${receiver.url}${path}`, description: 'race', enabled_events: ['content.failed'] },
    });
    expect(hook.status, hook.text).toBe(201);
    const content = await cluster().doors[0]!.request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
      key: ws.api_key,
      body: { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: 'fails', sandbox_outcomes: { linkedin: 'quota_exceeded' } },
    });
    expect(content.status, content.text).toBe(201);
    await cluster().drainJobs();
    const listed = await cluster().doors[0]!.request('GET', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${hook.body.id as string}/deliveries`, { key: ws.api_key });
    const deliveries = listed.body.data as DeliveryView[];
    expect(deliveries).toHaveLength(1);
    return { ws, path, webhookId: hook.body.id as string, deliveryId: deliveries[0]!.id };
  }

  const readDelivery = async (c: Cluster, ws: NewWorkspace, id: string) =>
    (await c.doors[0]!.request('GET', `/api/v1/workspaces/${ws.workspace_id}/deliveries/${id}`, { key: ws.api_key })).body as unknown as DeliveryView;

  const redeliver = (ws: NewWorkspace, id: string) => (door: Cluster['doors'][number]) =>
    door.request('POST', `/api/v1/workspaces/${ws.workspace_id}/deliveries/${id}/redeliver`, { key: ws.api_key });

  it('20 parallel redelivers of one delivered delivery: exactly one extra attempt, on the same del_ id', async () => {
    const { ws, path, deliveryId } = await pendingDelivery();
    await cluster().drainDeliveries();
    expect(hits(path)).toHaveLength(1);

    const results = await cluster().split(20, redeliver(ws, deliveryId));
    expect(statuses(results)).toEqual({ 202: 20 });
    await cluster().drainDeliveries();
    await cluster().drainDeliveries();

    expect(hits(path).map((h) => h.headers['service-delivery-id'])).toEqual([deliveryId, deliveryId]);
    const after = await readDelivery(cluster(), ws, deliveryId);
    expect(after).toMatchObject({ status: 'delivered', attempt_count: 2 });
    expect(after.attempts.map((a) => a.manual)).toEqual([false, true]);
  });

  it('20 parallel redelivers while an attempt is in flight: the in-flight outcome does not swallow them; exactly one extra attempt follows', async () => {
    const { ws, path, deliveryId } = await pendingDelivery();
    slow.add(path);
    try {
      const inFlight = cluster().drainDeliveries();
      const arrived = Date.now();
      while (hits(path).length === 0) {
        if (Date.now() - arrived > 10_000) throw new Error('the first attempt never reached the receiver');
        await new Promise((r) => setTimeout(r, 10));
      }
      const results = await cluster().split(20, redeliver(ws, deliveryId));
      const answeredAt = hits(path)[0]!.at + HOLD_MS;
      expect(Date.now(), 'the redelivers were all answered while the first attempt was still waiting').toBeLessThan(answeredAt);
      expect(statuses(results)).toEqual({ 202: 20 });
      await inFlight;
      slow.delete(path);
      await cluster().drainDeliveries();
      await cluster().drainDeliveries();
    } finally {
      slow.delete(path);
    }

    expect(hits(path), 'one first attempt and exactly one requested after it').toHaveLength(2);
    const after = await readDelivery(cluster(), ws, deliveryId);
    expect(after).toMatchObject({ status: 'delivered', attempt_count: 2 });
    expect(after.attempts.map((a) => a.manual)).toEqual([false, true]);
  });

  it('20 parallel PATCHes with different bodies: the endpoint ends exactly as one of them asked, never a mix of fields', async () => {
    const { ws, webhookId } = await pendingDelivery();
    const bodies = Array.from({ length: 20 }, (_, i) => ({
      url: `${receiver.url}/patched/${i}`,
      description: `body ${i}`,
      enabled_events: i % 2 === 0 ? ['content.failed'] : ['content.published', 'content.partial'],
      active: i % 3 !== 0,
    }));
    const results = await cluster().split(20, (door, i) => door.request('PATCH', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${webhookId}`, { key: ws.api_key, body: bodies[i] }));
    expect(statuses(results)).toEqual({ 200: 20 });
    const asOne = (view: Record<string, unknown>) => {
      const i = bodies.findIndex((b) => b.url === view.url);
      expect(i, JSON.stringify(view)).toBeGreaterThanOrEqual(0);
      expect({ url: view.url, description: view.description, enabled_events: view.enabled_events, active: view.active }).toEqual(bodies[i]);
    };
    for (const r of results) asOne(r.body);
    for (const door of cluster().doors) {
      asOne((await door.request('GET', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${webhookId}`, { key: ws.api_key })).body);
    }
  });

  it('DELETE racing 40 PATCHes that reactivate the endpoint: it stays deleted, its slot is freed once, and its pending delivery is not sent', async () => {
    const { ws, path, webhookId, deliveryId } = await pendingDelivery();
    // Warm every process's connections first, so the PATCHes and the DELETE really overlap.
    await cluster().split(20, (door) => door.request('GET', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${webhookId}`, { key: ws.api_key }));
    const DELETE_AT = 20;
    const results = await cluster().split(41, (door, i) =>
      i === DELETE_AT
        ? door.request('DELETE', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${webhookId}`, { key: ws.api_key })
        : door.request('PATCH', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${webhookId}`, { key: ws.api_key, body: { active: true, description: `patch ${i}` } }),
    );
    expect(results[DELETE_AT]!.status).toBe(204);
    for (const r of results.filter((_, i) => i !== DELETE_AT)) expect([200, 404]).toContain(r.status);

    for (const door of cluster().doors) {
      expect((await door.request('GET', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${webhookId}`, { key: ws.api_key })).status).toBe(404);
      expect((await door.request('GET', `/api/v1/workspaces/${ws.workspace_id}/webhooks`, { key: ws.api_key })).body.data).toEqual([]);
    }
    const usage = await cluster().doors[0]!.request('GET', `/api/v1/workspaces/${ws.workspace_id}/usage`, { key: ws.api_key });
    expect((usage.body.meters as { meter: string; used: number }[]).find((m) => m.meter === 'webhooks')?.used).toBe(0);

    // The delivery queued before the delete, and a redeliver of it, reach no one.
    await cluster().drainDeliveries();
    expect((await redeliver(ws, deliveryId)(cluster().doors[0]!)).status).toBe(202);
    await cluster().drainDeliveries();
    expect(hits(path), 'requests received by the deleted endpoint').toEqual([]);
    const after = await readDelivery(cluster(), ws, deliveryId);
    expect(after.attempts.every((a) => a.http_status === null)).toBe(true);
  });
});
