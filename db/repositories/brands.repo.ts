import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { toMillis } from './rows.js';

export interface BrandRow {
  id: string;
  workspaceId: string;
  name: string;
  createdAt: number;
  updatedAt: number;
  /** JSON array of roles whose contents need approval; null: the workspace's default. */
  approvalRoles?: string | null;
}

const COLUMNS = ['id', 'workspace_id', 'name', 'created_at', 'updated_at', 'approval_roles'] as const;

function toRow(r: { id: string; workspace_id: string; name: string; created_at: number | string; updated_at: number | string; approval_roles: string | null }): BrandRow {
  return { id: r.id, workspaceId: r.workspace_id, name: r.name, createdAt: toMillis(r.created_at), updatedAt: toMillis(r.updated_at), approvalRoles: r.approval_roles };
}

export async function insertBrand(db: Kysely<Database>, row: BrandRow): Promise<void> {
  await db
    .insertInto('brands')
    .values({ id: row.id, workspace_id: row.workspaceId, name: row.name, created_at: row.createdAt, updated_at: row.updatedAt })
    .execute();
}

/** A brand of the workspace that was not deleted. */
export async function findBrand(db: Kysely<Database>, workspaceId: string, id: string): Promise<BrandRow | undefined> {
  const r = await db.selectFrom('brands').select(COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
  return r && toRow(r);
}

export async function listBrands(db: Kysely<Database>, workspaceId: string): Promise<BrandRow[]> {
  const rows = await db
    .selectFrom('brands')
    .select(COLUMNS)
    .where('workspace_id', '=', workspaceId)
    .where('deleted_at', 'is', null)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .execute();
  return rows.map(toRow);
}

export async function renameBrand(db: Kysely<Database>, workspaceId: string, id: string, name: string, now: number): Promise<void> {
  await db.updateTable('brands').set({ name, updated_at: now }).where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
}

/** Soft delete: contents keep pointing at the brand; returns whether this call deleted it. */
export async function deleteBrand(db: Kysely<Database>, workspaceId: string, id: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('brands')
    .set({ deleted_at: now, updated_at: now })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
