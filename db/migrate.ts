import { type Kysely, type Migration, type MigrationResultSet, Migrator, sql } from 'kysely';
import type { Dialect } from './connect.js';
import { migrations } from './migrations/index.js';

/**
 * Brings the schema up to date. Safe to run from several processes at once: kysely's migrator takes a lock
 * table, so one process migrates and the others wait, then find nothing left to do.
 * @throws the first migration error, after kysely has rolled that migration back.
 */
export async function migrateToLatest(db: Kysely<unknown>, dialect: Dialect): Promise<MigrationResultSet> {
  const result = await unbounded(db, dialect, async (conn) => (await migrator(conn, dialect)).migrateToLatest());
  if (result.error) throw result.error;
  return result;
}

/**
 * Brings the schema up to the migration named, and no further: for measuring a change of schema against the one
 * before it (bench/profile-deliveries.ts).
 * @throws the first migration error, after kysely has rolled that migration back.
 */
export async function migrateUpTo(db: Kysely<unknown>, dialect: Dialect, name: string): Promise<MigrationResultSet> {
  const result = await unbounded(db, dialect, async (conn) => (await migrator(conn, dialect)).migrateTo(name));
  if (result.error) throw result.error;
  return result;
}

/**
 * Runs `work` on one PostgreSQL connection with the session's statement and lock deadlines lifted: those bound a
 * request's waits, while a process that starts beside another must wait for the other's migration lock as long as
 * that migration takes, and a migration that rewrites a large table may run longer than any request should.
 * SQLite has no such deadlines.
 */
async function unbounded<T>(db: Kysely<unknown>, dialect: Dialect, work: (conn: Kysely<unknown>) => Promise<T>): Promise<T> {
  if (dialect !== 'postgres') return work(db);
  return db.connection().execute(async (conn) => {
    await sql`set statement_timeout = 0`.execute(conn);
    await sql`set lock_timeout = 0`.execute(conn);
    try {
      return await work(conn);
    } finally {
      // Back to the values the pool opened the connection with, before it serves anything else.
      await sql`reset statement_timeout`.execute(conn);
      await sql`reset lock_timeout`.execute(conn);
    }
  });
}

async function migrator(db: Kysely<unknown>, dialect: Dialect): Promise<Migrator> {
  // Kysely finds its bookkeeping tables by name in any schema; on a PostgreSQL server that hosts several schemas
  // (one per tenant or test run) it must be pinned to ours.
  const migrationTableSchema =
    dialect === 'postgres' ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema : undefined;
  return new Migrator({
    db,
    ...(migrationTableSchema === undefined ? {} : { migrationTableSchema }),
    provider: {
      getMigrations: async () =>
        Object.fromEntries(
          migrations.map((m): [string, Migration] => [m.name, { up: (tx) => m.up(tx, dialect) }]),
        ),
    },
  });
}
