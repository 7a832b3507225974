import { type Kysely, sql } from 'kysely';
import type { Database } from '../schema.js';
import { compiledOnce } from './compiled-once.js';

/** The sandbox network's own storage: containers and the posts made from them. */

// The sandbox's statements run once per sandbox job: compiled once.
const insertContainer = compiledOnce((db) => db.insertInto('sandbox_containers').values({ id: '', job_id: '', created_at: 0 }));
const insertPost = compiledOnce((db) =>
  db
    .insertInto('sandbox_posts')
    .values({ id: '', container_id: '', job_id: '', connection_id: '', platform_slug: '', created_at: 0 })
    .onConflict((oc) => oc.column('container_id').doNothing())
    .returning('id'),
);
const postOfContainer = compiledOnce((db) => db.selectFrom('sandbox_posts').select('id').where('container_id', '=', ''));
const postById = compiledOnce((db) => db.selectFrom('sandbox_posts').select('id').where('id', '=', ''));

export async function insertSandboxContainer(db: Kysely<Database>, id: string, jobId: string, now: number): Promise<void> {
  await insertContainer(db, [id, jobId, now]);
}

/**
 * Publishes a container at most once: a second call returns the post made by the first. The insert names the post
 * it made; only a container already published is read back. Its first statement writes, so it may join a batch.
 */
export async function publishSandboxContainer(
  db: Kysely<Database>,
  row: { id: string; containerId: string; jobId: string; connectionId: string; platformSlug: string; now: number },
): Promise<string> {
  const [inserted] = (await insertPost(db, [row.id, row.containerId, row.jobId, row.connectionId, row.platformSlug, row.now])).rows;
  if (inserted !== undefined) return inserted.id;
  const [existing] = (await postOfContainer(db, [row.containerId])).rows;
  if (existing === undefined) throw new Error(`sandbox container ${row.containerId} has no post after publishing`);
  return existing.id;
}

export async function sandboxPostExists(db: Kysely<Database>, id: string): Promise<boolean> {
  return (await postById(db, [id])).rows.length > 0;
}

/** Posts per job, for proving that nothing was posted twice. */
export async function sandboxPostsPerJob(db: Kysely<Database>): Promise<{ jobId: string; posts: number }[]> {
  const rows = await db
    .selectFrom('sandbox_posts')
    .select(['job_id', sql<number | string>`count(*)`.as('n')])
    .groupBy('job_id')
    .execute();
  return rows.map((r) => ({ jobId: r.job_id, posts: Number(r.n) }));
}
