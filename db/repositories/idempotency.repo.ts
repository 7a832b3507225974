import type { ExpressionBuilder, Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { toMillis } from './rows.js';

/**
 * One Idempotency-Key of a workspace. While `state` is `in_flight` the key is claimed by the request whose random
 * `ownerToken` it carries, until `lockedUntil` (a lease its holder keeps renewing while it runs). Every write of a
 * holder is conditional on its token: the database, not the process, decides who owns the key.
 */
export interface IdempotencyRow {
  workspaceId: string;
  key: string;
  requestHash: string;
  state: 'in_flight' | 'done';
  outcome: string | null;
  lockedUntil: number;
  expiresAt: number;
  ownerToken: string | null;
}

/** A new claim: who takes the key, for which request, until when. */
export interface IdempotencyClaim {
  workspaceId: string;
  key: string;
  requestHash: string;
  ownerToken: string;
  lockedUntil: number;
  expiresAt: number;
}

/** The columns of a fresh in-flight claim, the same whether the key is new or taken over. */
function claimColumns(claim: IdempotencyClaim, now: number) {
  return {
    request_hash: claim.requestHash,
    state: 'in_flight' as const,
    outcome: null,
    locked_until: claim.lockedUntil,
    expires_at: claim.expiresAt,
    created_at: now,
    owner_token: claim.ownerToken,
  };
}

/** Takes a key nobody holds; false when a row already exists (the primary key decides between racers). */
export async function tryInsertIdempotencyKey(db: Kysely<Database>, claim: IdempotencyClaim, now: number): Promise<boolean> {
  const result = await db
    .insertInto('idempotency_keys')
    .values({ workspace_id: claim.workspaceId, key: claim.key, ...claimColumns(claim, now) })
    .onConflict((oc) => oc.columns(['workspace_id', 'key']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export async function findIdempotencyKey(db: Kysely<Database>, workspaceId: string, key: string): Promise<IdempotencyRow | undefined> {
  const r = await db.selectFrom('idempotency_keys').selectAll().where('workspace_id', '=', workspaceId).where('key', '=', key).executeTakeFirst();
  return (
    r && {
      workspaceId: r.workspace_id,
      key: r.key,
      requestHash: r.request_hash,
      state: r.state as IdempotencyRow['state'],
      outcome: r.outcome,
      lockedUntil: toMillis(r.locked_until),
      expiresAt: toMillis(r.expires_at),
      ownerToken: r.owner_token,
    }
  );
}

/**
 * Takes over a key in one conditional update, so only one of several racing requests (in any process) wins, and
 * only when its holder is provably gone:
 * - an in-flight claim whose lease ran out without being renewed (its process died), and only for the very same
 *   request (spec 4.3: a different body under a used key is `idempotency_conflict`, never a takeover);
 * - a key past its day (forgotten, any request may use it), unless a holder still runs under it.
 */
export async function takeOverIdempotencyKey(db: Kysely<Database>, claim: IdempotencyClaim, now: number): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set(claimColumns(claim, now))
    .where('workspace_id', '=', claim.workspaceId)
    .where('key', '=', claim.key)
    .where((eb) =>
      eb.or([
        eb.and([eb('state', '=', 'in_flight'), eb('locked_until', '<=', now), eb('request_hash', '=', claim.requestHash)]),
        eb.and([eb('expires_at', '<=', now), eb.or([eb('state', '=', 'done'), eb('locked_until', '<=', now)])]),
      ]),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The fence of every write a holder makes: the key is still this holder's, and still in flight. */
function heldBy(workspaceId: string, key: string, ownerToken: string) {
  return (eb: ExpressionBuilder<Database, 'idempotency_keys'>) =>
    eb.and([eb('workspace_id', '=', workspaceId), eb('key', '=', key), eb('owner_token', '=', ownerToken), eb('state', '=', 'in_flight')]);
}

/** Extends the holder's lease; false when `ownerToken` no longer holds the key in flight (taken over or finished). */
export async function renewIdempotencyKey(db: Kysely<Database>, workspaceId: string, key: string, ownerToken: string, lockedUntil: number): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({ locked_until: lockedUntil })
    .where(heldBy(workspaceId, key, ownerToken))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Stores the holder's outcome; false when `ownerToken` no longer holds the key. Called inside the transaction that
 * makes the request's effects, a false result must roll that transaction back.
 */
export async function completeIdempotencyKey(db: Kysely<Database>, workspaceId: string, key: string, ownerToken: string, outcome: string): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({ state: 'done', outcome })
    .where(heldBy(workspaceId, key, ownerToken))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Gives the key up (nothing was stored under it); a no-op when `ownerToken` no longer holds it. */
export async function releaseIdempotencyKey(db: Kysely<Database>, workspaceId: string, key: string, ownerToken: string): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where(heldBy(workspaceId, key, ownerToken))
    .execute();
}

/** Forgets keys past their day; a key still held by a running request stays until its holder is done or gone. */
export async function deleteExpiredIdempotencyKeys(db: Kysely<Database>, now: number): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('expires_at', '<=', now)
    .where((eb) => eb.or([eb('state', '=', 'done'), eb('locked_until', '<=', now)]))
    .execute();
}
