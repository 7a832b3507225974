import { expect, it } from 'vitest';
import type { NewWorkspace } from '../../src/core/workspaces/workspaces.service.js';
import { DashboardClient } from '../support/dashboard.js';
import { person } from '../members/support.js';
import { type Cluster, describeCluster, statuses } from './support.js';

/** A workspace always keeps an owner, and an invitation makes one member, whatever runs at once in two processes. */

async function owners(cluster: Cluster, workspaceId: string): Promise<number> {
  const rows = await cluster.server.container.db.kysely.selectFrom('memberships').select('id').where('workspace_id', '=', workspaceId).where('role', '=', 'owner').execute();
  return rows.length;
}

async function ownerMembers(cluster: Cluster, ws: NewWorkspace, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const p = await person(cluster.server);
    const res = await cluster.doors[0]!.request('POST', `/api/v1/workspaces/${ws.workspace_id}/members`, { key: ws.api_key, body: { email: p.email, role: 'owner' } });
    expect(res.status).toBe(201);
    ids.push(res.body.id as string);
  }
  return ids;
}

describeCluster('members under concurrency', (cluster) => {
  it('two owners demote each other at once: exactly one succeeds and one owner is left (5 rounds)', async () => {
    for (let round = 0; round < 5; round++) {
      const ws = await cluster().workspace();
      const ids = await ownerMembers(cluster(), ws, 2);
      const results = await cluster().split(2, (door, i) =>
        door.request('PATCH', `/api/v1/workspaces/${ws.workspace_id}/members/${ids[i]!}`, { key: ws.api_key, body: { role: 'admin' } }),
      );
      expect(statuses(results), `round ${round}`).toEqual({ 200: 1, 409: 1 });
      expect(results.find((r) => r.status === 409)?.body.error).toBe('last_owner');
      expect(await owners(cluster(), ws.workspace_id)).toBe(1);
    }
  });

  it('three owners, each demoted and removed at once from both processes: one owner always stays', async () => {
    const ws = await cluster().workspace();
    const ids = await ownerMembers(cluster(), ws, 3);
    const results = await cluster().split(12, (door, i) => {
      const id = ids[i % 3]!;
      return i % 2 === 0
        ? door.request('DELETE', `/api/v1/workspaces/${ws.workspace_id}/members/${id}`, { key: ws.api_key })
        : door.request('PATCH', `/api/v1/workspaces/${ws.workspace_id}/members/${id}`, { key: ws.api_key, body: { role: 'viewer' } });
    });
    for (const r of results) expect([200, 204, 404, 409], JSON.stringify(statuses(results))).toContain(r.status);
    expect(await owners(cluster(), ws.workspace_id)).toBe(1);
  });

  it('one invitation accepted at once from both processes makes one account and one member (3 rounds)', async () => {
    for (let round = 0; round < 3; round++) {
      const ws = await cluster().workspace();
      const email = `race${round}@example.com`;
      const invited = await cluster().doors[0]!.request('POST', `/api/v1/workspaces/${ws.workspace_id}/invitations`, { key: ws.api_key, body: { email, role: 'editor' } });
      const link = new URL(invited.body.accept_url as string).pathname;
      const clients = [0, 1].map((i) => new DashboardClient(cluster().doors[i % cluster().processes]!.url));
      for (const c of clients) expect((await c.get(link)).status).toBe(200);
      const answers = await Promise.all(clients.map((c, i) => c.post(link, { as: 'new', password: `a long enough password ${i}`, name: `Racer ${i}` })));
      const joined = answers.filter((a) => new URL(a.url).pathname === '/dashboard' && a.status === 200);
      expect(joined, answers.map((a) => `${a.status} ${a.url}`).join(', ')).toHaveLength(1);
      for (const a of answers.filter((x) => !joined.includes(x))) expect([409, 410]).toContain(a.status);
      const db = cluster().server.container.db.kysely;
      expect(await db.selectFrom('users').select('id').where('email', '=', email).execute()).toHaveLength(1);
      expect(await db.selectFrom('memberships').select('id').where('workspace_id', '=', ws.workspace_id).execute()).toHaveLength(1);
    }
  });
});
