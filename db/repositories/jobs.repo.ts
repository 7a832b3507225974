import { CompiledQuery, type Kysely, type Selectable, type Updateable } from 'kysely';
import { rowBatches } from '../row-batches.js';
import type { Transact } from '../transaction-batch.js';
import type { Database, JobsTable } from '../schema.js';
import { toMillis, toMillisOrNull } from './rows.js';
import { compiledOnce, compiledPerColumns } from './compiled-once.js';

export interface JobRow {
  id: string;
  contentId: string;
  workspaceId: string;
  connectionId: string;
  platformSlug: string;
  status: string;
  errorCode: string | null;
  errorMessage: string | null;
  previousStatus: string | null;
  sandboxOutcome: string | null;
  externalContainerId: string | null;
  externalPostId: string | null;
  externalPostUrl: string | null;
  attempts: number;
  confirmChecks: number;
  confirmMisses: number;
  confirmDeadline: number | null;
  lateCheckUntil: number | null;
  active: boolean;
  runAt: number;
  lockedBy: string | null;
  lockedUntil: number | null;
  createdAt: number;
  updatedAt: number;
  publishedAt: number | null;
  /** The adapter's saved progress on the network (JSON), or null. */
  networkState: Record<string, unknown> | null;
  /** What the network said about the published post that its author should know, or null. */
  notice: string | null;
}

/** A jobs row as the core reads it. */
export function jobFromRow(r: Selectable<JobsTable>): JobRow {
  return {
    id: r.id,
    contentId: r.content_id,
    workspaceId: r.workspace_id,
    connectionId: r.connection_id,
    platformSlug: r.platform_slug,
    status: r.status,
    errorCode: r.error_code,
    errorMessage: r.error_message,
    previousStatus: r.previous_status,
    sandboxOutcome: r.sandbox_outcome,
    externalContainerId: r.external_container_id,
    externalPostId: r.external_post_id,
    externalPostUrl: r.external_post_url,
    attempts: Number(r.attempts),
    confirmChecks: Number(r.confirm_checks),
    confirmMisses: Number(r.confirm_misses),
    confirmDeadline: toMillisOrNull(r.confirm_deadline),
    lateCheckUntil: toMillisOrNull(r.late_check_until),
    active: Number(r.active) === 1,
    runAt: toMillis(r.run_at),
    lockedBy: r.locked_by,
    lockedUntil: toMillisOrNull(r.locked_until),
    createdAt: toMillis(r.created_at),
    updatedAt: toMillis(r.updated_at),
    publishedAt: toMillisOrNull(r.published_at),
    networkState: r.network_state === null ? null : (JSON.parse(r.network_state) as Record<string, unknown>),
    notice: r.notice ?? null,
  };
}

export async function insertJobs(
  db: Kysely<Database>,
  rows: { id: string; contentId: string; workspaceId: string; connectionId: string; platformSlug: string; sandboxOutcome: string | null; now: number }[],
  /** A scheduled content's jobs wait, not claimable, until the scheduler starts the content. */
  scheduledFor: number | null = null,
): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('jobs')
    .values(
      rows.map((r) => ({
        id: r.id,
        content_id: r.contentId,
        workspace_id: r.workspaceId,
        connection_id: r.connectionId,
        platform_slug: r.platformSlug,
        status: scheduledFor === null ? 'queued' : 'scheduled',
        active: scheduledFor === null ? 1 : 0,
        sandbox_outcome: r.sandboxOutcome,
        error_code: null,
        error_message: null,
        previous_status: null,
        external_container_id: null,
        external_post_id: null,
        external_post_url: null,
        run_at: scheduledFor ?? r.now,
        locked_by: null,
        created_at: r.now,
        updated_at: r.now,
      })),
    )
    .execute();
}

/** Every read of a content runs this. */
const byContent = compiledOnce((db) => db.selectFrom('jobs').selectAll().where('content_id', '=', '').orderBy('created_at', 'asc').orderBy('id', 'asc'));

export async function listJobsForContent(db: Kysely<Database>, contentId: string): Promise<JobRow[]> {
  return (await byContent(db, [contentId])).rows.map(jobFromRow);
}

export async function listJobsForContents(db: Kysely<Database>, contentIds: string[]): Promise<JobRow[]> {
  if (contentIds.length === 0) return [];
  const rows = await db.selectFrom('jobs').selectAll().where('content_id', 'in', contentIds).orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
  return rows.map(jobFromRow);
}

/** The claim's statement, built with placeholder values; parameters: lease, lease end, 1, now, now, limit. */
function claimQuery(db: Kysely<Database>, dialect: 'sqlite' | 'postgres') {
  let due = db
    .selectFrom('jobs')
    .select('id')
    .where('active', '=', 1)
    .where('run_at', '<=', 0)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', 0)]))
    .orderBy('run_at', 'asc')
    .limit(0);
  if (dialect === 'postgres') due = due.forUpdate().skipLocked();
  return db.updateTable('jobs').set({ locked_by: '', locked_until: 0 }).where('id', 'in', due).returningAll();
}

// Compiled once per dialect: every poll and every freed slot claims, most often finding nothing, and building
// this nested statement cost several times what running it did.
const claimSqlite = compiledOnce((db) => claimQuery(db, 'sqlite'));
const claimPostgres = compiledOnce((db) => claimQuery(db, 'postgres'));

/**
 * Claims up to `limit` due jobs for `lease` (a token unique to this claim) until `lockedUntil`, in one
 * statement. On PostgreSQL the inner select skips rows other workers are claiming (`FOR UPDATE SKIP LOCKED`);
 * SQLite has a single writer, so the statement is atomic by itself.
 */
export async function claimDueJobs(
  db: Kysely<Database>,
  dialect: 'sqlite' | 'postgres',
  args: { now: number; limit: number; lease: string; lockedUntil: number },
): Promise<JobRow[]> {
  const claim = dialect === 'postgres' ? claimPostgres : claimSqlite;
  const { rows } = await claim(db, [args.lease, args.lockedUntil, 1, args.now, args.now, args.limit]);
  return rows.map(jobFromRow);
}

export type JobUpdate = Updateable<JobsTable>;

// Every job step writes one of a handful of column sets: each set's statement is compiled once.
const underLease = compiledPerColumns((columns) => (d) =>
  d.updateTable('jobs').set(Object.fromEntries(columns.map((c) => [c, 0]))).where('id', '=', '').where('locked_by', '=', ''),
);

/**
 * Writes a job's outcome only if the caller still holds its lease: a slow worker whose lease ran out cannot
 * overwrite a row another worker re-claimed. Returns whether the write happened.
 */
export async function updateJobUnderLease(db: Kysely<Database>, id: string, lease: string, changes: JobUpdate): Promise<boolean> {
  // A value that is an SQL expression rather than a value cannot be a parameter, and takes the builder.
  if (Object.values(changes).some((v) => typeof v === 'object' && v !== null)) {
    const result = await db.updateTable('jobs').set(changes).where('id', '=', id).where('locked_by', '=', lease).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
  return Number((await underLease(db, changes, [id, lease])).numAffectedRows) === 1;
}

/** One job's write under its lease, as `jobWritesUnderLease` takes it. */
export interface LeasedJobWrite {
  id: string;
  /** The job's content (set back to publishing by an unfinished step, its outcome recomputed by a final one). */
  contentId: string;
  lease: string;
  changes: JobUpdate;
}

/**
 * The `UPDATE` writing many jobs under their leases at once (PostgreSQL): each write is one element of the JSON
 * array `$1` (its values by column, its id and its lease), read back as a row of `jobs`, so the text depends only
 * on the columns written and is prepared once. Each written element answers with its place in the array (`e."n"`,
 * from 1): two writes of one job (a stale lease beside the holder's) are told apart. `returning` lists the rest.
 */
export function jobWritesUpdate(columns: readonly string[], returning: readonly string[] = []): string {
  const set = columns.map((c) => `"${c}" = v."${c}"`).join(', ');
  return `update "jobs" as j set ${set} from json_array_elements($1::json) with ordinality as e("row", "n"), json_populate_record(null::"jobs", e."row") as v where j."id" = v."id" and j."locked_by" = e."row"->>'lease' returning ${['e."n"', ...returning].join(', ')}`;
}

/** The JSON array `jobWritesUpdate` reads. */
export const jobWritesJson = (writes: readonly LeasedJobWrite[]): string => JSON.stringify(writes.map((w) => ({ ...w.changes, id: w.id, lease: w.lease })));

/** Which of `count` writes were written, from the places a `jobWritesUpdate` answered with. */
export const writtenPlaces = (count: number, places: readonly (string | number)[]): boolean[] => {
  const written = new Set(places.map(Number));
  return Array.from({ length: count }, (_, i) => written.has(i + 1));
};

/** `jobWritesUpdate`, and for `unfinished` each written job's content set back to publishing at `$2`. */
function jobWritesText(columns: readonly string[], unfinished: boolean): string {
  if (!unfinished) return jobWritesUpdate(columns);
  return `with "job" as (${jobWritesUpdate(columns, ['j."content_id"'])}), "content" as (update "contents" set "status" = 'publishing', "updated_at" = $2, "completed_at" = null where "id" in (select "content_id" from "job") and "status" <> 'publishing') select "n" from "job"`;
}

/** SQLite: contents set back to publishing unless they are, by a JSON array of ids (`$1`) at `$2`. */
const SQLITE_CONTENTS_PUBLISHING = CompiledQuery.raw(
  `update "contents" set "status" = 'publishing', "updated_at" = ?, "completed_at" = null where "id" in (select "value" from json_each(?)) and "status" <> 'publishing'`,
);

/**
 * `updateJobUnderLease` for the running jobs of a process, the writes of the same columns that arrive together sent
 * together (`batchedByColumns`): a step's write was a round trip of its own on PostgreSQL, and a piece of the write
 * batch of its own on SQLite (a savepoint, the write, a release), while a process runs dozens of steps at once.
 * Each write still happens only under its own lease and resolves to whether it did. `writeUnfinished` also sets
 * the job's content back to publishing unless it already is (a step that leaves its job unfinished), at `now`
 * (its `updated_at`; a batch uses its latest).
 * - PostgreSQL: one statement per batch (`jobWritesUpdate`, with the contents in the same writing CTE), atomic by
 *   itself.
 * - SQLite: one piece of `transact` per batch, each job written by its own compiled statement, and the unfinished
 *   steps' contents set back to publishing by one statement.
 */
export function jobWritesUnderLease(db: Kysely<Database>, dialect: 'sqlite' | 'postgres', transact: Transact) {
  const send = (unfinished: boolean) =>
    batchedByColumns((columns) => {
      if (dialect === 'sqlite') {
        return (writes) =>
          transact(async (tx) => {
            const written: boolean[] = [];
            for (const w of writes) written.push(await updateJobUnderLease(tx, w.id, w.lease, w.changes));
            const contents = [...new Set(writes.filter((_, i) => written[i]).map((w) => w.contentId))];
            const now = Math.max(...writes.map((w) => w.now));
            if (unfinished && contents.length > 0) await tx.executeQuery({ ...SQLITE_CONTENTS_PUBLISHING, parameters: [now, JSON.stringify(contents)] });
            return written;
          });
      }
      const text = jobWritesText(columns, unfinished);
      return async (writes) => {
        const now = Math.max(...writes.map((w) => w.now));
        const { rows } = await db.executeQuery<{ n: string | number }>(CompiledQuery.raw(text, unfinished ? [jobWritesJson(writes), now] : [jobWritesJson(writes)]));
        return writtenPlaces(writes.length, rows.map((r) => r.n));
      };
    });
  const plain = send(false);
  const unfinished = send(true);
  return {
    write: (w: LeasedJobWrite): Promise<boolean> => plain({ ...w, now: 0 }),
    writeUnfinished: (w: LeasedJobWrite, now: number): Promise<boolean> => unfinished({ ...w, now }),
  };
}

/**
 * Job writes sent together (`rowBatches`) only with writes of the same columns: a column one write leaves out
 * would be written as null for it by a statement that names it. `make` is called once per set of columns (what it
 * builds from them, a statement's text, is built once) and gives what sends a batch of such writes and answers for
 * each. Values only: an SQL expression cannot travel in a batch's JSON.
 */
export function batchedByColumns<W extends LeasedJobWrite & { now: number }, R>(make: (columns: readonly string[]) => (writes: W[]) => Promise<R[]>) {
  const batches = new Map<string, (w: W) => Promise<R>>();
  return (w: W): Promise<R> => {
    if (Object.values(w.changes).some((v) => typeof v === 'object' && v !== null)) return Promise.reject(new TypeError('a batched job write takes values, not SQL expressions'));
    const columns = Object.keys(w.changes).filter((c) => w.changes[c as keyof JobUpdate] !== undefined);
    const key = columns.join(',');
    let batch = batches.get(key);
    if (batch === undefined) {
      batch = rowBatches(make(columns));
      batches.set(key, batch);
    }
    return batch(w);
  };
}

const extendLease = compiledOnce((db) => db.updateTable('jobs').set({ locked_until: 0 }).where('id', '=', '').where('locked_by', '=', ''));

/** Extends a lease the caller still holds (a heartbeat of every running job); returns whether it still held it. */
export async function renewLease(db: Kysely<Database>, id: string, lease: string, lockedUntil: number): Promise<boolean> {
  return Number((await extendLease(db, [lockedUntil, id, lease])).numAffectedRows) === 1;
}

/** Lets go of a claimed job without changing it (shutdown): it becomes claimable at once. */
export async function releaseLease(db: Kysely<Database>, id: string, lease: string): Promise<void> {
  await db.updateTable('jobs').set({ locked_by: null, locked_until: null }).where('id', '=', id).where('locked_by', '=', lease).execute();
}

/**
 * Puts a content's failed jobs back in the queue as new work (a caller-requested retry), except those whose
 * error code is in `keepCodes` and those whose connection is not `active` (an expired or deactivated connection
 * would fail the job again at once, after the retry was charged), and returns the jobs it actually changed, in
 * creation order. `attempts` starts again from 0: it numbers the automatic retries of this run, which the
 * retry policy and the adapters read.
 *
 * One conditional statement decides: of two retries racing for one content, only one finds a job failed (on
 * PostgreSQL the second waits for the first's row lock, then re-reads the row and skips it), so a caller that
 * charges per returned job charges once per requeued job. It is the retry's first statement, so it takes the job
 * rows before the content row, in the same order as a worker recording an outcome (no deadlock), and on SQLite
 * it takes the write lock up front.
 */
export async function requeueFailedJobs(
  db: Kysely<Database>,
  args: { workspaceId: string; contentId: string; keepCodes: readonly string[]; now: number },
): Promise<JobRow[]> {
  let query = db
    .updateTable('jobs')
    .set({
      status: 'queued',
      error_code: null,
      error_message: null,
      external_container_id: null,
      external_post_id: null,
      external_post_url: null,
      network_state: null,
      attempts: 0,
      confirm_checks: 0,
      confirm_misses: 0,
      confirm_deadline: null,
      late_check_until: null,
      active: 1,
      run_at: args.now,
      locked_by: null,
      locked_until: null,
      updated_at: args.now,
    })
    .where('workspace_id', '=', args.workspaceId)
    .where('content_id', '=', args.contentId)
    .where('status', '=', 'failed')
    // The connection's status is read by the statement that requeues, not by an earlier read that could be stale.
    .where('connection_id', 'in', (eb) => eb.selectFrom('connections').select('connections.id').where('connections.status', '=', 'active'));
  if (args.keepCodes.length > 0) {
    const keep = args.keepCodes;
    query = query.where((eb) => eb.or([eb('error_code', 'is', null), eb('error_code', 'not in', keep)]));
  }
  const rows = (await query.returningAll().execute()).map(jobFromRow);
  return rows.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Makes started contents' scheduled jobs claimable now, in one statement; returns them in creation order. */
export async function startScheduledJobs(db: Kysely<Database>, contentIds: string | readonly string[], now: number): Promise<JobRow[]> {
  const ids = typeof contentIds === 'string' ? [contentIds] : [...contentIds];
  if (ids.length === 0) return [];
  const rows = await db
    .updateTable('jobs')
    .set({ status: 'queued', active: 1, run_at: now, updated_at: now })
    .where('content_id', 'in', ids)
    .where('status', '=', 'scheduled')
    .returningAll()
    .execute();
  return rows.map(jobFromRow).sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** Fails a content's scheduled jobs with one code (a missed schedule, a charge refused at publishing time). */
export async function failScheduledJobs(db: Kysely<Database>, contentId: string, code: string, message: string, now: number): Promise<number> {
  const result = await db
    .updateTable('jobs')
    .set({ status: 'failed', error_code: code, error_message: message, active: 0, updated_at: now })
    .where('content_id', '=', contentId)
    .where('status', '=', 'scheduled')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Removes a waiting content's scheduled jobs (it was edited, turned back into a draft or canceled). */
export async function deleteScheduledJobs(db: Kysely<Database>, contentId: string): Promise<void> {
  await db.deleteFrom('jobs').where('content_id', '=', contentId).where('status', '=', 'scheduled').execute();
}
