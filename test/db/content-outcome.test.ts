import { expect, it } from 'vitest';
import { findContent } from '../../db/repositories/contents.repo.js';
import type { JobUpdate } from '../../db/repositories/jobs.repo.js';
import { writeJobStep } from '../../src/core/jobs/outcome.js';
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
    const db = server().container.db.kysely;
    const job = await db.selectFrom('jobs').select('id').where('content_id', '=', id).executeTakeFirstOrThrow();
    // Held far ahead, so the service's own worker does not claim the job meanwhile.
    await db.updateTable('jobs').set({ locked_by: 'lease_1', locked_until: Date.now() + 3_600_000 }).where('id', '=', job.id).execute();
    return { id, jobId: job.id, read: () => findContent(db, ws.workspace_id, id) };
  };
  /** The publisher's write of a step that leaves its job unfinished, on this server's database. */
  const unfinished = (contentId: string, jobId: string, at: number, lease = 'lease_1', changes: JobUpdate = { confirm_misses: 1, updated_at: at }) => {
    const db = server().container.db.kysely;
    return db.transaction().execute((tx) => writeJobStep(tx, { id: jobId, contentId, lease, changes }, 'unfinished', at));
  };

  it('a content already publishing is not written (updated_at unchanged)', async () => {
    const { id, jobId, read } = await created();
    const before = await read();
    expect(before?.status).toBe('publishing');
    expect(await unfinished(id, jobId, (before?.updatedAt ?? 0) + 60_000)).toBe(true);
    expect(await read()).toEqual(before);
  });

  it('a content shown with a final outcome goes back to publishing, its completion cleared', async () => {
    const db = server().container.db.kysely;
    const { id, jobId, read } = await created();
    await db.updateTable('contents').set({ status: 'failed', completed_at: 5 }).where('id', '=', id).execute();
    const at = Date.now() + 60_000;
    expect(await unfinished(id, jobId, at)).toBe(true);
    const after = await read();
    expect(after).toMatchObject({ status: 'publishing', completedAt: null, updatedAt: at });
  });

  it('a step writes the job under its lease and sets its content back to publishing; a lost lease writes neither', async () => {
    const db = server().container.db.kysely;
    const { id, jobId, read } = await created();
    const job = { id: jobId };
    await db.updateTable('contents').set({ status: 'partial', completed_at: 5 }).where('id', '=', id).execute();
    const before = await read();
    const at = Date.now() + 60_000;

    expect(await unfinished(id, job.id, at, 'lease_other', { status: 'confirming', external_post_id: 'post_1', updated_at: at })).toBe(false);
    expect(await read()).toEqual(before);
    expect(await db.selectFrom('jobs').select(['status', 'external_post_id']).where('id', '=', job.id).executeTakeFirstOrThrow()).toEqual({ status: 'queued', external_post_id: null });

    expect(await unfinished(id, job.id, at, 'lease_1', { status: 'confirming', external_post_id: 'post_1', updated_at: at })).toBe(true);
    expect(await read()).toMatchObject({ status: 'publishing', completedAt: null, updatedAt: at });
    expect(await db.selectFrom('jobs').select(['status', 'external_post_id', 'updated_at']).where('id', '=', job.id).executeTakeFirstOrThrow()).toMatchObject({ status: 'confirming', external_post_id: 'post_1' });

    // Already publishing: the content's row is left as it is.
    const publishing = await read();
    expect(await unfinished(id, job.id, at + 1)).toBe(true);
    expect(await read()).toEqual(publishing);
  });

  it('on PostgreSQL, the last two jobs of a content finishing at once in two transactions record its outcome once', async (ctx) => {
    if (server().container.db.dialect !== 'postgres') ctx.skip();
    const db = server().container.db.kysely;
    const { ws, brandId } = await brandWithConnections(server(), ['linkedin', 'threads']);
    const res = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
      key: ws.api_key,
      body: { brand_id: brandId, content_type: 'text', text: 'two at once', target_platforms: ['linkedin', 'threads'] },
    });
    const contentId = res.body.content_id as string;
    const jobs = await db.selectFrom('jobs').select('id').where('content_id', '=', contentId).execute();
    expect(jobs).toHaveLength(2);
    for (const j of jobs) await db.updateTable('jobs').set({ locked_by: `lease_${j.id}`, locked_until: Date.now() + 3_600_000 }).where('id', '=', j.id).execute();
    const at = Date.now();
    const finish = (jobId: string, beforeCommit: () => Promise<void>) =>
      db.transaction().execute(async (tx) => {
        const written = await writeJobStep(tx, { id: jobId, contentId, lease: `lease_${jobId}`, changes: { status: 'published', active: 0, locked_by: null, updated_at: at } }, 'final', at);
        await beforeCommit();
        return written;
      });
    // The first holds its transaction open after reading the jobs (the other still unfinished to it); the second
    // must wait for the content's lock, then read both final. Without the lock it would read the first unfinished
    // too, and neither would record the outcome.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let firstRead!: () => void;
    const read = new Promise<void>((r) => (firstRead = r));
    const first = finish(jobs[0]!.id, () => (firstRead(), held));
    await read;
    const second = finish(jobs[1]!.id, () => Promise.resolve());
    await new Promise((r) => setTimeout(r, 200));
    release();
    expect(await Promise.all([first, second])).toEqual([true, true]);
    expect((await db.selectFrom('contents').select('status').where('id', '=', contentId).executeTakeFirstOrThrow()).status).toBe('published');
    const events = await db.selectFrom('events').select('type').where('subject_id', '=', contentId).execute();
    expect(events.map((e) => e.type)).toEqual(['content.published']);
    // A lost lease writes nothing, the content included.
    const before = await db.selectFrom('contents').selectAll().where('id', '=', contentId).executeTakeFirstOrThrow();
    expect(await db.transaction().execute((tx) => writeJobStep(tx, { id: jobs[0]!.id, contentId, lease: 'lease_gone', changes: { status: 'failed', updated_at: at + 1 } }, 'final', at + 1))).toBe(false);
    expect(await db.selectFrom('contents').selectAll().where('id', '=', contentId).executeTakeFirstOrThrow()).toEqual(before);
    expect((await db.selectFrom('jobs').select('status').where('id', '=', jobs[0]!.id).executeTakeFirstOrThrow()).status).toBe('published');
  });

  it('final steps over the same contents, in opposite orders at once, each in its own transaction, record each outcome once', async () => {
    const db = server().container.db.kysely;
    const { ws, brandId } = await brandWithConnections(server(), ['linkedin', 'threads']);
    const contents: { id: string; jobs: string[] }[] = [];
    for (let i = 0; i < 6; i += 1) {
      const res = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
        key: ws.api_key,
        body: { brand_id: brandId, content_type: 'text', text: `batch ${i}`, target_platforms: ['linkedin', 'threads'] },
      });
      const id = res.body.content_id as string;
      const jobs = await db.selectFrom('jobs').select('id').where('content_id', '=', id).orderBy('id').execute();
      for (const j of jobs) await db.updateTable('jobs').set({ locked_by: `lease_${j.id}`, locked_until: Date.now() + 3_600_000 }).where('id', '=', j.id).execute();
      contents.push({ id, jobs: jobs.map((j) => j.id) });
    }
    const at = Date.now();
    const write = (id: string, contentId: string, status: string) => ({ id, contentId, lease: `lease_${id}`, changes: { status, active: 0, locked_by: null, updated_at: at } });
    // Each content's first job in one sequence, its second in the other, the two sequences' contents in opposite
    // orders, every step started at once; the first content's second job fails, so its outcome is partial.
    const batch = (jobs: { id: string; contentId: string; status: string }[]) =>
      Promise.all(jobs.map((j) => db.transaction().execute((tx) => writeJobStep(tx, write(j.id, j.contentId, j.status), 'final', at))));
    const results = await Promise.all([
      batch(contents.map((c) => ({ id: c.jobs[0]!, contentId: c.id, status: 'published' }))),
      batch([...contents].reverse().map((c, i) => ({ id: c.jobs[1]!, contentId: c.id, status: i === contents.length - 1 ? 'failed' : 'published' }))),
    ]);
    expect(results).toEqual([contents.map(() => true), contents.map(() => true)]);
    for (const [i, c] of contents.entries()) {
      const outcome = i === 0 ? 'partial' : 'published';
      expect((await db.selectFrom('contents').select('status').where('id', '=', c.id).executeTakeFirstOrThrow()).status).toBe(outcome);
      const events = await db.selectFrom('events').select('type').where('subject_id', '=', c.id).execute();
      expect(events.map((e) => e.type)).toEqual([`content.${outcome}`]);
    }
  });
});
