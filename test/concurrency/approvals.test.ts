import { expect, it } from 'vitest';
import { mintApiKey } from '../../src/core/api-keys/api-keys.service.js';
import type { NewWorkspace } from '../../src/core/workspaces/workspaces.service.js';
import { brandWithConnections } from '../support/factories.js';
import { type Cluster, describeCluster, statuses } from './support.js';

/**
 * Approvals under concurrency (README, Approvals), two processes on PostgreSQL: each review step is one
 * conditional update on the content's status and version, so a double approval starts and charges once, and of
 * an approval, an edit and a cancel racing for one content, what publishes is exactly the version the approval
 * read: an edit that commits in between makes the approval fail; never is a content published unapproved.
 */

async function used(cluster: Cluster, ws: NewWorkspace, meter: string): Promise<number> {
  const res = await cluster.doors[0]!.request('GET', `/api/v1/workspaces/${ws.workspace_id}/usage`, { key: ws.api_key });
  return (res.body.meters as { meter: string; used: number }[]).find((m) => m.meter === meter)!.used;
}

async function contributorKey(cluster: Cluster, ws: NewWorkspace): Promise<string> {
  const db = cluster.server.container.db.kysely;
  return (await db.transaction().execute((tx) => mintApiKey(tx, ws.workspace_id, 'contributor', Date.now(), { role: 'contributor', brandIds: null, createdBy: null }))).apiKey;
}

describeCluster('concurrent approvals', (cluster) => {
  it('20 parallel approvals of one content: one 200, the others 409; its jobs are made once and it is charged once', async () => {
    const { ws, brandId } = await brandWithConnections(cluster().server, ['threads', 'linkedin']);
    const contributor = await contributorKey(cluster(), ws);
    const base = `/api/v1/workspaces/${ws.workspace_id}`;
    const made = await cluster().doors[0]!.request('POST', `${base}/contents`, { key: contributor, body: { brand_id: brandId, target_platforms: ['threads', 'linkedin'], content_type: 'text', text: 'approve me once' } });
    expect(made.body.status).toBe('pending_approval');
    const id = made.body.content_id as string;
    const results = await cluster().split(20, (door) => door.request('POST', `${base}/contents/${id}/approve`, { key: ws.api_key, body: { publish_now: true } }));
    expect(statuses(results), cluster().childOutput()).toEqual({ 200: 1, 409: 19 });
    for (const r of results.filter((r) => r.status === 409)) expect(r.body.error).toBe('content_not_editable');
    const jobs = await cluster().server.container.db.kysely.selectFrom('jobs').select('id').where('content_id', '=', id).execute();
    expect(jobs).toHaveLength(2);
    expect(await used(cluster(), ws, 'criacao_de_conteudos')).toBe(1);
    expect(await used(cluster(), ws, 'publicacoes')).toBe(2);
    const approvals = await cluster().server.container.db.kysely.selectFrom('audit_events').select('id').where('target_id', '=', id).where('action', '=', 'content.approved').execute();
    expect(approvals).toHaveLength(1);
  });

  it('approve vs a contributor edit vs a cancel, at once on 12 contents: a cancel and an approval never both succeed, and only the version approved publishes', async () => {
    const { ws, brandId } = await brandWithConnections(cluster().server, ['linkedin']);
    const contributor = await contributorKey(cluster(), ws);
    const base = `/api/v1/workspaces/${ws.workspace_id}`;
    const db = cluster().server.container.db.kysely;
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const made = await cluster().doors[0]!.request('POST', `${base}/contents`, { key: contributor, body: { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: `v1 ${i}` } });
      expect(made.body.status).toBe('pending_approval');
      ids.push(made.body.content_id as string);
    }
    // For each content, three requests at once through alternating processes; the cancel only on even contents.
    const rounds = await Promise.all(
      ids.map(async (id, i) => {
        const doors = cluster().doors;
        const d = (k: number) => doors[(i + k) % doors.length]!;
        const [approve, edit, cancel] = await Promise.all([
          d(0).request('POST', `${base}/contents/${id}/approve`, { key: ws.api_key, body: { publish_now: true } }),
          d(1).request('PATCH', `${base}/contents/${id}`, { key: contributor, body: { text: `v2 ${i}` } }),
          i % 2 === 0 ? d(2).request('POST', `${base}/contents/${id}/cancel`, { key: ws.api_key }) : Promise.resolve(null),
        ]);
        return { id, approve, edit, cancel };
      }),
    );
    let started = 0;
    for (const r of rounds) {
      expect([200, 409], r.approve.text).toContain(r.approve.status);
      const row = await db.selectFrom('contents').select(['status', 'request']).where('id', '=', r.id).executeTakeFirstOrThrow();
      const jobs = await db.selectFrom('jobs').select('id').where('content_id', '=', r.id).execute();
      if (r.approve.status === 200) {
        // A cancel never succeeds beside an approval; an edit only when it committed before the approval read
        // the content (then the approval approved the edited text, checked below).
        started += 1;
        if (r.cancel) expect(r.cancel.status, r.cancel.text).toBe(409);
        expect([200, 409], r.edit.text).toContain(r.edit.status);
        if (r.edit.status === 200) expect((r.edit.body as { status: string }).status).toBe('pending_approval');
        expect(row.status).toBe('publishing');
        expect(jobs).toHaveLength(1);
        // What publishes is what the approver approved: the text as it was when the approval committed.
        expect(JSON.parse(row.request).text).toBe((r.approve.body as { text: string }).text);
      } else {
        expect(r.approve.body.error).toBe('content_not_editable');
        expect(['pending_approval', 'canceled']).toContain(row.status);
        expect(jobs).toEqual([]);
      }
    }
    expect(await used(cluster(), ws, 'criacao_de_conteudos')).toBe(started);
    expect(await used(cluster(), ws, 'publicacoes')).toBe(started);
  });
});
