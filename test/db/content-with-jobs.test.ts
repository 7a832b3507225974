import { expect, it } from 'vitest';
import { findContent, findContentWithJobs } from '../../db/repositories/contents.repo.js';
import { listJobsForContent } from '../../db/repositories/jobs.repo.js';
import { brandWithConnections } from '../support/factories.js';
import { describeEachDb } from '../support/server.js';

/**
 * Every read of one content takes it with its jobs through `findContentWithJobs`: on PostgreSQL in one statement,
 * the jobs as JSON. It must read exactly what the content's row and its jobs' rows say, read one by one.
 */
describeEachDb('a content read with its jobs', (server) => {
  const created = async (platforms: string[]) => {
    const { ws, brandId } = await brandWithConnections(server(), platforms);
    const res = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
      key: ws.api_key,
      body: { brand_id: brandId, content_type: 'text', text: 'hello', target_platforms: platforms },
    });
    expect(res.status).toBe(201);
    return { ws: ws.workspace_id, id: res.body.content_id as string };
  };
  const apart = async (ws: string, id: string) => {
    const db = server().container.db.kysely;
    const content = await findContent(db, ws, id);
    return content && { content, jobs: await listJobsForContent(db, id) };
  };

  it('reads the same row and jobs as the statements one by one, jobs in creation order, ties by id', async () => {
    const db = server().container.db.kysely;
    const { ws, id } = await created(['linkedin', 'bluesky', 'threads']);
    const jobs = await db.selectFrom('jobs').select('id').where('content_id', '=', id).orderBy('id', 'desc').execute();
    expect(jobs).toHaveLength(3);
    // Written far from the service's own worker: held under a lease an hour ahead.
    const lease = { locked_by: 'lease_t', locked_until: Date.now() + 3_600_000 };
    const at = 1_700_000_000_000;
    await db.updateTable('jobs').set({ ...lease, created_at: at }).where('content_id', '=', id).execute();
    await db
      .updateTable('jobs')
      .set({ status: 'published', published_at: at + 5, external_post_id: 'p1', external_post_url: 'https://example.test/p1', attempts: 2, network_state: JSON.stringify({ chain: [1, 2], cursor: 'x' }) })
      .where('id', '=', jobs[0]!.id)
      .execute();
    await db.updateTable('jobs').set({ status: 'failed', error_code: 'network_error', error_message: 'timed out', confirm_deadline: at + 9, active: 0 }).where('id', '=', jobs[1]!.id).execute();

    const together = await findContentWithJobs(db, ws, id);
    expect(together).toEqual(await apart(ws, id));
    expect(together!.jobs.map((j) => j.id)).toEqual(jobs.map((j) => j.id).reverse());
    expect(together!.jobs[2]).toMatchObject({ status: 'published', publishedAt: at + 5, attempts: 2, networkState: { chain: [1, 2], cursor: 'x' } });
    expect(together!.jobs[1]).toMatchObject({ status: 'failed', confirmDeadline: at + 9, active: false });
  });

  it('a content without jobs reads with none; another workspace, or no such content, reads nothing', async () => {
    const db = server().container.db.kysely;
    const { ws, id } = await created(['linkedin']);
    const other = await created(['linkedin']);
    await db.deleteFrom('jobs').where('content_id', '=', id).execute();
    const together = await findContentWithJobs(db, ws, id);
    expect(together).toEqual(await apart(ws, id));
    expect(together!.jobs).toEqual([]);
    expect(await findContentWithJobs(db, other.ws, id)).toBeUndefined();
    expect(await findContentWithJobs(db, ws, 'cnt_missing')).toBeUndefined();
  });
});
