import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { parseBrandIds, toMillis } from './rows.js';

export interface DashboardSessionRow {
  workspaceId: string;
  keyId: string;
  createdAt: number;
  lastSeenAt: number;
  endsAt: number;
  /** Whether the API key that signed in is still active; a revoked key ends its sessions. */
  keyActive: boolean;
  /** The signing key's role and brands: a session acts with them. */
  keyRole: string;
  keyBrandIds: string[] | null;
}

export async function insertDashboardSession(
  db: Kysely<Database>,
  row: { tokenDigest: string; workspaceId: string; keyId: string; now: number; endsAt: number },
): Promise<void> {
  await db
    .insertInto('dashboard_sessions')
    .values({ token_digest: row.tokenDigest, workspace_id: row.workspaceId, key_id: row.keyId, created_at: row.now, last_seen_at: row.now, ends_at: row.endsAt })
    .execute();
}

export async function findDashboardSession(db: Kysely<Database>, tokenDigest: string): Promise<DashboardSessionRow | undefined> {
  const r = await db
    .selectFrom('dashboard_sessions as s')
    .innerJoin('api_keys as k', 'k.id', 's.key_id')
    .select(['s.workspace_id', 's.key_id', 's.created_at', 's.last_seen_at', 's.ends_at', 'k.revoked_at', 'k.role', 'k.brand_ids'])
    .where('s.token_digest', '=', tokenDigest)
    .executeTakeFirst();
  if (!r) return undefined;
  return {
    workspaceId: r.workspace_id,
    keyId: r.key_id,
    createdAt: toMillis(r.created_at),
    lastSeenAt: toMillis(r.last_seen_at),
    endsAt: toMillis(r.ends_at),
    keyActive: r.revoked_at === null,
    keyRole: r.role,
    keyBrandIds: parseBrandIds(r.brand_ids),
  };
}

export async function touchDashboardSession(db: Kysely<Database>, tokenDigest: string, now: number): Promise<void> {
  await db.updateTable('dashboard_sessions').set({ last_seen_at: now }).where('token_digest', '=', tokenDigest).execute();
}

export async function rebindDashboardSession(db: Kysely<Database>, tokenDigest: string, keyId: string): Promise<void> {
  await db.updateTable('dashboard_sessions').set({ key_id: keyId }).where('token_digest', '=', tokenDigest).execute();
}

export async function deleteDashboardSession(db: Kysely<Database>, tokenDigest: string): Promise<void> {
  await db.deleteFrom('dashboard_sessions').where('token_digest', '=', tokenDigest).execute();
}

/** Removes sessions past either deadline; returns how many. */
export async function deleteStaleDashboardSessions(db: Kysely<Database>, now: number, idleMs: number): Promise<number> {
  const result = await db
    .deleteFrom('dashboard_sessions')
    .where((eb) => eb.or([eb('ends_at', '<=', now), eb('last_seen_at', '<=', now - idleMs)]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
