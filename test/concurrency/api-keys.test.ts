import { expect, it } from 'vitest';
import type { NewWorkspace } from '../../src/core/workspaces/workspaces.service.js';
import { type Cluster, type Door, describeCluster, statuses } from './support.js';

/** Spec 2.1 and 3.1: `revoke_others` is an atomic rotation; after it exactly one key of the workspace is active. */

async function activeKeyIds(cluster: Cluster, workspaceId: string): Promise<string[]> {
  const rows = await cluster.server.container.db.kysely
    .selectFrom('api_keys')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('revoked_at', 'is', null)
    .execute();
  return rows.map((r) => r.id).sort();
}

/** Whether a key still opens the workspace, asked of every process (a revoked key must fail on each). */
async function works(cluster: Cluster, ws: NewWorkspace, key: string): Promise<boolean[]> {
  return Promise.all(
    cluster.doors.map(async (door) => (await door.request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key })).status === 200),
  );
}

describeCluster('concurrent API key creation, rotation and revocation', (cluster) => {
  const create = (ws: NewWorkspace, key: string, body: Record<string, unknown>) => (door: Door) =>
    door.request('POST', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key, body });

  it('20 parallel revoke_others rotations: exactly one key stays active, and it is a key a rotation returned', async () => {
    const ws = await cluster().workspace();
    const extra = await create(ws, ws.api_key, { name: 'extra' })(cluster().doors[0]!);
    const results = await cluster().split(20, (door, i) => create(ws, ws.api_key, { name: `rotation ${i}`, revoke_others: true })(door));

    // A rotation that finds its caller's key already revoked by a concurrent one is refused like any revoked key.
    for (const r of results) {
      expect([201, 401], JSON.stringify(statuses(results))).toContain(r.status);
      if (r.status === 401) expect(r.body.error).toBe('invalid_api_key');
    }
    const rotated = results.filter((r) => r.status === 201).map((r) => ({ id: r.body.id as string, key: r.body.api_key as string }));
    expect(rotated.length).toBeGreaterThanOrEqual(1);

    const active = await activeKeyIds(cluster(), ws.workspace_id);
    expect(active, `active keys after ${rotated.length} successful rotations`).toHaveLength(1);
    const survivor = rotated.find((k) => k.id === active[0]);
    expect(survivor, 'the one active key is one a rotation returned').toBeDefined();

    expect(await works(cluster(), ws, survivor!.key)).toEqual(cluster().doors.map(() => true));
    for (const k of [...rotated.filter((k) => k !== survivor), { id: ws.key_id, key: ws.api_key }]) {
      expect(await works(cluster(), ws, k.key), `key ${k.id} after the rotations`).toEqual(cluster().doors.map(() => false));
    }

    // The audit entry commits with its key: one api_key.created per key that exists, none for a refused rotation.
    const audited = await cluster()
      .server.container.db.kysely.selectFrom('audit_events')
      .select('target_id')
      .where('workspace_id', '=', ws.workspace_id)
      .where('action', '=', 'api_key.created')
      .execute();
    expect(audited.map((e) => e.target_id).sort()).toEqual([extra.body.id as string, ...rotated.map((k) => k.id)].sort());
  });

  it('a leaked key minting 40 keys while the owner rotates with revoke_others: only the rotated key survives, no key minted with the leaked key does', async () => {
    const ws = await cluster().workspace();
    const leaked = await create(ws, ws.api_key, { name: 'leaked' })(cluster().doors[0]!);
    expect(leaked.status).toBe(201);
    const leakedKey = leaked.body.api_key as string;

    const ROTATION_AT = 20;
    const results = await cluster().split(41, (door, i) =>
      i === ROTATION_AT
        ? create(ws, ws.api_key, { name: 'owner rotation', revoke_others: true })(door)
        : create(ws, leakedKey, { name: `attacker ${i}` })(door),
    );
    const rotation = results[ROTATION_AT]!;
    expect(rotation.status, rotation.text).toBe(201);
    const minted = results.filter((r, i) => i !== ROTATION_AT && r.status === 201).map((r) => ({ id: r.body.id as string, key: r.body.api_key as string }));
    for (const r of results.filter((_, i) => i !== ROTATION_AT)) {
      expect([201, 401], JSON.stringify(statuses(results))).toContain(r.status);
    }

    expect(await activeKeyIds(cluster(), ws.workspace_id), `${minted.length} keys minted with the leaked key`).toEqual([rotation.body.id as string]);
    expect(await works(cluster(), ws, rotation.body.api_key as string)).toEqual(cluster().doors.map(() => true));
    for (const k of [...minted, { id: leaked.body.id as string, key: leakedKey }, { id: ws.key_id, key: ws.api_key }]) {
      expect(await works(cluster(), ws, k.key), `key ${k.id} after the rotation`).toEqual(cluster().doors.map(() => false));
    }
  });

  it('DELETE of a leaked key racing 40 mints with it: no key is minted after the revocation, and the leaked key is refused on every process', async () => {
    const ws = await cluster().workspace();
    const leaked = await create(ws, ws.api_key, { name: 'leaked' })(cluster().doors[0]!);
    const leakedId = leaked.body.id as string;
    const leakedKey = leaked.body.api_key as string;
    const REVOKE_AT = 20;
    const results = await cluster().split(41, (door, i) =>
      i === REVOKE_AT
        ? door.request('DELETE', `/api/v1/workspaces/${ws.workspace_id}/api-keys/${leakedId}`, { key: ws.api_key })
        : create(ws, leakedKey, { name: `attacker ${i}` })(door),
    );
    expect(results[REVOKE_AT]!.status).toBe(204);
    const minted = results.filter((r, i) => i !== REVOKE_AT && r.status === 201).map((r) => r.body.id as string);

    const rows = await cluster().server.container.db.kysely.selectFrom('api_keys').select(['id', 'created_at', 'revoked_at']).where('workspace_id', '=', ws.workspace_id).execute();
    const revokedAt = Number(rows.find((r) => r.id === leakedId)?.revoked_at);
    expect(revokedAt).toBeGreaterThan(0);
    const late = rows.filter((r) => minted.includes(r.id) && Number(r.created_at) > revokedAt);
    expect(late, `${minted.length} keys minted with the leaked key; these were minted after its revocation`).toEqual([]);
    expect(await works(cluster(), ws, leakedKey)).toEqual(cluster().doors.map(() => false));
  });

  it('parallel plain creations with one key (no rotation): every one succeeds and every minted key works', async () => {
    const ws = await cluster().workspace();
    const results = await cluster().split(20, (door, i) => create(ws, ws.api_key, { name: `plain ${i}` })(door));
    expect(statuses(results)).toEqual({ 201: 20 });
    expect(await activeKeyIds(cluster(), ws.workspace_id)).toHaveLength(21);
  });
});
