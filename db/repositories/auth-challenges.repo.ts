import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { toMillis } from './rows.js';

export type ChallengePurpose = 'passkey_registration' | 'passkey_sign_in' | 'sso';

export interface AuthChallengeRow {
  id: string;
  purpose: ChallengePurpose;
  challenge: string;
  payload: Record<string, string> | null;
  userId: string | null;
  sessionId: string | null;
  createdAt: number;
  expiresAt: number;
}

export async function insertAuthChallenge(db: Kysely<Database>, row: AuthChallengeRow): Promise<void> {
  await db
    .insertInto('auth_challenges')
    .values({
      id: row.id,
      purpose: row.purpose,
      challenge: row.challenge,
      payload: row.payload === null ? null : JSON.stringify(row.payload),
      user_id: row.userId,
      session_id: row.sessionId,
      created_at: row.createdAt,
      expires_at: row.expiresAt,
    })
    .execute();
}

/**
 * Takes a challenge for use: deletes its row and returns it, only when it is of `purpose`, not expired, and (when
 * `sessionId` is given) belongs to that session. The delete is the claim: of two requests presenting the same
 * challenge, one gets the row and the other nothing.
 */
export async function consumeAuthChallenge(
  db: Kysely<Database>,
  id: string,
  purpose: ChallengePurpose,
  now: number,
  sessionId?: string,
): Promise<AuthChallengeRow | undefined> {
  let query = db.deleteFrom('auth_challenges').where('id', '=', id).where('purpose', '=', purpose).where('expires_at', '>', now);
  if (sessionId !== undefined) query = query.where('session_id', '=', sessionId);
  const r = await query.returning(['id', 'purpose', 'challenge', 'payload', 'user_id', 'session_id', 'created_at', 'expires_at']).executeTakeFirst();
  if (!r) return undefined;
  const payload: unknown = r.payload === null ? null : JSON.parse(r.payload);
  return {
    id: r.id,
    purpose: r.purpose as ChallengePurpose,
    challenge: r.challenge,
    payload: payload !== null && typeof payload === 'object' ? (payload as Record<string, string>) : null,
    userId: r.user_id,
    sessionId: r.session_id,
    createdAt: toMillis(r.created_at),
    expiresAt: toMillis(r.expires_at),
  };
}

/** Drops challenges past their deadline (never used: the ceremony was abandoned). */
export async function deleteExpiredAuthChallenges(db: Kysely<Database>, now: number): Promise<number> {
  const result = await db.deleteFrom('auth_challenges').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
