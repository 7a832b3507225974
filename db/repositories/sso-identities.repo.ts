import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

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
