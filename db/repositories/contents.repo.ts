import { type Kysely, PostgresAdapter, type Selectable, sql } from 'kysely';
import type { ContentsTable, Database, JobsTable } from '../schema.js';
import { toMillis, toMillisOrNull } from './rows.js';
import { jobFromRow, type JobRow, listJobsForContent } from './jobs.repo.js';

export interface ContentRow {
  id: string;
  workspaceId: string;
  brandId: string;
  contentType: string;
  status: string;
  request: string;
  createdAt: number;
  updatedAt: number;
  completedAt: number | null;
  publishAt: number | null;
  timeZone: string | null;
  localPublishAt: string | null;
  queueSlot: number | null;
  /** JSON of the content fields as validated; null for contents stored before drafts existed. */
  input: string | null;
  version: number;
  /** Who last submitted it for approval (`user:…`, `api_key:…`, `oauth:…`); null when never submitted. */
  submittedBy?: string | null;
}


function toRow(r: Selectable<ContentsTable>): ContentRow {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    brandId: r.brand_id,
    contentType: r.content_type,
    status: r.status,
    request: r.request,
    createdAt: toMillis(r.created_at),
    updatedAt: toMillis(r.updated_at),
    completedAt: toMillisOrNull(r.completed_at),
    publishAt: toMillisOrNull(r.publish_at),
    timeZone: r.time_zone,
    localPublishAt: r.local_publish_at,
    queueSlot: toMillisOrNull(r.queue_slot),
    input: r.input,
    version: Number(r.version),
    submittedBy: r.submitted_by ?? null,
  };
}

export async function insertContent(db: Kysely<Database>, row: Omit<ContentRow, 'version'>): Promise<void> {
  await db
    .insertInto('contents')
    .values({
      id: row.id,
      workspace_id: row.workspaceId,
      brand_id: row.brandId,
      content_type: row.contentType,
      status: row.status,
      request: row.request,
      created_at: row.createdAt,
      updated_at: row.updatedAt,
      completed_at: row.completedAt,
      publish_at: row.publishAt,
      time_zone: row.timeZone,
      local_publish_at: row.localPublishAt,
      queue_slot: row.queueSlot,
      input: row.input,
      submitted_by: row.submittedBy ?? null,
    })
    .execute();
}

export async function findContent(db: Kysely<Database>, workspaceId: string, id: string): Promise<ContentRow | undefined> {
  const r = await db.selectFrom('contents').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return r && toRow(r);
}

/**
 * A content and its jobs, oldest job first: what every read of one content shows. On PostgreSQL in one round trip,
 * the jobs as a JSON array in the order a content shows them: a round trip there costs more than the JSON does.
 */
export async function findContentWithJobs(db: Kysely<Database>, workspaceId: string, id: string): Promise<{ content: ContentRow; jobs: JobRow[] } | undefined> {
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    const [r] = (
      await sql<Selectable<ContentsTable> & { content_jobs: Selectable<JobsTable>[] }>`select c.*, coalesce((select json_agg(j order by j.created_at, j.id) from jobs j where j.content_id = c.id), '[]') as content_jobs from contents c where c.workspace_id = ${workspaceId} and c.id = ${id}`.execute(db)
    ).rows;
    return r && { content: toRow(r), jobs: r.content_jobs.map(jobFromRow) };
  }
  // On SQLite two statements: a query there is an in-process call, so one statement (json_group_array) saves nothing.
  const content = await findContent(db, workspaceId, id);
  return content && { content, jobs: await listJobsForContent(db, id) };
}

/** The contents of a claim's jobs, in one statement: a publishing content's request no longer changes. */
export async function findContentsByIds(db: Kysely<Database>, ids: readonly string[]): Promise<Map<string, ContentRow>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('contents').selectAll().where('id', 'in', [...new Set(ids)]).execute();
  return new Map(rows.map((r) => [r.id, toRow(r)]));
}

export interface ContentPageQuery {
  status?: string | undefined;
  /** Only contents of these brands (null or absent: every brand). */
  brandIds?: readonly string[] | null | undefined;
  createdAfter?: number | undefined;
  createdBefore?: number | undefined;
  /** Keyset position: rows strictly after (created_at, id) in descending order. */
  after?: { createdAt: number; id: string } | undefined;
  limit: number;
}

/** Newest first, keyset-paginated on (created_at, id) so pages are stable while rows are added. */
export async function listContents(db: Kysely<Database>, workspaceId: string, q: ContentPageQuery): Promise<ContentRow[]> {
  let query = db.selectFrom('contents').selectAll().where('workspace_id', '=', workspaceId);
  if (q.status !== undefined) query = query.where('status', '=', q.status);
  if (q.brandIds !== undefined && q.brandIds !== null) {
    if (q.brandIds.length === 0) return [];
    query = query.where('brand_id', 'in', q.brandIds);
  }
  if (q.createdAfter !== undefined) query = query.where('created_at', '>=', q.createdAfter);
  if (q.createdBefore !== undefined) query = query.where('created_at', '<', q.createdBefore);
  const after = q.after;
  if (after !== undefined) {
    query = query.where((eb) =>
      eb.or([eb('created_at', '<', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)])]),
    );
  }
  const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(q.limit).execute();
  return rows.map(toRow);
}

export async function updateContentStatus(db: Kysely<Database>, id: string, status: string, now: number, completedAt: number | null): Promise<void> {
  await db.updateTable('contents').set({ status, updated_at: now, completed_at: completedAt }).where('id', '=', id).execute();
}

/**
 * Sets a content back to publishing unless it already is (a job step that leaves its job unfinished): one
 * conditional statement that writes nothing in the usual case.
 */
export async function markContentPublishing(db: Kysely<Database>, id: string, now: number): Promise<void> {
  await db.updateTable('contents').set({ status: 'publishing', updated_at: now, completed_at: null }).where('id', '=', id).where('status', '<>', 'publishing').execute();
}

/**
 * Takes the content's row lock for the rest of the transaction (a no-op update works on both dialects) and
 * returns the row as it is once locked, so jobs finishing at the same time recompute the outcome one after
 * another, each seeing the others' commits. On PostgreSQL an update that waited for the lock returns the row
 * as the other transaction committed it.
 */
export async function lockContent(db: Kysely<Database>, id: string): Promise<ContentRow | undefined> {
  const r = await db.updateTable('contents').set({ updated_at: sql<number>`updated_at` }).where('id', '=', id).returningAll().executeTakeFirst();
  return r && toRow(r);
}

/**
 * The statuses in which a content may still be edited or canceled (README, Scheduling and Approvals); published
 * now only from draft or scheduled.
 */
export const EDITABLE_STATUSES = ['draft', 'pending_approval', 'changes_requested', 'scheduled'] as const;

/** The fields an edit or a transition of a waiting content may change. */
export interface ContentChanges {
  status?: string;
  request?: string;
  input?: string;
  contentType?: string;
  publishAt?: number | null;
  timeZone?: string | null;
  localPublishAt?: string | null;
  queueSlot?: number | null;
  completedAt?: number | null;
  submittedBy?: string | null;
}

/**
 * Changes a content only if it is still in one of `from` (and, when given, still at `version`), bumping its
 * version; returns the row as written, or undefined when the condition no longer held. The condition is the
 * decision: on PostgreSQL a concurrent writer waits for the row lock and then re-checks it against the committed
 * row, so of an edit, a cancel and the scheduler racing for one content exactly one moves it out of a status.
 */
export async function transitionContent(
  db: Kysely<Database>,
  args: { workspaceId: string; id: string; from: readonly string[]; version?: number; now: number; set: ContentChanges },
): Promise<ContentRow | undefined> {
  const c = args.set;
  let query = db
    .updateTable('contents')
    .set({
      ...(c.status !== undefined ? { status: c.status } : {}),
      ...(c.request !== undefined ? { request: c.request } : {}),
      ...(c.input !== undefined ? { input: c.input } : {}),
      ...(c.contentType !== undefined ? { content_type: c.contentType } : {}),
      ...(c.publishAt !== undefined ? { publish_at: c.publishAt } : {}),
      ...(c.timeZone !== undefined ? { time_zone: c.timeZone } : {}),
      ...(c.localPublishAt !== undefined ? { local_publish_at: c.localPublishAt } : {}),
      ...(c.queueSlot !== undefined ? { queue_slot: c.queueSlot } : {}),
      ...(c.completedAt !== undefined ? { completed_at: c.completedAt } : {}),
      ...(c.submittedBy !== undefined ? { submitted_by: c.submittedBy } : {}),
      version: sql<number>`version + 1`,
      updated_at: args.now,
    })
    .where('workspace_id', '=', args.workspaceId)
    .where('id', '=', args.id)
    .where('status', 'in', [...args.from]);
  if (args.version !== undefined) query = query.where('version', '=', args.version);
  const row = await query.returningAll().executeTakeFirst();
  return row && toRow(row);
}

export interface WindowPageQuery {
  status?: string | undefined;
  /** Only contents of these brands (null or absent: every brand). */
  brandIds?: readonly string[] | null | undefined;
  from?: number | undefined;
  to?: number | undefined;
  /** Keyset position: rows strictly after (publish_at, id) in ascending order. */
  after?: { at: number; id: string } | undefined;
  limit: number;
}

/** The calendar feed: contents whose publication instant is in [from, to), earliest first, keyset-paginated. */
export async function listContentsByPublishAt(db: Kysely<Database>, workspaceId: string, q: WindowPageQuery): Promise<ContentRow[]> {
  let query = db.selectFrom('contents').selectAll().where('workspace_id', '=', workspaceId).where('publish_at', 'is not', null);
  if (q.status !== undefined) query = query.where('status', '=', q.status);
  if (q.brandIds !== undefined && q.brandIds !== null) {
    if (q.brandIds.length === 0) return [];
    query = query.where('brand_id', 'in', q.brandIds);
  }
  if (q.from !== undefined) query = query.where('publish_at', '>=', q.from);
  if (q.to !== undefined) query = query.where('publish_at', '<', q.to);
  const after = q.after;
  if (after !== undefined) {
    query = query.where((eb) => eb.or([eb('publish_at', '>', after.at), eb.and([eb('publish_at', '=', after.at), eb('id', '>', after.id)])]));
  }
  const rows = await query.orderBy('publish_at', 'asc').orderBy('id', 'asc').limit(q.limit).execute();
  return rows.map(toRow);
}

/** The queue slots of a brand held by scheduled contents, after `after`. */
export async function heldQueueSlots(db: Kysely<Database>, brandId: string, after: number): Promise<Set<number>> {
  const rows = await db
    .selectFrom('contents')
    .select('queue_slot')
    .where('brand_id', '=', brandId)
    .where('status', '=', 'scheduled')
    .where('queue_slot', '>', after)
    .execute();
  return new Set(rows.map((r) => Number(r.queue_slot)));
}

/** Cancels every draft and scheduled content of a brand (the brand is being deleted); returns their ids. */
export async function cancelBrandContents(db: Kysely<Database>, workspaceId: string, brandId: string, now: number): Promise<string[]> {
  const rows = await db
    .updateTable('contents')
    .set({ status: 'canceled', queue_slot: null, version: sql<number>`version + 1`, updated_at: now, completed_at: now })
    .where('workspace_id', '=', workspaceId)
    .where('brand_id', '=', brandId)
    .where('status', 'in', [...EDITABLE_STATUSES])
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

/**
 * Takes up to `limit` due scheduled contents (earliest first) and marks them publishing, in one statement. The
 * due rows are chosen in a materialized CTE (evaluated once; on PostgreSQL it
 * skips rows other processes, edits or cancels hold, and re-checks each row it locks), so a content is taken by
 * one process only, never before its time, and never after a change that committed first.
 */
export async function takeDueContents(db: Kysely<Database>, dialect: 'sqlite' | 'postgres', now: number, limit: number): Promise<ContentRow[]> {
  const rows = await db
    .with(
      (cte) => cte('due').materialized(),
      (qb) => {
        const due = qb
          .selectFrom('contents')
          .select('id')
          .where('status', '=', 'scheduled')
          .where('publish_at', '<=', now)
          .orderBy('publish_at', 'asc')
          .orderBy('id', 'asc')
          .limit(limit);
        return dialect === 'postgres' ? due.forUpdate().skipLocked() : due;
      },
    )
    .updateTable('contents')
    .set({ status: 'publishing', version: sql<number>`version + 1`, updated_at: now })
    .where('id', 'in', (eb) => eb.selectFrom('due').select('due.id'))
    .where('status', '=', 'scheduled')
    .where('publish_at', '<=', now)
    .returningAll()
    .execute();
  if (rows.length > limit) throw new Error(`takeDueContents took ${rows.length} contents for a limit of ${limit}`);
  return rows.map(toRow).sort((a, b) => (a.publishAt ?? 0) - (b.publishAt ?? 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
