import { type Kysely, type Selectable, sql } from 'kysely';
import type { Database, DeliveriesTable, DeliveryAttemptsTable } from '../schema.js';
import { toMillis, toMillisOrNull } from './rows.js';

export interface DeliveryRow {
  id: string;
  workspaceId: string;
  webhookId: string;
  eventId: string;
  eventType: string;
  body: string;
  status: string;
  attemptCount: number;
  manual: boolean;
  /** A redeliver was asked and no attempt claimed since has honoured it (spec 4.4). */
  redeliverRequested: boolean;
  nextAttemptAt: number | null;
  lockedBy: string | null;
  createdAt: number;
  deliveredAt: number | null;
}

export interface AttemptRow {
  deliveryId: string;
  number: number;
  manual: boolean;
  at: number;
  httpStatus: number | null;
  latencyMs: number;
  error: string | null;
  /** What the receiver answered, bounded (migration 0012): for the endpoint's owner to read, never for a model. */
  responseExcerpt: string | null;
}

function toRow(r: Selectable<DeliveriesTable>): DeliveryRow {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    webhookId: r.webhook_id,
    eventId: r.event_id,
    eventType: r.event_type,
    body: r.body,
    status: r.status,
    attemptCount: Number(r.attempt_count),
    manual: Number(r.manual) === 1,
    redeliverRequested: Number(r.redeliver_requested) === 1,
    nextAttemptAt: toMillisOrNull(r.next_attempt_at),
    lockedBy: r.locked_by,
    createdAt: toMillis(r.created_at),
    deliveredAt: toMillisOrNull(r.delivered_at),
  };
}

function toAttempt(r: Selectable<DeliveryAttemptsTable>): AttemptRow {
  return {
    deliveryId: r.delivery_id,
    number: Number(r.number),
    manual: Number(r.manual) === 1,
    at: toMillis(r.at),
    httpStatus: r.http_status === null ? null : Number(r.http_status),
    latencyMs: Number(r.latency_ms),
    error: r.error,
    responseExcerpt: r.response_excerpt ?? null,
  };
}

export async function insertDeliveries(
  db: Kysely<Database>,
  rows: { id: string; workspaceId: string; webhookId: string; eventId: string; eventType: string; body: string; now: number }[],
): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('deliveries')
    .values(
      rows.map((r) => ({
        id: r.id,
        workspace_id: r.workspaceId,
        webhook_id: r.webhookId,
        event_id: r.eventId,
        event_type: r.eventType,
        body: r.body,
        status: 'pending',
        next_attempt_at: r.now,
        locked_by: null,
        created_at: r.now,
        updated_at: r.now,
      })),
    )
    .execute();
}

/**
 * Endpoints that have pending deliveries, in id order after `after`, at most `limit` of them. A loose index scan
 * (migration 0013): one probe per endpoint, never one per row, so a receiver's backlog costs nothing here.
 */
export async function endpointsWithPending(db: Kysely<Database>, dialect: 'sqlite' | 'postgres', args: { after: string; limit: number }): Promise<string[]> {
  // SQLite's planner, without statistics, prefers the (status, next_attempt_at) index and reads every pending row.
  const pending = dialect === 'sqlite' ? sql`deliveries indexed by deliveries_endpoint_due_idx` : sql`deliveries`;
  const found = await sql<{ id: string | null }>`
    with recursive e(id, n) as (
      select (select min(webhook_id) from ${pending} where status = 'pending' and webhook_id > ${args.after}), 1
      union all
      select (select min(webhook_id) from ${pending} where status = 'pending' and webhook_id > e.id), e.n + 1
      from e where e.id is not null and e.n < ${args.limit}
    )
    select id from e where id is not null`.execute(db);
  return found.rows.flatMap((r) => (r.id === null ? [] : [r.id]));
}

/**
 * Claims due deliveries in one statement, at most `limit` of each endpoint named (PostgreSQL: `FOR UPDATE SKIP
 * LOCKED`). Each endpoint's pick reads its own slice of the pending index in due order, so endpoints the caller
 * has no room for are never read. Claiming clears the "redeliver requested" mark: the attempt about to be made
 * honours every redeliver asked before it.
 */
export async function claimDueDeliveries(
  db: Kysely<Database>,
  dialect: 'sqlite' | 'postgres',
  args: { now: number; lease: string; lockedUntil: number; endpoints: { webhookId: string; limit: number }[] },
): Promise<DeliveryRow[]> {
  if (args.endpoints.length === 0) return [];
  const picks = args.endpoints.map((e) => {
    let pick = db
      .selectFrom('deliveries')
      .select('id')
      .where('webhook_id', '=', e.webhookId)
      .where('status', '=', sql.lit('pending'))
      .where('next_attempt_at', '<=', args.now)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', args.now)]))
      .orderBy('next_attempt_at', 'asc')
      .limit(e.limit);
    if (dialect === 'postgres') pick = pick.forUpdate().skipLocked();
    // Wrapped so each endpoint keeps its own order and limit inside the union.
    return db.selectFrom(pick.as('pick')).select('pick.id');
  });
  const [first, ...rest] = picks as [(typeof picks)[number], ...typeof picks];
  const due = rest.reduce((all, pick) => all.unionAll(pick), first);
  const rows = await db.updateTable('deliveries').set({ locked_by: args.lease, locked_until: args.lockedUntil, redeliver_requested: 0 }).where('id', 'in', due).returningAll().execute();
  return rows.map(toRow);
}

export interface AttemptRecord {
  id: string;
  lease: string;
  attemptId: string;
  attempt: AttemptRow;
  status: string;
  nextAttemptAt: number | null;
  deliveredAt: number | null;
}

/**
 * Records attempts and their deliveries' new states in one transaction (one commit for a whole batch). Each
 * delivery is updated only if its lease is still held (so a worker whose lease ran out cannot overwrite a newer
 * outcome), and its attempt row is written only then. Returns, per record, whether it was recorded.
 *
 * When a redeliver was asked while an attempt was in flight (the mark claiming cleared is set again), the
 * attempt is recorded but the delivery stays pending, manual and due when the redeliver asked: spec 4.4, the
 * 202 of a redeliver promises an attempt, and this one started before it was asked.
 */
export async function recordAttempts(db: Kysely<Database>, records: AttemptRecord[]): Promise<boolean[]> {
  if (records.length === 0) return [];
  return db.transaction().execute(async (tx) => {
    const settled = new Set<string>();
    // Bounded chunks: SQLite's compound-select limit, PostgreSQL's parameter limit.
    for (let i = 0; i < records.length; i += 200) {
      for (const id of await settleDeliveries(tx, records.slice(i, i + 200))) settled.add(id);
    }
    const rows = records.filter((r) => settled.has(r.id));
    for (let i = 0; i < rows.length; i += 500) {
      await tx
        .insertInto('delivery_attempts')
        .values(
          rows.slice(i, i + 500).map((r) => ({
            id: r.attemptId,
            delivery_id: r.id,
            number: r.attempt.number,
            manual: r.attempt.manual ? 1 : 0,
            at: r.attempt.at,
            http_status: r.attempt.httpStatus,
            latency_ms: r.attempt.latencyMs,
            error: r.attempt.error,
            response_excerpt: r.attempt.responseExcerpt,
          })),
        )
        .execute();
    }
    return records.map((r) => settled.has(r.id));
  });
}

/** One statement for a batch: each delivery still held under its own lease takes its new state; returns their ids. */
async function settleDeliveries(db: Kysely<Database>, records: AttemptRecord[]): Promise<string[]> {
  // The outcomes as a derived table (a union of one-row selects reads the same on SQLite and PostgreSQL).
  const outcomes = sql.join(
    records.map(
      (r) =>
        sql`select cast(${r.id} as text) as id, cast(${r.lease} as text) as lease, cast(${r.status} as text) as status, cast(${r.attempt.number} as integer) as number, cast(${r.nextAttemptAt} as bigint) as next_at, cast(${r.deliveredAt} as bigint) as delivered_at, cast(${r.attempt.at} as bigint) as at`,
    ),
    sql` union all `,
  );
  const updated = await sql<{ id: string }>`
    update deliveries set
      status = case when deliveries.redeliver_requested = 1 then 'pending' else o.status end,
      attempt_count = o.number,
      manual = case when deliveries.redeliver_requested = 1 then 1 else 0 end,
      next_attempt_at = case when deliveries.redeliver_requested = 1 then deliveries.next_attempt_at else o.next_at end,
      delivered_at = o.delivered_at,
      locked_by = null,
      locked_until = null,
      updated_at = o.at
    from (${outcomes}) as o
    where deliveries.id = o.id and deliveries.locked_by = o.lease
    returning deliveries.id`.execute(db);
  return updated.rows.map((r) => r.id);
}

export async function findDelivery(db: Kysely<Database>, workspaceId: string, id: string): Promise<DeliveryRow | undefined> {
  const r = await db.selectFrom('deliveries').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return r && toRow(r);
}

export async function listDeliveries(
  db: Kysely<Database>,
  webhookId: string,
  q: { statuses?: string[] | undefined; after?: { createdAt: number; id: string } | undefined; limit: number },
): Promise<DeliveryRow[]> {
  let query = db.selectFrom('deliveries').selectAll().where('webhook_id', '=', webhookId);
  if (q.statuses !== undefined) query = query.where('status', 'in', q.statuses);
  const after = q.after;
  if (after !== undefined) {
    query = query.where((eb) => eb.or([eb('created_at', '<', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)])]));
  }
  return (await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(q.limit).execute()).map(toRow);
}

export async function listAttempts(db: Kysely<Database>, deliveryIds: string[]): Promise<AttemptRow[]> {
  if (deliveryIds.length === 0) return [];
  const rows = await db.selectFrom('delivery_attempts').selectAll().where('delivery_id', 'in', deliveryIds).orderBy('number').execute();
  return rows.map(toAttempt);
}

/**
 * Makes a delivery due now, for one manual attempt, and sets the "redeliver requested" mark. If an attempt is in
 * flight (leased), the lease is left alone, so the two never run at once; that attempt's record keeps the
 * delivery pending because of the mark, and the next claim makes the promised attempt. Several requests before
 * one claim make one attempt.
 */
export async function requestRedelivery(db: Kysely<Database>, workspaceId: string, id: string, now: number): Promise<boolean> {
  const r = await db
    .updateTable('deliveries')
    .set({ status: 'pending', manual: 1, redeliver_requested: 1, next_attempt_at: now, updated_at: now })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
