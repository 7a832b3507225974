import { CompiledQuery, type Kysely, sql } from 'kysely';
import { rowBatches } from '../row-batches.js';
import type { Transact } from '../transaction-batch.js';
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

type ContainerPublication = Parameters<typeof publishSandboxContainer>[1];

/**
 * The sandbox's store for the jobs of a process, the writes that arrive together sent together (`rowBatches`), as
 * the job steps around them are (`jobWritesUnderLease`):
 * - PostgreSQL: one statement each, the rows as one JSON array read back as rows of the table (so the text is the
 *   same for any number of them), and the confirmations' reads of the moment as one select of an id array;
 * - SQLite: one piece of the write batch (`transact`), each row by its own compiled statement; reads go at once.
 */
export function sandboxStore(db: Kysely<Database>, dialect: 'sqlite' | 'postgres', transact: Transact) {
  const insertContainers = rowBatches(async (rows: { id: string; jobId: string; now: number }[]) => {
    if (dialect === 'sqlite') {
      await transact(async (tx) => {
        for (const r of rows) await insertSandboxContainer(tx, r.id, r.jobId, r.now);
      });
    } else {
      const json = JSON.stringify(rows.map((r) => ({ id: r.id, job_id: r.jobId, created_at: r.now })));
      await db.executeQuery(
        CompiledQuery.raw(
          'insert into "sandbox_containers" ("id", "job_id", "created_at") select "id", "job_id", "created_at" from json_populate_recordset(null::"sandbox_containers", $1::json)',
          [json],
        ),
      );
    }
    return rows.map(() => undefined);
  });
  /** The post each publication made, or undefined where its container was published already. */
  const insertPosts = rowBatches(async (rows: ContainerPublication[]): Promise<(string | undefined)[]> => {
    if (dialect === 'sqlite') {
      return transact(async (tx) => {
        const made: (string | undefined)[] = [];
        for (const r of rows) made.push((await insertPost(tx, [r.id, r.containerId, r.jobId, r.connectionId, r.platformSlug, r.now])).rows[0]?.id);
        return made;
      });
    }
    const json = JSON.stringify(
      rows.map((r) => ({ id: r.id, container_id: r.containerId, job_id: r.jobId, connection_id: r.connectionId, platform_slug: r.platformSlug, created_at: r.now })),
    );
    const { rows: made } = await db.executeQuery<{ id: string; container_id: string }>(
      CompiledQuery.raw(
        'insert into "sandbox_posts" ("id", "container_id", "job_id", "connection_id", "platform_slug", "created_at") select "id", "container_id", "job_id", "connection_id", "platform_slug", "created_at" from json_populate_recordset(null::"sandbox_posts", $1::json) on conflict ("container_id") do nothing returning "id", "container_id"',
        [json],
      ),
    );
    const byContainer = new Map(made.map((m) => [m.container_id, m.id]));
    return rows.map((r) => byContainer.get(r.containerId));
  });
  const findPosts = rowBatches(async (ids: string[]) => {
    const { rows } = await db.executeQuery<{ id: string }>(CompiledQuery.raw('select "id" from "sandbox_posts" where "id" = any($1::text[])', [ids]));
    const found = new Set(rows.map((r) => r.id));
    return ids.map((id) => found.has(id));
  });
  return {
    insertContainer: (id: string, jobId: string, now: number) => insertContainers({ id, jobId, now }),
    /** `publishSandboxContainer`: a container already published is read back by itself. */
    async publishContainer(row: ContainerPublication): Promise<string> {
      const made = await insertPosts(row);
      if (made !== undefined) return made;
      const [existing] = (await postOfContainer(db, [row.containerId])).rows;
      if (existing === undefined) throw new Error(`sandbox container ${row.containerId} has no post after publishing`);
      return existing.id;
    },
    postExists: (id: string) => (dialect === 'sqlite' ? sandboxPostExists(db, id) : findPosts(id)),
  };
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
