import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { parseBrandIds } from './rows.js';

/** The person an OpenID provider's account is linked to, if any. */
export async function findSsoIdentityUser(db: Kysely<Database>, issuer: string, subject: string): Promise<string | undefined> {
  const r = await db.selectFrom('sso_identities').select('user_id').where('issuer', '=', issuer).where('subject', '=', subject).executeTakeFirst();
  return r?.user_id;
}

/**
 * Links (issuer, subject) to a person. The primary key makes the link unique: when two first sign-ins race, the
 * second insert does nothing and the caller reads who won.
 */
export async function linkSsoIdentity(db: Kysely<Database>, row: { issuer: string; subject: string; userId: string; email: string | null; now: number }): Promise<void> {
  await db
    .insertInto('sso_identities')
    .values({ issuer: row.issuer, subject: row.subject, user_id: row.userId, email: row.email, created_at: row.now, last_used_at: row.now })
    .onConflict((oc) => oc.columns(['issuer', 'subject']).doNothing())
    .execute();
}

export async function touchSsoIdentity(db: Kysely<Database>, issuer: string, subject: string, now: number): Promise<void> {
  await db.updateTable('sso_identities').set({ last_used_at: now }).where('issuer', '=', issuer).where('subject', '=', subject).execute();
}


/** Open invitations of an address (not accepted, not revoked, not expired), oldest first. */
export async function openInvitationsFor(db: Kysely<Database>, email: string, now: number): Promise<{ id: string; workspaceId: string; role: string; brandIds: string[] | null }[]> {
  const rows = await db
    .selectFrom('invitations')
    .select(['id', 'workspace_id', 'role', 'brand_ids'])
    .where('email', '=', email)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('created_at')
    .execute();
  return rows.map((r) => ({ id: r.id, workspaceId: r.workspace_id, role: r.role, brandIds: parseBrandIds(r.brand_ids) }));
}

