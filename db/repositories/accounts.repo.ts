import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { toMillis, toMillisOrNull } from './rows.js';

/** A person's TOTP factor as stored: the sealed secret, whether it is confirmed, the last time step accepted. */
export interface TotpRow {
  userId: string;
  secretSealed: string;
  confirmedAt: number | null;
  lastStep: number | null;
}

export async function findTotp(db: Kysely<Database>, userId: string): Promise<TotpRow | undefined> {
  const r = await db.selectFrom('user_totp').select(['user_id', 'secret_sealed', 'confirmed_at', 'last_step']).where('user_id', '=', userId).executeTakeFirst();
  return r && { userId: r.user_id, secretSealed: r.secret_sealed, confirmedAt: toMillisOrNull(r.confirmed_at), lastStep: toMillisOrNull(r.last_step) };
}

/** Starts (or restarts) an enrolment: a new unconfirmed secret replaces an unconfirmed one; a confirmed one stays. */
export async function putPendingTotp(db: Kysely<Database>, userId: string, secretSealed: string, now: number): Promise<boolean> {
  const updated = await db.updateTable('user_totp').set({ secret_sealed: secretSealed, created_at: now, last_step: null }).where('user_id', '=', userId).where('confirmed_at', 'is', null).executeTakeFirst();
  if (Number(updated.numUpdatedRows) > 0) return true;
  const inserted = await db
    .insertInto('user_totp')
    .values({ user_id: userId, secret_sealed: secretSealed, confirmed_at: null, last_step: null, created_at: now })
    .onConflict((oc) => oc.column('user_id').doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/**
 * Records an accepted code's time step, only if it is later than the last one accepted (conditional update): of two
 * requests presenting the same code at once, one wins. Confirms the factor when `confirm` is set.
 */
export async function acceptTotpStep(db: Kysely<Database>, userId: string, step: number, now: number, confirm: boolean): Promise<boolean> {
  let query = db
    .updateTable('user_totp')
    .set(confirm ? { last_step: step, confirmed_at: now } : { last_step: step })
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('last_step', 'is', null), eb('last_step', '<', step)]));
  query = confirm ? query.where('confirmed_at', 'is', null) : query.where('confirmed_at', 'is not', null);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function deleteTotp(db: Kysely<Database>, userId: string): Promise<void> {
  await db.deleteFrom('user_totp').where('user_id', '=', userId).execute();
  await db.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
}

/** Replaces every recovery code of a person with new digests. */
export async function replaceRecoveryCodes(db: Kysely<Database>, userId: string, codes: { id: string; digest: string }[], now: number): Promise<void> {
  await db.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
  if (codes.length === 0) return;
  await db
    .insertInto('recovery_codes')
    .values(codes.map((c) => ({ id: c.id, user_id: userId, code_digest: c.digest, created_at: now, used_at: null })))
    .execute();
}

/** Uses a recovery code once: true for the one request that marked it used. */
export async function useRecoveryCode(db: Kysely<Database>, userId: string, digest: string, now: number): Promise<boolean> {
  const result = await db.updateTable('recovery_codes').set({ used_at: now }).where('user_id', '=', userId).where('code_digest', '=', digest).where('used_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function countUnusedRecoveryCodes(db: Kysely<Database>, userId: string): Promise<number> {
  const r = await db.selectFrom('recovery_codes').select((eb) => eb.fn.countAll<number | string>().as('n')).where('user_id', '=', userId).where('used_at', 'is', null).executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function insertPasswordReset(db: Kysely<Database>, row: { id: string; userId: string; tokenDigest: string; createdAt: number; expiresAt: number }): Promise<void> {
  await db.insertInto('password_resets').values({ id: row.id, user_id: row.userId, token_digest: row.tokenDigest, created_at: row.createdAt, expires_at: row.expiresAt, used_at: null }).execute();
}

/** A reset link that is still usable (not used, not expired), with its person. */
export async function findUsablePasswordReset(db: Kysely<Database>, tokenDigest: string, now: number): Promise<{ id: string; userId: string; expiresAt: number } | undefined> {
  const r = await db.selectFrom('password_resets').select(['id', 'user_id', 'expires_at']).where('token_digest', '=', tokenDigest).where('used_at', 'is', null).where('expires_at', '>', now).executeTakeFirst();
  return r && { id: r.id, userId: r.user_id, expiresAt: toMillis(r.expires_at) };
}

/** Marks a reset link used: true for the one request that did (conditional update). */
export async function usePasswordReset(db: Kysely<Database>, id: string, now: number): Promise<boolean> {
  const result = await db.updateTable('password_resets').set({ used_at: now }).where('id', '=', id).where('used_at', 'is', null).where('expires_at', '>', now).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Earlier unused links of a person stop working when a password is set. */
export async function expirePasswordResets(db: Kysely<Database>, userId: string, now: number): Promise<void> {
  await db.updateTable('password_resets').set({ used_at: now }).where('user_id', '=', userId).where('used_at', 'is', null).execute();
}

/** The workspaces where the person is the only owner (their account cannot be deleted while so). */
export async function workspacesWhereOnlyOwner(db: Kysely<Database>, userId: string): Promise<{ id: string; name: string }[]> {
  const rows = await db
    .selectFrom('memberships as m')
    .innerJoin('workspaces as w', 'w.id', 'm.workspace_id')
    .select(['w.id', 'w.name'])
    .where('m.user_id', '=', userId)
    .where('m.role', '=', 'owner')
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('memberships as o')
            .select('o.id')
            .whereRef('o.workspace_id', '=', 'm.workspace_id')
            .where('o.role', '=', 'owner')
            .whereRef('o.user_id', '!=', 'm.user_id'),
        ),
      ),
    )
    .orderBy('w.name')
    .execute();
  return rows;
}

/** Deletes a person; memberships, sessions, factors and reset links go with them (foreign keys cascade). */
export async function deleteUserRow(db: Kysely<Database>, userId: string): Promise<boolean> {
  await db.deleteFrom('memberships').where('user_id', '=', userId).execute();
  await db.deleteFrom('user_sessions').where('user_id', '=', userId).execute();
  await db.deleteFrom('user_totp').where('user_id', '=', userId).execute();
  await db.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
  await db.deleteFrom('password_resets').where('user_id', '=', userId).execute();
  const result = await db.deleteFrom('users').where('id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
