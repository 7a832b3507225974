import { describe, expect, it } from 'vitest';
import { rowBatches } from '../../db/row-batches.js';
import { jobWritesUnderLease } from '../../db/repositories/jobs.repo.js';
import { sandboxStore } from '../../db/repositories/sandbox.repo.js';
import { brandWithConnections } from '../support/factories.js';
import { statementsDuring } from '../support/pg-statements.js';
import { describeEachDb } from '../support/server.js';

describe('rowBatches', () => {
  /** A writer that records each statement's items and answers when `release` is called. */
  const recording = (fail: (item: number) => boolean = () => false) => {
    const statements: number[][] = [];
    const open: (() => void)[] = [];
    const write = (items: number[]) =>
      new Promise<string[]>((resolve, reject) => {
        statements.push(items);
        open.push(() => (items.some(fail) ? reject(new Error(`refused ${items.join(',')}`)) : resolve(items.map((i) => `done ${i}`))));
      });
    const releaseAll = async () => {
      while (open.length > 0) {
        open.shift()!();
        await new Promise((r) => setImmediate(r));
      }
    };
    return { statements, write, releaseAll };
  };

  it('sends the items of one turn in one statement, and each gets its own result', async () => {
    const w = recording();
    const write = rowBatches(w.write);
    const results = Promise.all([1, 2, 3].map((i) => write(i)));
    await new Promise((r) => setImmediate(r));
    await w.releaseAll();
    expect(await results).toEqual(['done 1', 'done 2', 'done 3']);
    expect(w.statements).toEqual([[1, 2, 3]]);
  });

  it('items that arrive while a statement is out go together in the next one', async () => {
    const w = recording();
    const write = rowBatches(w.write);
    const first = write(1);
    await new Promise((r) => setImmediate(r));
    expect(w.statements).toEqual([[1]]);
    const later = [2, 3, 4].map((i) => write(i));
    await new Promise((r) => setImmediate(r));
    // Still one statement out: the three wait for it.
    expect(w.statements).toEqual([[1]]);
    await w.releaseAll();
    expect(await Promise.all([first, ...later])).toEqual(['done 1', 'done 2', 'done 3', 'done 4']);
    expect(w.statements).toEqual([[1], [2, 3, 4]]);
  });

  it('a batch larger than the most per statement is split', async () => {
    const w = recording();
    const write = rowBatches(w.write, 2);
    const results = Promise.all([1, 2, 3, 4, 5].map((i) => write(i)));
    await new Promise((r) => setImmediate(r));
    await w.releaseAll();
    await results;
    expect(w.statements).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('a failed statement is written again item by item: only the item that fails rejects', async () => {
    const w = recording((i) => i === 2);
    const write = rowBatches(w.write);
    const results = Promise.allSettled([1, 2, 3].map((i) => write(i)));
    await new Promise((r) => setImmediate(r));
    await w.releaseAll();
    const settled = await results;
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(settled[0]).toMatchObject({ value: 'done 1' });
    expect(settled[1]).toMatchObject({ reason: new Error('refused 2') });
    expect(w.statements).toEqual([[1, 2, 3], [1], [2], [3]]);
  });
});

describeEachDb('job steps and sandbox posts of the moment written together', (server, kind) => {
  /**
   * A content on three networks whose jobs are then held far ahead under one lease each. The server's worker may
   * claim one in between, so the statements counted below are only those carrying these jobs' ids.
   */
  const leasedJobs = async () => {
    const { ws, brandId } = await brandWithConnections(server(), ['linkedin', 'threads', 'x']);
    const res = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
      key: ws.api_key,
      body: { brand_id: brandId, content_type: 'text', text: 'batched', target_platforms: ['linkedin', 'threads', 'x'] },
    });
    expect(res.status).toBe(201);
    const contentId = res.body.content_id as string;
    const db = server().container.db.kysely;
    const jobs = await db.selectFrom('jobs').select('id').where('content_id', '=', contentId).execute();
    for (const j of jobs) await db.updateTable('jobs').set({ locked_by: `lease_${j.id}`, locked_until: Date.now() + 3_600_000 }).where('id', '=', j.id).execute();
    return { contentId, ids: jobs.map((j) => j.id) };
  };
  /** The publisher's job writes on this server's database, each batch in a transaction of its own. */
  const jobWrites = () => {
    const db = server().container.db.kysely;
    return jobWritesUnderLease(db, server().container.db.dialect, (work) => db.transaction().execute(work));
  };
  const batched = (texts: string[]) => texts.filter((t) => t.includes('json_array_elements') || t.includes('json_populate_recordset'));

  it('writes each job only under its own lease, all in one statement', async () => {
    const db = server().container.db.kysely;
    const writes = jobWrites();
    const { contentId, ids } = await leasedJobs();
    const at = Date.now();
    let results: boolean[] = [];
    const texts = await statementsDuring(async () => {
      results = await Promise.all([
        ...ids.map((id, i) => writes.write({ id, contentId, lease: `lease_${id}`, changes: { status: 'publishing', attempts: i + 1, external_container_id: `c_${i}`, updated_at: at } })),
        // Another worker's lease: not this job's.
        writes.write({ id: ids[0]!, contentId, lease: 'lease_stale', changes: { status: 'publishing', attempts: 9, external_container_id: 'c_stale', updated_at: at } }),
      ]);
    }, { carrying: ids });
    expect(results).toEqual([true, true, true, false]);
    if (kind.name === 'postgres') expect(batched(texts)).toHaveLength(1);
    const rows = await db.selectFrom('jobs').select(['id', 'status', 'attempts', 'external_container_id', 'locked_by']).where('id', 'in', ids).execute();
    for (const [i, id] of ids.entries()) {
      expect(rows.find((r) => r.id === id)).toEqual({ id, status: 'publishing', attempts: i + 1, external_container_id: `c_${i}`, locked_by: `lease_${id}` });
    }
  });

  it('a release writes the lease column to null while checking the lease it releases', async () => {
    const db = server().container.db.kysely;
    const { contentId, ids } = await leasedJobs();
    const id = ids[0]!;
    expect(await jobWrites().write({ id, contentId, lease: `lease_${id}`, changes: { status: 'queued', run_at: 5, locked_by: null, locked_until: null, updated_at: 6 } })).toBe(true);
    expect(await db.selectFrom('jobs').select(['status', 'run_at', 'locked_by', 'locked_until']).where('id', '=', id).executeTakeFirstOrThrow()).toEqual({
      status: 'queued',
      run_at: kind.name === 'postgres' ? '5' : 5,
      locked_by: null,
      locked_until: null,
    });
  });

  it('unfinished steps set their contents back to publishing in the same statement; a lost lease writes neither', async () => {
    const db = server().container.db.kysely;
    const writes = jobWrites();
    const a = await leasedJobs();
    const b = await leasedJobs();
    for (const c of [a, b]) await db.updateTable('contents').set({ status: 'partial', completed_at: 5 }).where('id', '=', c.contentId).execute();
    const at = Date.now() + 60_000;
    const changes = { status: 'confirming', external_post_id: 'p', updated_at: at };
    let results: boolean[] = [];
    const texts = await statementsDuring(async () => {
      results = await Promise.all([writes.writeUnfinished({ id: a.ids[0]!, contentId: a.contentId, lease: `lease_${a.ids[0]}`, changes }, at), writes.writeUnfinished({ id: b.ids[0]!, contentId: b.contentId, lease: 'lease_stale', changes }, at)]);
    }, { carrying: [a.ids[0]!, b.ids[0]!] });
    expect(results).toEqual([true, false]);
    if (kind.name === 'postgres') expect(batched(texts)).toHaveLength(1);
    const contents = await db.selectFrom('contents').select(['id', 'status', 'completed_at', 'updated_at']).where('id', 'in', [a.contentId, b.contentId]).execute();
    expect(contents.find((c) => c.id === a.contentId)).toMatchObject({ status: 'publishing', completed_at: null });
    expect(Number(contents.find((c) => c.id === a.contentId)?.updated_at)).toBe(at);
    expect(contents.find((c) => c.id === b.contentId)).toMatchObject({ status: 'partial' });
    expect(Number(contents.find((c) => c.id === b.contentId)?.completed_at)).toBe(5);
    expect(await db.selectFrom('jobs').select('status').where('id', '=', b.ids[0]!).executeTakeFirstOrThrow()).toEqual({ status: 'queued' });
  });

  it('two writers on the same jobs at once: each job is written by its lease holder alone', async () => {
    const db = server().container.db.kysely;
    const { contentId, ids } = await leasedJobs();
    // Two writers, as two processes have; the second holds none of the leases.
    const mine = jobWrites();
    const theirs = jobWrites();
    const results = await Promise.all(
      ids.flatMap((id) => [
        mine.write({ id, contentId, lease: `lease_${id}`, changes: { external_container_id: `mine_${id}`, updated_at: 1 } }),
        theirs.write({ id, contentId, lease: 'lease_theirs', changes: { external_container_id: `theirs_${id}`, updated_at: 2 } }),
      ]),
    );
    expect(results).toEqual(ids.flatMap(() => [true, false]));
    const rows = await db.selectFrom('jobs').select(['id', 'external_container_id']).where('id', 'in', ids).execute();
    for (const r of rows) expect(r.external_container_id).toBe(`mine_${r.id}`);
  });

  it('the sandbox publishes each container once, the moment’s posts in one statement, and finds them in one', async () => {
    const db = server().container.db.kysely;
    const sandbox = sandboxStore(db, server().container.db.dialect, (work) => db.transaction().execute(work));
    const { ids } = await leasedJobs();
    const now = Date.now();
    await Promise.all(ids.map((id) => sandbox.insertContainer(`ctr_${id}`, id, now)));
    const publication = (id: string, post: string) => ({ id: post, containerId: `ctr_${id}`, jobId: id, connectionId: 'conn', platformSlug: 'x', now });
    let first: string[] = [];
    const texts = await statementsDuring(async () => {
      first = await Promise.all(ids.map((id) => sandbox.publishContainer(publication(id, `post_${id}`))));
    }, { carrying: ids });
    expect(first).toEqual(ids.map((id) => `post_${id}`));
    // Only the statements for these jobs' posts: the server's own workers may write posts and job steps meanwhile
    // (a job of a content just created can be claimed before its lease is set).
    if (kind.name === 'postgres') expect(batched(texts).filter((t) => t.includes('sandbox_posts'))).toHaveLength(1);
    // Published again (a job taken over after a lost answer): the post made first, nothing new.
    const again = await Promise.all(ids.map((id) => sandbox.publishContainer(publication(id, `again_${id}`))));
    expect(again).toEqual(first);
    const posts = await db.selectFrom('sandbox_posts').select('id').where('job_id', 'in', ids).execute();
    expect(posts.map((p) => p.id).sort()).toEqual([...first].sort());
    // The confirmations' reads of the moment: one statement, each post found or not by its own id.
    let found: boolean[] = [];
    const reads = await statementsDuring(async () => {
      found = await Promise.all([...first, 'post_missing'].map((id) => sandbox.postExists(id)));
    }, { carrying: ids });
    expect(found).toEqual([...first.map(() => true), false]);
    if (kind.name === 'postgres') expect(reads.filter((t) => t.includes('sandbox_posts'))).toHaveLength(1);
  });
});
