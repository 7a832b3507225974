import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { formatBrandIds, parseBrandIds, toMillis } from './rows.js';

export interface MembershipRow {
  id: string;
  workspaceId: string;
  userId: string;
  role: string;
  /** null: every brand. */
  brandIds: string[] | null;
  createdAt: number;
  updatedAt: number;
}

const COLUMNS = ['id', 'workspace_id', 'user_id', 'role', 'brand_ids', 'created_at', 'updated_at'] as const;

type Selected = { id: string; workspace_id: string; user_id: string; role: string; brand_ids: string | null; created_at: number | string; updated_at: number | string };

export function toMembershipRow(r: Selected): MembershipRow {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    userId: r.user_id,
    role: r.role,
    brandIds: parseBrandIds(r.brand_ids),
    createdAt: toMillis(r.created_at),
    updatedAt: toMillis(r.updated_at),
  };
}

export async function insertMembership(db: Kysely<Database>, row: MembershipRow): Promise<void> {
  await db
    .insertInto('memberships')
    .values({
      id: row.id,
      workspace_id: row.workspaceId,
      user_id: row.userId,
      role: row.role,
      brand_ids: formatBrandIds(row.brandIds),
      created_at: row.createdAt,
      updated_at: row.updatedAt,
    })
    .execute();
}

export async function findMembership(db: Kysely<Database>, workspaceId: string, userId: string): Promise<MembershipRow | undefined> {
  const r = await db.selectFrom('memberships').select(COLUMNS).where('workspace_id', '=', workspaceId).where('user_id', '=', userId).executeTakeFirst();
  return r && toMembershipRow(r);
}

/** Every workspace a person belongs to, with its name, oldest membership first (the workspace switcher). */
export async function listMembershipsOfUser(db: Kysely<Database>, userId: string): Promise<(MembershipRow & { workspaceName: string })[]> {
  const rows = await db
    .selectFrom('memberships as m')
    .innerJoin('workspaces as w', 'w.id', 'm.workspace_id')
    .select(['m.id', 'm.workspace_id', 'm.user_id', 'm.role', 'm.brand_ids', 'm.created_at', 'm.updated_at', 'w.name as workspace_name'])
    .where('m.user_id', '=', userId)
    .orderBy('m.created_at')
    .orderBy('m.id')
    .execute();
  return rows.map((r) => ({ ...toMembershipRow(r), workspaceName: r.workspace_name }));
}
