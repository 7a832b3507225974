import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { formatBrandIds, parseBrandIds, toMillis, toMillisOrNull } from './rows.js';

/**
 * An invitation to a workspace. `email` null is the open invitation of a fresh installation (the first owner
 * chooses their own address); the column is NOT NULL, so it is stored as the empty string, which no address is.
 */
export interface InvitationRow {
  id: string;
  workspaceId: string;
  email: string | null;
  role: string;
  /** null: every brand. */
  brandIds: string[] | null;
  createdBy: string | null;
  createdAt: number;
  expiresAt: number;
  acceptedAt: number | null;
  acceptedBy: string | null;
  revokedAt: number | null;
}

const OPEN_EMAIL = '';

const COLUMNS = ['id', 'workspace_id', 'email', 'role', 'brand_ids', 'created_by', 'created_at', 'expires_at', 'accepted_at', 'accepted_by', 'revoked_at'] as const;

type Selected = {
  id: string;
  workspace_id: string;
  email: string;
  role: string;
  brand_ids: string | null;
  created_by: string | null;
  created_at: number | string;
  expires_at: number | string;
  accepted_at: number | string | null;
  accepted_by: string | null;
  revoked_at: number | string | null;
};

function toRow(r: Selected): InvitationRow {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    email: r.email === OPEN_EMAIL ? null : r.email,
    role: r.role,
    brandIds: parseBrandIds(r.brand_ids),
    createdBy: r.created_by,
    createdAt: toMillis(r.created_at),
    expiresAt: toMillis(r.expires_at),
    acceptedAt: toMillisOrNull(r.accepted_at),
    acceptedBy: r.accepted_by,
    revokedAt: toMillisOrNull(r.revoked_at),
  };
}

export async function insertInvitation(db: Kysely<Database>, row: InvitationRow & { tokenDigest: string }): Promise<void> {
  await db
    .insertInto('invitations')
    .values({
      id: row.id,
      workspace_id: row.workspaceId,
      email: row.email ?? OPEN_EMAIL,
      role: row.role,
      brand_ids: formatBrandIds(row.brandIds),
      token_digest: row.tokenDigest,
      created_by: row.createdBy,
      created_at: row.createdAt,
      expires_at: row.expiresAt,
      accepted_at: null,
      accepted_by: null,
      revoked_at: null,
    })
    .execute();
}

export async function findInvitation(db: Kysely<Database>, workspaceId: string, id: string): Promise<InvitationRow | undefined> {
  const r = await db.selectFrom('invitations').select(COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return r && toRow(r);
}

export async function findInvitationByDigest(db: Kysely<Database>, tokenDigest: string): Promise<InvitationRow | undefined> {
  const r = await db.selectFrom('invitations').select(COLUMNS).where('token_digest', '=', tokenDigest).executeTakeFirst();
  return r && toRow(r);
}

/** A workspace's invitations, newest first. */
export async function listInvitations(db: Kysely<Database>, workspaceId: string): Promise<InvitationRow[]> {
  const rows = await db.selectFrom('invitations').select(COLUMNS).where('workspace_id', '=', workspaceId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
  return rows.map(toRow);
}

/** Revokes one invitation if it is still open; returns whether this call revoked it. */
export async function revokeInvitation(db: Kysely<Database>, workspaceId: string, id: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('invitations')
    .set({ revoked_at: now })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Revokes the open invitations of one address in a workspace (a new one replaces them); returns their ids. */
export async function revokeOpenInvitationsOf(db: Kysely<Database>, workspaceId: string, email: string, now: number): Promise<string[]> {
  const open = await db
    .selectFrom('invitations')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where('email', '=', email)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .execute();
  const ids = open.map((r) => r.id);
  if (ids.length > 0) await db.updateTable('invitations').set({ revoked_at: now }).where('id', 'in', ids).where('revoked_at', 'is', null).execute();
  return ids;
}

/**
 * Marks an invitation accepted if it is still open at `now`: one conditional update, so of two acceptances of
 * the same token (two processes) exactly one sees a changed row. Returns whether this call accepted it.
 */
export async function claimInvitation(db: Kysely<Database>, id: string, userId: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('invitations')
    .set({ accepted_at: now, accepted_by: userId })
    .where('id', '=', id)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
