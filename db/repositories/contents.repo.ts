import { type Kysely, type Selectable, sql } from 'kysely';
import type { ContentsTable, Database } from '../schema.js';
import { toMillis, toMillisOrNull } from './rows.js';

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
  };
}

export async function insertContent(db: Kysely<Database>, row: ContentRow): Promise<void> {
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
    })
    .execute();
}

export async function findContent(db: Kysely<Database>, workspaceId: string, id: string): Promise<ContentRow | undefined> {
  const r = await db.selectFrom('contents').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return r && toRow(r);
}

export async function findContentById(db: Kysely<Database>, id: string): Promise<ContentRow | undefined> {
  const r = await db.selectFrom('contents').selectAll().where('id', '=', id).executeTakeFirst();
  return r && toRow(r);
}

export interface ContentPageQuery {
  status?: string | undefined;
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
 * Takes the content's row lock for the rest of the transaction (a no-op update works on both dialects), so
 * jobs finishing at the same time recompute the outcome one after another, each seeing the others' commits.
 */
export async function lockContent(db: Kysely<Database>, id: string): Promise<void> {
  await db.updateTable('contents').set({ updated_at: sql<number>`updated_at` }).where('id', '=', id).execute();
}
