import { type Kysely, type Selectable, sql } from 'kysely';
import type { CreditBatchesTable, CreditLedgerTable, Database } from '../schema.js';
import { toMillis, toMillisOrNull } from './rows.js';

export interface BatchRow {
  id: string;
  workspaceId: string;
  amount: number;
  remaining: number;
  source: string;
  externalRef: string | null;
  createdAt: number;
  expiresAt: number | null;
  expiredAt: number | null;
}

export interface LedgerRow {
  id: string;
  workspaceId: string;
  batchId: string;
  kind: string;
  amount: number;
  operation: string | null;
  reference: string | null;
  createdAt: number;
}

function toBatch(r: Selectable<CreditBatchesTable>): BatchRow {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    amount: toMillis(r.amount),
    remaining: toMillis(r.remaining),
    source: r.source,
    externalRef: r.external_ref,
    createdAt: toMillis(r.created_at),
    expiresAt: toMillisOrNull(r.expires_at),
    expiredAt: toMillisOrNull(r.expired_at),
  };
}

function toLedger(r: Selectable<CreditLedgerTable>): LedgerRow {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    batchId: r.batch_id,
    kind: r.kind,
    amount: toMillis(r.amount),
    operation: r.operation,
    reference: r.reference,
    createdAt: toMillis(r.created_at),
  };
}

/** Creates a batch; false when its external reference was already used (a payment delivered twice). */
export async function insertBatch(db: Kysely<Database>, row: BatchRow): Promise<boolean> {
  const result = await db
    .insertInto('credit_batches')
    .values({
      id: row.id,
      workspace_id: row.workspaceId,
      amount: row.amount,
      remaining: row.remaining,
      source: row.source,
      external_ref: row.externalRef,
      created_at: row.createdAt,
      expires_at: row.expiresAt,
      expired_at: null,
    })
    .onConflict((oc) => oc.column('external_ref').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export async function insertLedger(db: Kysely<Database>, row: LedgerRow): Promise<void> {
  await db
    .insertInto('credit_ledger')
    .values({
      id: row.id,
      workspace_id: row.workspaceId,
      batch_id: row.batchId,
      kind: row.kind,
      amount: row.amount,
      operation: row.operation,
      reference: row.reference,
      created_at: row.createdAt,
    })
    .execute();
}

/** Batches with credit left and not expired at `now`, soonest expiry first (no expiry last). */
export async function liveBatches(db: Kysely<Database>, workspaceId: string, now: number): Promise<BatchRow[]> {
  const rows = await db
    .selectFrom('credit_batches')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('remaining', '>', 0)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .orderBy(sql`case when expires_at is null then 1 else 0 end`)
    .orderBy('expires_at', 'asc')
    .orderBy('created_at', 'asc')
    .execute();
  return rows.map(toBatch);
}

export async function listBatches(db: Kysely<Database>, workspaceId: string): Promise<BatchRow[]> {
  const rows = await db.selectFrom('credit_batches').selectAll().where('workspace_id', '=', workspaceId).orderBy('created_at', 'desc').orderBy('id').execute();
  return rows.map(toBatch);
}

export async function findBatch(db: Kysely<Database>, id: string): Promise<BatchRow | undefined> {
  const r = await db.selectFrom('credit_batches').selectAll().where('id', '=', id).executeTakeFirst();
  return r && toBatch(r);
}

/**
 * Takes `cost` from a batch in one conditional statement: only if enough remains and the batch has not expired
 * at `now`. Racing spenders cannot overdraw it. Returns whether it was taken.
 */
export async function chargeBatch(db: Kysely<Database>, id: string, cost: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('credit_batches')
    .set({ remaining: sql`remaining - ${cost}` })
    .where('id', '=', id)
    .where('remaining', '>=', cost)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function creditBatch(db: Kysely<Database>, id: string, amount: number): Promise<void> {
  await db.updateTable('credit_batches').set({ remaining: sql`remaining + ${amount}` }).where('id', '=', id).execute();
}

/** Batches whose time has come but whose expiry was not written yet. */
export async function dueForExpiry(db: Kysely<Database>, workspaceId: string | null, now: number): Promise<BatchRow[]> {
  let q = db.selectFrom('credit_batches').selectAll().where('expired_at', 'is', null).where('expires_at', '<=', now);
  if (workspaceId !== null) q = q.where('workspace_id', '=', workspaceId);
  return (await q.execute()).map(toBatch);
}

/** Zeroes an expired batch if nobody did it since `seenRemaining` was read; returns whether this call did. */
export async function markExpired(db: Kysely<Database>, id: string, seenRemaining: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('credit_batches')
    .set({ remaining: 0, expired_at: now })
    .where('id', '=', id)
    .where('expired_at', 'is', null)
    .where('remaining', '=', seenRemaining)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function listLedger(db: Kysely<Database>, workspaceId: string, q: { after?: { createdAt: number; id: string } | undefined; limit: number }): Promise<LedgerRow[]> {
  let query = db.selectFrom('credit_ledger').selectAll().where('workspace_id', '=', workspaceId);
  const after = q.after;
  if (after !== undefined) {
    query = query.where((eb) => eb.or([eb('created_at', '<', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)])]));
  }
  return (await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(q.limit).execute()).map(toLedger);
}

export async function ledgerSum(db: Kysely<Database>, workspaceId: string): Promise<number> {
  const r = await db
    .selectFrom('credit_ledger')
    .select(sql<number | string | null>`sum(amount)`.as('total'))
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
  return Number(r?.total ?? 0);
}

export async function setJobCredit(db: Kysely<Database>, jobId: string, batchId: string | null, cost: number | null): Promise<void> {
  await db.updateTable('jobs').set({ credit_batch_id: batchId, credit_cost: cost }).where('id', '=', jobId).execute();
}

export async function jobCredit(db: Kysely<Database>, jobId: string): Promise<{ batchId: string; cost: number } | null> {
  const r = await db.selectFrom('jobs').select(['credit_batch_id', 'credit_cost']).where('id', '=', jobId).executeTakeFirst();
  if (!r || r.credit_batch_id === null || r.credit_cost === null || Number(r.credit_cost) <= 0) return null;
  return { batchId: r.credit_batch_id, cost: Number(r.credit_cost) };
}
