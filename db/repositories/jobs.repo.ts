import type { Kysely, Selectable, Updateable } from 'kysely';
import type { Database, JobsTable } from '../schema.js';
import { toMillis, toMillisOrNull } from './rows.js';

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

export async function listJobsForContent(db: Kysely<Database>, contentId: string): Promise<JobRow[]> {
  const rows = await db.selectFrom('jobs').selectAll().where('content_id', '=', contentId).orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
  return rows.map(jobFromRow);
}

export async function listJobsForContents(db: Kysely<Database>, contentIds: string[]): Promise<JobRow[]> {
  if (contentIds.length === 0) return [];
  const rows = await db.selectFrom('jobs').selectAll().where('content_id', 'in', contentIds).orderBy('created_at', 'asc').orderBy('id', 'asc').execute();
  return rows.map(jobFromRow);
}

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
  let due = db
    .selectFrom('jobs')
    .select('id')
    .where('active', '=', 1)
    .where('run_at', '<=', args.now)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', args.now)]))
    .orderBy('run_at', 'asc')
    .limit(args.limit);
  if (dialect === 'postgres') due = due.forUpdate().skipLocked();
  const rows = await db.updateTable('jobs').set({ locked_by: args.lease, locked_until: args.lockedUntil }).where('id', 'in', due).returningAll().execute();
  return rows.map(jobFromRow);
}

export type JobUpdate = Updateable<JobsTable>;

/**
 * Writes a job's outcome only if the caller still holds its lease: a slow worker whose lease ran out cannot
 * overwrite a row another worker re-claimed. Returns whether the write happened.
 */
export async function updateJobUnderLease(db: Kysely<Database>, id: string, lease: string, changes: JobUpdate): Promise<boolean> {
  const result = await db.updateTable('jobs').set(changes).where('id', '=', id).where('locked_by', '=', lease).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Extends a lease the caller still holds (a heartbeat of every running job); returns whether it still held it. */
export async function renewLease(db: Kysely<Database>, id: string, lease: string, lockedUntil: number): Promise<boolean> {
  const result = await db.updateTable('jobs').set({ locked_until: lockedUntil }).where('id', '=', id).where('locked_by', '=', lease).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
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
