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
  let statement = takeAllWithin.get(takes.length);
  if (statement === undefined) {
    statement = takeAllStatement(takes.length);
    takeAllWithin.set(takes.length, statement);
  }
  const parameters = [
    ...takes.flatMap((t) => [t.workspaceId, t.meter, t.period, t.amount, t.limit]),
    ...takes.flatMap((t) => [t.meter, t.limit]),
  ];
  const fitted = new Set((await statement(db, parameters)).rows.map((r) => r.meter));
  return takes.filter((t) => !fitted.has(t.meter));
}

const takeAllWithin = new Map<number, ReturnType<typeof takeAllStatement>>();

// The counters wanted, as rows of a select (portable: SQLite's VALUES names its columns column1, column2, ...);
// a new counter is inserted only if its amount fits, an existing one grows only while it fits its own limit, which
// the conflict clause finds by meter (a row's `excluded` holds only the table's columns).
function takeAllStatement(count: number) {
  const rows = Array.from({ length: count }, () => sql`select cast(${''} as text) as workspace_id, cast(${''} as text) as meter, cast(${''} as text) as period, cast(${0} as bigint) as used, cast(${0} as bigint) as lim`);
  const limits = Array.from({ length: count }, () => sql`when ${''} then cast(${0} as bigint)`);
  return compiledOnce((db) => ({
    compile: () =>
      sql<{ meter: string }>`insert into meter_counters (workspace_id, meter, period, used)
        select workspace_id, meter, period, used from (${sql.join(rows, sql` union all `)}) as wanted where used <= lim
        on conflict (workspace_id, meter, period) do update set used = meter_counters.used + excluded.used
        where meter_counters.used + excluded.used <= (case excluded.meter ${sql.join(limits, sql` `)} end)
        returning meter`.compile(db),
  }));
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
