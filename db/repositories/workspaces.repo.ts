import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { toMillis } from './rows.js';

export interface WorkspaceRow {
  id: string;
  name: string;
  createdAt: number;
  plan?: string;
}

export async function insertWorkspace(db: Kysely<Database>, row: WorkspaceRow): Promise<void> {
  await db.insertInto('workspaces').values({ id: row.id, name: row.name, created_at: row.createdAt }).execute();
}

export async function findWorkspace(db: Kysely<Database>, id: string): Promise<WorkspaceRow | undefined> {
  const r = await db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst();
  return r && { id: r.id, name: r.name, createdAt: toMillis(r.created_at), plan: r.plan };
}

export async function setWorkspacePlan(db: Kysely<Database>, id: string, plan: string): Promise<boolean> {
  const result = await db.updateTable('workspaces').set({ plan }).where('id', '=', id).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Records a one-time fact about the installation. Returns true only for the caller that recorded it first,
 * so two processes starting together cannot both act on it.
 */
export async function claimMetaFlag(db: Kysely<Database>, key: string, value: string, now: number): Promise<boolean> {
  const result = await db
    .insertInto('service_meta')
    .values({ key, value, created_at: now })
    .onConflict((oc) => oc.column('key').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export async function readMeta(db: Kysely<Database>, key: string): Promise<string | undefined> {
  return (await db.selectFrom('service_meta').select('value').where('key', '=', key).executeTakeFirst())?.value;
}
