import type { Kysely, Selectable } from 'kysely';
import type { Database, MediaTable } from '../schema.js';
import { toMillis } from './rows.js';

export interface MediaRow {
  id: string;
  workspaceId: string;
  contentType: string;
  sizeBytes: number;
  storagePath: string;
  createdAt: number;
}

export async function insertMedia(db: Kysely<Database>, row: MediaRow): Promise<void> {
  await db
    .insertInto('media')
    .values({ id: row.id, workspace_id: row.workspaceId, content_type: row.contentType, size_bytes: row.sizeBytes, storage_path: row.storagePath, created_at: row.createdAt })
    .execute();
}

export async function findMedia(db: Kysely<Database>, workspaceId: string, id: string): Promise<MediaRow | undefined> {
  return toRow(await db.selectFrom('media').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst());
}

/** By id alone: for signed public links, whose signature already names the one media they open. */
export async function findMediaById(db: Kysely<Database>, id: string): Promise<MediaRow | undefined> {
  return toRow(await db.selectFrom('media').selectAll().where('id', '=', id).executeTakeFirst());
}

function toRow(r: Selectable<MediaTable> | undefined): MediaRow | undefined {
  return (
    r && {
      id: r.id,
      workspaceId: r.workspace_id,
      contentType: r.content_type,
      sizeBytes: toMillis(r.size_bytes),
      storagePath: r.storage_path,
      createdAt: toMillis(r.created_at),
    }
  );
}

/** A workspace's uploads, newest first, after a keyset position. */
export async function listMedia(db: Kysely<Database>, workspaceId: string, q: { after?: { createdAt: number; id: string } | undefined; limit: number }): Promise<MediaRow[]> {
  let query = db.selectFrom('media').selectAll().where('workspace_id', '=', workspaceId);
  const after = q.after;
  if (after !== undefined) {
    query = query.where((eb) => eb.or([eb('created_at', '<', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)])]));
  }
  const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(q.limit).execute();
  return rows.map((r) => toRow(r)!);
}

/**
 * Contents of a workspace whose stored request or editable input mentions any of `mediaIds`, with that text, for
 * the caller to read which media each one really uses. Media ids are random, so the text search only narrows.
 */
export async function contentsMentioningMedia(
  db: Kysely<Database>,
  workspaceId: string,
  mediaIds: readonly string[],
): Promise<{ id: string; status: string; createdAt: number; request: string; input: string | null }[]> {
  if (mediaIds.length === 0) return [];
  const rows = await db
    .selectFrom('contents')
    .select(['id', 'status', 'created_at', 'request', 'input'])
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb.or(mediaIds.flatMap((id) => [eb('request', 'like', `%${id}%`), eb('input', 'like', `%${id}%`)])))
    .orderBy('created_at', 'desc')
    .execute();
  return rows.map((r) => ({ id: r.id, status: r.status, createdAt: toMillis(r.created_at), request: r.request, input: r.input }));
}

/** Deletes an upload's row; returns it when it was there. */
export async function deleteMedia(db: Kysely<Database>, workspaceId: string, id: string): Promise<MediaRow | undefined> {
  const row = await db.deleteFrom('media').where('workspace_id', '=', workspaceId).where('id', '=', id).returningAll().executeTakeFirst();
  return toRow(row);
}

/** The stored request and input of some contents of a workspace, for reading which uploads they name. */
export async function contentMediaSources(db: Kysely<Database>, workspaceId: string, contentIds: readonly string[]): Promise<{ id: string; request: string; input: string | null }[]> {
  if (contentIds.length === 0) return [];
  return db.selectFrom('contents').select(['id', 'request', 'input']).where('workspace_id', '=', workspaceId).where('id', 'in', contentIds).execute();
}

/** Uploads of a workspace by id; missing ones (deleted) are left out. */
export async function findMediaMany(db: Kysely<Database>, workspaceId: string, ids: readonly string[]): Promise<MediaRow[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('media').selectAll().where('workspace_id', '=', workspaceId).where('id', 'in', ids).execute();
  return rows.map((r) => toRow(r)!);
}
