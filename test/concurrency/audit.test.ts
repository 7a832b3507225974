import { expect, it } from 'vitest';
import type { AuditLog } from '../../src/core/audit/audit.schema.js';
import { brandWithConnections } from '../support/factories.js';
import { describeCluster, statuses } from './support.js';

/**
 * Audit entries are written in the change's own transaction, across processes: parallel changes that the
 * database lets only some of through leave exactly one entry per change that happened, each naming its request.
 */
describeCluster('audit entries under parallel changes', (cluster) => {
  const log = async (ws: { workspace_id: string; api_key: string }, action: string) =>
    (await cluster().doors[0]!.request<AuditLog>('GET', `/api/v1/workspaces/${ws.workspace_id}/audit-log?action=${action}`, { key: ws.api_key })).body.data;

  it('brands created past the plan: one entry per brand made, none for the refused', async () => {
    const ws = await cluster().workspace();
    await cluster().server.container.services.workspaces.setPlan(ws.workspace_id, 'tight');
    const results = await cluster().split(8, (door, i) => door.request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name: `Brand ${i}` } }));
    expect(statuses(results)).toEqual({ 201: 3, 403: 5 });
    const made = results.filter((r) => r.status === 201);
    const entries = await log(ws, 'brand.created');
    expect(entries.map((e) => e.request_id).sort()).toEqual(made.map((r) => r.headers.get('x-request-id')).sort());
    expect(entries.map((e) => e.target?.id).sort()).toEqual(made.map((r) => r.body.id).sort());
  });

  it('one content canceled by many requests at once: one entry', async () => {
    const { ws, brandId } = await brandWithConnections(cluster().server, ['threads']);
    const draft = await cluster().doors[0]!.request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
      key: ws.api_key,
      body: { brand_id: brandId, target_platforms: ['threads'], content_type: 'text', text: 'Raced', draft: true },
    });
    const contentId = draft.body.content_id as string;
    const results = await cluster().split(10, (door) => door.request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents/${contentId}/cancel`, { key: ws.api_key }));
    expect(statuses(results)).toEqual({ 200: 10 });
    const entries = await log(ws, 'content.canceled');
    expect(entries).toHaveLength(1);
    expect(results.map((r) => r.headers.get('x-request-id'))).toContain(entries[0]!.request_id);
  });
});
