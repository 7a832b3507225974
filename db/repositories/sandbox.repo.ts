import { type Kysely, sql } from 'kysely';
import type { Database } from '../schema.js';

/** The sandbox network's own storage: containers and the posts made from them. */

export async function insertSandboxContainer(db: Kysely<Database>, id: string, jobId: string, now: number): Promise<void> {
  await db.insertInto('sandbox_containers').values({ id, job_id: jobId, created_at: now }).execute();
}

/**
 * Publishes a container at most once: a second call returns the post made by the first. The insert names the post
 * it made; only a container already published is read back.
 */
export async function publishSandboxContainer(
  db: Kysely<Database>,
  row: { id: string; containerId: string; jobId: string; connectionId: string; platformSlug: string; now: number },
): Promise<string> {
  const inserted = await db
    .insertInto('sandbox_posts')
    .values({ id: row.id, container_id: row.containerId, job_id: row.jobId, connection_id: row.connectionId, platform_slug: row.platformSlug, created_at: row.now })
    .onConflict((oc) => oc.column('container_id').doNothing())
    .returning('id')
    .executeTakeFirst();
  if (inserted !== undefined) return inserted.id;
  const existing = await db.selectFrom('sandbox_posts').select('id').where('container_id', '=', row.containerId).executeTakeFirst();
  if (existing === undefined) throw new Error(`sandbox container ${row.containerId} has no post after publishing`);
  return existing.id;
}

export async function sandboxPostExists(db: Kysely<Database>, id: string): Promise<boolean> {
  return (await db.selectFrom('sandbox_posts').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

/** The sandbox's store over the service's database, as the sandbox adapter takes it. */
export function sandboxStore(db: Kysely<Database>) {
  return {
    insertContainer: (id: string, jobId: string, now: number) => insertSandboxContainer(db, id, jobId, now),
    publishContainer: (row: Parameters<typeof publishSandboxContainer>[1]) => publishSandboxContainer(db, row),
    postExists: (id: string) => sandboxPostExists(db, id),
  };
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
