import { type Kysely, sql } from 'kysely';
import type { Database } from '../schema.js';
import { toMillis } from './rows.js';

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
  const result = await sql<{ used: number }>`insert into meter_counters (workspace_id, meter, period, used)
      select ${key.workspaceId}, ${key.meter}, ${key.period}, cast(${amount} as bigint) where cast(${amount} as bigint) <= cast(${limit} as bigint)
      on conflict (workspace_id, meter, period) do update set used = meter_counters.used + excluded.used
      where meter_counters.used + excluded.used <= cast(${limit} as bigint)
      returning used`.execute(db);
  return result.rows.length === 1;
}

/** One counter's share of a charge: add `amount` if the counter stays within `limit`. */
export interface MeterTake {
  workspaceId: string;
  meter: string;
  period: string;
  amount: number;
  limit: number;
}

/**
 * `incrementWithin` for several counters in one statement (one round trip on PostgreSQL instead of one per
 * counter; a creation charges two). Each counter grows only while it fits, exactly as alone; the counters that did
 * not fit are returned, in the order given, and the ones that did have grown: the caller's transaction rolls them
 * back when any did not. The counters must be distinct (one statement cannot update a row twice).
 */
export async function incrementAllWithin<Take extends MeterTake>(db: Kysely<Database>, takes: readonly Take[]): Promise<Take[]> {
  if (takes.length === 1) {
    const [take] = takes as [Take];
    return (await incrementWithin(db, take, take.amount, take.limit)) ? [] : [take];
  }
  // The counters wanted, as rows of a select (portable: SQLite's VALUES names its columns column1, column2, ...);
  // a new counter is inserted only if its amount fits, an existing one grows only while it fits its own limit, which
  // the conflict clause finds by meter (a row's `excluded` holds only the table's columns).
  const rows = takes.map((t) => sql`select cast(${t.workspaceId} as text) as workspace_id, cast(${t.meter} as text) as meter, cast(${t.period} as text) as period, cast(${t.amount} as bigint) as used, cast(${t.limit} as bigint) as lim`);
  const limits = takes.map((t) => sql`when ${t.meter} then cast(${t.limit} as bigint)`);
  const { rows: taken } = await sql<{ meter: string }>`insert into meter_counters (workspace_id, meter, period, used)
        select workspace_id, meter, period, used from (${sql.join(rows, sql` union all `)}) as wanted where used <= lim
        on conflict (workspace_id, meter, period) do update set used = meter_counters.used + excluded.used
        where meter_counters.used + excluded.used <= (case excluded.meter ${sql.join(limits, sql` `)} end)
        returning meter`.execute(db);
  const fitted = new Set(taken.map((r) => r.meter));
  return takes.filter((t) => !fitted.has(t.meter));
}

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
