import { type Kysely, sql } from 'kysely';
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

/**
 * Takes the workspace row's lock for the rest of the transaction, with a no-op update because it works on both
 * dialects: on PostgreSQL it is a row lock that a second transaction waits on; on SQLite, as the transaction's
 * first statement, it takes the database write lock up front, so the transaction never has to upgrade a read
 * snapshot to a write (which fails at once with SQLITE_BUSY when another process wrote meanwhile).
 * Changes that must be serialised per workspace (creating, rotating and revoking API keys) call it first.
 * Returns whether the workspace exists.
 */
export async function lockWorkspace(db: Kysely<Database>, id: string): Promise<boolean> {
  const result = await db.updateTable('workspaces').set({ name: sql<string>`name` }).where('id', '=', id).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function setWorkspacePlan(db: Kysely<Database>, id: string, plan: string): Promise<boolean> {
  const result = await db.updateTable('workspaces').set({ plan }).where('id', '=', id).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Every workspace, oldest first (operators list them; an installation has few). */
export async function listWorkspaces(db: Kysely<Database>): Promise<Required<WorkspaceRow>[]> {
  const rows = await db.selectFrom('workspaces').selectAll().orderBy('created_at').orderBy('id').execute();
  return rows.map((r) => ({ id: r.id, name: r.name, createdAt: toMillis(r.created_at), plan: r.plan }));
}
