import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { parseBrandIds, toMillis } from './rows.js';

export interface UserSessionRow {
  id: string;
  userId: string;
  workspaceId: string | null;
  authMethod: string;
  ip: string | null;
  userAgent: string | null;
  createdAt: number;
  lastSeenAt: number;
  endsAt: number;
}

const COLUMNS = ['id', 'user_id', 'workspace_id', 'auth_method', 'ip', 'user_agent', 'created_at', 'last_seen_at', 'ends_at'] as const;

type Selected = {
  id: string;
  user_id: string;
  workspace_id: string | null;
  auth_method: string;
  ip: string | null;
  user_agent: string | null;
  created_at: number | string;
  last_seen_at: number | string;
  ends_at: number | string;
};

function toRow(r: Selected): UserSessionRow {
  return {
    id: r.id,
    userId: r.user_id,
    workspaceId: r.workspace_id,
    authMethod: r.auth_method,
    ip: r.ip,
    userAgent: r.user_agent,
    createdAt: toMillis(r.created_at),
    lastSeenAt: toMillis(r.last_seen_at),
    endsAt: toMillis(r.ends_at),
  };
}

export async function insertUserSession(db: Kysely<Database>, row: UserSessionRow & { tokenDigest: string }): Promise<void> {
  await db
    .insertInto('user_sessions')
    .values({
      id: row.id,
      token_digest: row.tokenDigest,
      user_id: row.userId,
      workspace_id: row.workspaceId,
      auth_method: row.authMethod,
      ip: row.ip,
      user_agent: row.userAgent,
      created_at: row.createdAt,
      last_seen_at: row.lastSeenAt,
      ends_at: row.endsAt,
    })
    .execute();
}


/**
 * A session by its cookie's digest with the person's membership of the session's workspace, in one query (the
 * dashboard resolves this on every request): `membership` is undefined when they are no longer a member there.
 */
export async function findUserSessionWithMembership(
  db: Kysely<Database>,
  tokenDigest: string,
): Promise<(UserSessionRow & { membership: { role: string; brandIds: string[] | null } | undefined }) | undefined> {
  const r = await db
    .selectFrom('user_sessions as s')
    .leftJoin('memberships as m', (join) => join.onRef('m.workspace_id', '=', 's.workspace_id').onRef('m.user_id', '=', 's.user_id'))
    .select(['s.id', 's.user_id', 's.workspace_id', 's.auth_method', 's.ip', 's.user_agent', 's.created_at', 's.last_seen_at', 's.ends_at', 'm.role as member_role', 'm.brand_ids as member_brand_ids'])
    .where('s.token_digest', '=', tokenDigest)
    .executeTakeFirst();
  if (!r) return undefined;
  return { ...toRow(r), membership: r.member_role === null ? undefined : { role: r.member_role, brandIds: parseBrandIds(r.member_brand_ids) } };
}

export async function listUserSessions(db: Kysely<Database>, userId: string): Promise<UserSessionRow[]> {
  const rows = await db.selectFrom('user_sessions').select(COLUMNS).where('user_id', '=', userId).orderBy('last_seen_at', 'desc').orderBy('id').execute();
  return rows.map(toRow);
}

export async function touchUserSession(db: Kysely<Database>, id: string, now: number): Promise<void> {
  await db.updateTable('user_sessions').set({ last_seen_at: now }).where('id', '=', id).execute();
}

export async function setUserSessionWorkspace(db: Kysely<Database>, id: string, workspaceId: string): Promise<void> {
  await db.updateTable('user_sessions').set({ workspace_id: workspaceId }).where('id', '=', id).execute();
}

/** Ends one of a person's sessions; returns whether it existed. */
export async function deleteUserSession(db: Kysely<Database>, userId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('user_sessions').where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Ends every session of a person but `keepId` (sign out everywhere else, a password change); returns how many. */
export async function deleteUserSessions(db: Kysely<Database>, userId: string, keepId: string | null = null): Promise<number> {
  let query = db.deleteFrom('user_sessions').where('user_id', '=', userId);
  if (keepId !== null) query = query.where('id', '!=', keepId);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function deleteStaleUserSessions(db: Kysely<Database>, now: number, idleMs: number): Promise<number> {
  const result = await db
    .deleteFrom('user_sessions')
    .where((eb) => eb.or([eb('ends_at', '<=', now), eb('last_seen_at', '<=', now - idleMs)]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
