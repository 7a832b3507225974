import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { NewWorkspace } from '../../src/core/workspaces/workspaces.service.js';
import { startReceiver } from '../support/receiver.js';
import { type ApiResponse } from '../support/server.js';
import { type Cluster, describeCluster, statuses, TIGHT_PLAN } from './support.js';

/**
 * Spec 7.3: a stock meter never passes its plan ceiling, whatever runs at once; a refusal is 403 limit_reached
 * with `meter`, `limit`, `used`, `resolve`. Freeing an item frees its slot once.
 */

type Receiver = Awaited<ReturnType<typeof startReceiver>>;

async function usage(cluster: Cluster, ws: NewWorkspace, meter: string): Promise<{ used: number; limit: number }> {
  const res = await cluster.doors[0]!.request('GET', `/api/v1/workspaces/${ws.workspace_id}/usage`, { key: ws.api_key });
  const entry = (res.body.meters as { meter: string; used: number; limit: number }[]).find((m) => m.meter === meter);
  if (!entry) throw new Error(`no meter ${meter}`);
  return { used: entry.used, limit: entry.limit };
}

function expectLimitReached(refused: ApiResponse[], meter: keyof typeof TIGHT_PLAN): void {
  for (const r of refused) {
    expect(r.body).toEqual({
      error: 'limit_reached',
      message: expect.any(String),
      request_id: r.headers.get('x-request-id'),
      meter,
      limit: TIGHT_PLAN[meter],
      used: TIGHT_PLAN[meter],
      resolve: 'desativar_outra',
    });
  }
}

describeCluster('concurrent creations at a stock meter\'s limit', (cluster) => {
  let receiver: Receiver;
  const tightWorkspace = async () => {
    const ws = await cluster().workspace();
    await cluster().server.container.services.workspaces.setPlan(ws.workspace_id, 'tight');
    return ws;
  };
  const newBrand = (ws: NewWorkspace, door = cluster().doors[0]!, name = 'Brand') =>
    door.request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name } });
  const newConnection = (ws: NewWorkspace, brandId: string, i: number, door = cluster().doors[0]!) =>
    door.request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands/${brandId}/connections`, {
      key: ws.api_key,
      body: { platform_slug: ['threads', 'linkedin', 'facebook', 'instagram', 'youtube'][i % 5], mode: 'sandbox', name: `@acme-${i}` },
    });
  const newWebhook = (ws: NewWorkspace, i: number, door = cluster().doors[0]!) =>
    door.request('POST', `/api/v1/workspaces/${ws.workspace_id}/webhooks`, {
      key: ws.api_key,
      body: { url: `${receiver.url}/meters/${i}`, description: `hook ${i}`, enabled_events: ['content.failed'] },
    });

  it('brands: 20 parallel creations against a limit of 3 make exactly 3, never more; the rest 403 limit_reached', async () => {
    const ws = await tightWorkspace();
    const results = await cluster().split(20, (door, i) => newBrand(ws, door, `Brand ${i}`));
    expect(statuses(results)).toEqual({ 201: 3, 403: 17 });
    expectLimitReached(results.filter((r) => r.status === 403), 'brands');
    const rows = await cluster().server.container.db.kysely.selectFrom('brands').select('id').where('workspace_id', '=', ws.workspace_id).where('deleted_at', 'is', null).execute();
    expect(rows).toHaveLength(3);
    expect(await usage(cluster(), ws, 'brands')).toEqual({ used: 3, limit: 3 });
  });

  it('connections: 20 parallel creations against a limit of 4 make exactly 4; 10 parallel deactivations of one free one slot, which exactly one of 20 new creations takes', async () => {
    const ws = await tightWorkspace();
    const brand = await newBrand(ws);
    const brandId = brand.body.id as string;
    const results = await cluster().split(20, (door, i) => newConnection(ws, brandId, i, door));
    expect(statuses(results)).toEqual({ 201: 4, 403: 16 });
    expectLimitReached(results.filter((r) => r.status === 403), 'connections');
    const active = () =>
      cluster().server.container.db.kysely.selectFrom('connections').select('id').where('workspace_id', '=', ws.workspace_id).where('status', '=', 'active').execute();
    expect(await active()).toHaveLength(4);
    expect(await usage(cluster(), ws, 'connections')).toEqual({ used: 4, limit: 4 });

    const victim = results.find((r) => r.status === 201)!.body.id as string;
    const deactivations = await cluster().split(10, (door) => door.request('POST', `/api/v1/workspaces/${ws.workspace_id}/connections/${victim}/deactivate`, { key: ws.api_key }));
    expect(statuses(deactivations)).toEqual({ 200: 10 });
    expect(await usage(cluster(), ws, 'connections'), 'the slot is released once').toEqual({ used: 3, limit: 4 });

    const refill = await cluster().split(20, (door, i) => newConnection(ws, brandId, 100 + i, door));
    expect(statuses(refill)).toEqual({ 201: 1, 403: 19 });
    expect(await active()).toHaveLength(4);
    expect(await usage(cluster(), ws, 'connections')).toEqual({ used: 4, limit: 4 });
  });

  it('webhooks: 20 parallel registrations against a limit of 2 make exactly 2; 10 parallel deletes of one answer 204 once and free one slot, which exactly one of 20 new registrations takes', async () => {
    receiver = await startReceiver();
    try {
      const ws = await tightWorkspace();
      const results = await cluster().split(20, (door, i) => newWebhook(ws, i, door));
      expect(statuses(results)).toEqual({ 201: 2, 403: 18 });
      expectLimitReached(results.filter((r) => r.status === 403), 'webhooks');
      const listed = async () => (await cluster().doors[0]!.request('GET', `/api/v1/workspaces/${ws.workspace_id}/webhooks`, { key: ws.api_key })).body.data as unknown[];
      expect(await listed()).toHaveLength(2);
      expect(await usage(cluster(), ws, 'webhooks')).toEqual({ used: 2, limit: 2 });

      const victim = results.find((r) => r.status === 201)!.body.id as string;
      const deletes = await cluster().split(10, (door) => door.request('DELETE', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${victim}`, { key: ws.api_key }));
      expect(statuses(deletes)).toEqual({ 204: 1, 404: 9 });
      expect(await usage(cluster(), ws, 'webhooks'), 'the slot is released once').toEqual({ used: 1, limit: 2 });

      const refill = await cluster().split(20, (door, i) => newWebhook(ws, 100 + i, door));
      expect(statuses(refill)).toEqual({ 201: 1, 403: 19 });
      expect(await listed()).toHaveLength(2);
      expect(await usage(cluster(), ws, 'webhooks')).toEqual({ used: 2, limit: 2 });
    } finally {
      await receiver.close();
    }
  });

  it('brands: 10 parallel deletes of one brand answer 204 once and free its brand slot and its connections once', async () => {
    const ws = await tightWorkspace();
    const brands = await cluster().split(3, (door, i) => newBrand(ws, door, `B${i}`));
    const victim = brands[0]!.body.id as string;
    for (const i of [0, 1]) expect((await newConnection(ws, victim, i)).status).toBe(201);
    expect((await newConnection(ws, brands[1]!.body.id as string, 2)).status).toBe(201);

    const deletes = await cluster().split(10, (door) => door.request('DELETE', `/api/v1/workspaces/${ws.workspace_id}/brands/${victim}`, { key: ws.api_key }));
    expect(statuses(deletes)).toEqual({ 204: 1, 404: 9 });
    expect(await usage(cluster(), ws, 'brands')).toEqual({ used: 2, limit: 3 });
    expect(await usage(cluster(), ws, 'connections')).toEqual({ used: 1, limit: 4 });
    const refill = await cluster().split(10, (door, i) => newBrand(ws, door, `R${i}`));
    expect(statuses(refill)).toEqual({ 201: 1, 403: 9 });
  });

  it('media storage: 20 parallel 300-byte uploads against 1000 bytes store exactly 3 (900 bytes), never more; refused uploads leave no file', async () => {
    const ws = await tightWorkspace();
    const results = await cluster().split(20, (door) =>
      door.request('POST', `/api/v1/workspaces/${ws.workspace_id}/media`, { key: ws.api_key, rawBody: 'p'.repeat(300), headers: { 'content-type': 'image/png' } }),
    );
    expect(statuses(results)).toEqual({ 201: 3, 403: 17 });
    for (const r of results.filter((r) => r.status === 403)) {
      expect(r.body).toMatchObject({ error: 'limit_reached', meter: 'media_storage', limit: 1000, resolve: 'desativar_outra' });
      // Refused because 300 more bytes do not fit what was used when the request was checked.
      expect((r.body.used as number) + 300).toBeGreaterThan(1000);
    }
    const rows = await cluster().server.container.db.kysely.selectFrom('media').select(['id', 'size_bytes']).where('workspace_id', '=', ws.workspace_id).execute();
    expect(rows.map((r) => Number(r.size_bytes))).toEqual([300, 300, 300]);
    expect(await usage(cluster(), ws, 'media_storage')).toEqual({ used: 900, limit: 1000 });
    expect(readdirSync(join(cluster().mediaDir, ws.workspace_id)).sort()).toEqual(rows.map((r) => r.id).sort());
  });
});
