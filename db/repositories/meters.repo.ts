import { type Kysely, sql } from 'kysely';
import type { Database } from '../schema.js';
import { toMillis } from './rows.js';
import { compiledOnce } from './compiled-once.js';

/**
 * Adds `amount` to a counter only if the result stays within `limit`, in one conditional upsert: a new counter is
 * created holding `amount` if that fits, an existing one grows only while it fits, and two racing transactions
 * cannot both take the last slot (PostgreSQL re-checks the conflict row's WHERE under its lock; SQLite has one
 * writer). Returns whether it fitted.
 */
export async function incrementWithin(
  db: Kysely<Database>,
  key: { workspaceId: string; meter: string; period: string },
  amount: number,
  limit: number,
): Promise<boolean> {
  const result = await takeWithin(db, [key.workspaceId, key.meter, key.period, amount, amount, limit, limit]);
  return result.rows.length === 1;
}

// Every creation runs it once per meter it charges.
const takeWithin = compiledOnce((db) => ({
  compile: () =>
    sql<{ used: number }>`insert into meter_counters (workspace_id, meter, period, used)
      select ${''}, ${''}, ${''}, cast(${0} as bigint) where cast(${0} as bigint) <= cast(${0} as bigint)
      on conflict (workspace_id, meter, period) do update set used = meter_counters.used + excluded.used
      where meter_counters.used + excluded.used <= cast(${0} as bigint)
      returning used`.compile(db),
}));

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
