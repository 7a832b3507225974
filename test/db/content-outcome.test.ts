import { expect, it } from 'vitest';
import { findContent, markContentPublishing } from '../../db/repositories/contents.repo.js';
import { brandWithConnections } from '../support/factories.js';
import { describeEachDb } from '../support/server.js';

describeEachDb("a job step that leaves its job unfinished keeps the content publishing", (server) => {
  const created = async () => {
    const { ws, brandId } = await brandWithConnections(server(), ['linkedin']);
    const res = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
      key: ws.api_key,
      body: { brand_id: brandId, content_type: 'text', text: 'hello', target_platforms: ['linkedin'] },
    });
    expect(res.status).toBe(201);
    const id = res.body.content_id as string;
    return { id, read: () => findContent(server().container.db.kysely, ws.workspace_id, id) };
  };

  it('a content already publishing is not written (updated_at unchanged)', async () => {
    const db = server().container.db.kysely;
    const { id, read } = await created();
    const before = await read();
    expect(before?.status).toBe('publishing');
    await markContentPublishing(db, id, (before?.updatedAt ?? 0) + 60_000);
    expect(await read()).toEqual(before);
  });

  it('a content shown with a final outcome goes back to publishing, its completion cleared', async () => {
    const db = server().container.db.kysely;
    const { id, read } = await created();
    await db.updateTable('contents').set({ status: 'failed', completed_at: 5 }).where('id', '=', id).execute();
    const at = Date.now() + 60_000;
    await markContentPublishing(db, id, at);
    const after = await read();
    expect(after).toMatchObject({ status: 'publishing', completedAt: null, updatedAt: at });
  });
});
