import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { formatBrandIds, parseBrandIds, toMillis } from './rows.js';

/** A membership with the person it belongs to. */
export interface MemberRow {
  id: string;
  workspaceId: string;
  userId: string;
  email: string;
  name: string | null;
  role: string;
  brandIds: string[] | null;
  createdAt: number;
  updatedAt: number;
}

const COLUMNS = ['m.id', 'm.workspace_id', 'm.user_id', 'u.email', 'u.name', 'm.role', 'm.brand_ids', 'm.created_at', 'm.updated_at'] as const;

function base(db: Kysely<Database>, workspaceId: string) {
  return db.selectFrom('memberships as m').innerJoin('users as u', 'u.id', 'm.user_id').select(COLUMNS).where('m.workspace_id', '=', workspaceId);
}

type Selected = Awaited<ReturnType<ReturnType<typeof base>['executeTakeFirstOrThrow']>>;

function toRow(r: Selected): MemberRow {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    userId: r.user_id,
    email: r.email,
    name: r.name,
    role: r.role,
    brandIds: parseBrandIds(r.brand_ids),
    createdAt: toMillis(r.created_at),
    updatedAt: toMillis(r.updated_at),
  };
}

/** A workspace's members, oldest first. */
export async function listMembers(db: Kysely<Database>, workspaceId: string): Promise<MemberRow[]> {
  return (await base(db, workspaceId).orderBy('m.created_at').orderBy('m.id').execute()).map(toRow);
}

export async function findMember(db: Kysely<Database>, workspaceId: string, id: string): Promise<MemberRow | undefined> {
  const r = await base(db, workspaceId).where('m.id', '=', id).executeTakeFirst();
  return r && toRow(r);
}

/** How many members of the workspace are owners (read under the workspace lock by whoever may lower it). */
export async function countOwners(db: Kysely<Database>, workspaceId: string): Promise<number> {
  const r = await db
    .selectFrom('memberships')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('role', '=', 'owner')
    .executeTakeFirst();
  return Number(r?.n ?? 0);
}

/**
 * Adds a membership unless the person already belongs to the workspace (the unique index decides, so two
 * concurrent additions make one). Returns whether this call added it.
 */
export async function addMembership(
  db: Kysely<Database>,
  row: { id: string; workspaceId: string; userId: string; role: string; brandIds: readonly string[] | null; now: number },
): Promise<boolean> {
  const result = await db
    .insertInto('memberships')
    .values({ id: row.id, workspace_id: row.workspaceId, user_id: row.userId, role: row.role, brand_ids: formatBrandIds(row.brandIds), created_at: row.now, updated_at: row.now })
    .onConflict((oc) => oc.columns(['workspace_id', 'user_id']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export async function updateMembership(db: Kysely<Database>, workspaceId: string, id: string, change: { role: string; brandIds: readonly string[] | null; now: number }): Promise<void> {
  await db
    .updateTable('memberships')
    .set({ role: change.role, brand_ids: formatBrandIds(change.brandIds), updated_at: change.now })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .execute();
}

/** Removes a membership and ends the person's sessions in that workspace; returns whether it existed. */
export async function deleteMembership(db: Kysely<Database>, workspaceId: string, id: string, userId: string): Promise<boolean> {
  const result = await db.deleteFrom('memberships').where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  await db.deleteFrom('user_sessions').where('user_id', '=', userId).where('workspace_id', '=', workspaceId).execute();
  return Number(result.numDeletedRows) === 1;
}

/** Brand ids among `ids` that are not live brands of the workspace. */
export async function unknownBrands(db: Kysely<Database>, workspaceId: string, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('brands').select('id').where('workspace_id', '=', workspaceId).where('id', 'in', [...ids]).where('deleted_at', 'is', null).execute();
  const known = new Set(rows.map((r) => r.id));
  return ids.filter((id) => !known.has(id));
}

/** Inserts a person unless the address is taken (two sign-ups of one address at once make one); returns whether this call did. */
export async function insertUserIfNew(db: Kysely<Database>, row: { id: string; email: string; name: string | null; passwordHash: string; now: number }): Promise<boolean> {
  const result = await db
    .insertInto('users')
    .values({ id: row.id, email: row.email, name: row.name, password_hash: row.passwordHash, email_verified_at: null, created_at: row.now, updated_at: row.now })
    .onConflict((oc) => oc.column('email').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}
