import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { toMillis } from './rows.js';

export interface IdempotencyRow {
  workspaceId: string;
  key: string;
  requestHash: string;
  state: 'in_flight' | 'done';
  outcome: string | null;
  lockedUntil: number;
  expiresAt: number;
}

/** Takes the key for a new request; false when a row already exists. */
export async function tryInsertIdempotencyKey(db: Kysely<Database>, row: IdempotencyRow, now: number): Promise<boolean> {
  const result = await db
    .insertInto('idempotency_keys')
    .values({
      workspace_id: row.workspaceId,
      key: row.key,
      request_hash: row.requestHash,
      state: row.state,
      outcome: row.outcome,
      locked_until: row.lockedUntil,
      expires_at: row.expiresAt,
      created_at: now,
    })
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
    }
  );
}

/**
 * Takes over a row that expired, or whose in-flight holder died (lock passed), in one conditional update so
 * only one of several racing requests wins.
 */
export async function takeOverIdempotencyKey(
  db: Kysely<Database>,
  row: IdempotencyRow,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({ request_hash: row.requestHash, state: 'in_flight', outcome: null, locked_until: row.lockedUntil, expires_at: row.expiresAt, created_at: now })
    .where('workspace_id', '=', row.workspaceId)
    .where('key', '=', row.key)
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb.and([eb('state', '=', 'in_flight'), eb('locked_until', '<=', now)])]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function completeIdempotencyKey(db: Kysely<Database>, workspaceId: string, key: string, outcome: string): Promise<void> {
  await db.updateTable('idempotency_keys').set({ state: 'done', outcome }).where('workspace_id', '=', workspaceId).where('key', '=', key).execute();
}

export async function deleteIdempotencyKey(db: Kysely<Database>, workspaceId: string, key: string): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('workspace_id', '=', workspaceId).where('key', '=', key).execute();
}

export async function deleteExpiredIdempotencyKeys(db: Kysely<Database>, now: number): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).execute();
}
