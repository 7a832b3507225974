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
