import { type Kysely, sql } from 'kysely';
import type { Database } from '../schema.js';
import { toMillis } from './rows.js';
import { compiledOnce } from './compiled-once.js';

/**
 * Adds `amount` to a counter only if the result stays within `limit`, in one conditional UPDATE: two racing
 * transactions cannot both take the last slot (PostgreSQL re-checks the WHERE after the row lock; SQLite has
 * one writer). Returns whether it fitted.
 */
export async function incrementWithin(
  db: Kysely<Database>,
  key: { workspaceId: string; meter: string; period: string },
  amount: number,
  limit: number,
): Promise<boolean> {
  await ensureCounter(db, [key.workspaceId, key.meter, key.period, 0]);
  const result = await takeWithin(db, [amount, key.workspaceId, key.meter, key.period, amount, limit]);
  return Number(result.numAffectedRows) === 1;
}

// Every creation runs both, once per meter it charges.
const ensureCounter = compiledOnce((db) =>
  db
    .insertInto('meter_counters')
    .values({ workspace_id: '', meter: '', period: '', used: 0 })
    .onConflict((oc) => oc.columns(['workspace_id', 'meter', 'period']).doNothing()),
);
const takeWithin = compiledOnce((db) =>
  db
    .updateTable('meter_counters')
    .set({ used: sql`used + ${0}` })
    .where('workspace_id', '=', '')
    .where('meter', '=', '')
    .where('period', '=', '')
    .where(sql<boolean>`used + ${0} <= ${0}`),
);

/** Gives back stock (never below zero). */
export async function decrement(db: Kysely<Database>, key: { workspaceId: string; meter: string; period: string }, amount: number): Promise<void> {
  await db
    .updateTable('meter_counters')
    .set({ used: sql`case when used >= ${amount} then used - ${amount} else 0 end` })
    .where('workspace_id', '=', key.workspaceId)
    .where('meter', '=', key.meter)
    .where('period', '=', key.period)
    .execute();
}

export async function readCounters(db: Kysely<Database>, workspaceId: string, periods: string[]): Promise<{ meter: string; period: string; used: number }[]> {
  const rows = await db
    .selectFrom('meter_counters')
    .select(['meter', 'period', 'used'])
    .where('workspace_id', '=', workspaceId)
    .where('period', 'in', periods)
    .execute();
  return rows.map((r) => ({ meter: r.meter, period: r.period, used: toMillis(r.used) }));
}
