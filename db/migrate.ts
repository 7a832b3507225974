import { type Kysely, type Migration, type MigrationResultSet, Migrator, sql } from 'kysely';
import type { Dialect } from './connect.js';
import { migrations } from './migrations/index.js';

/**
 * Brings the schema up to date. Safe to run from several processes at once: kysely's migrator takes a lock
 * table, so one process migrates and the others wait, then find nothing left to do.
 * @throws the first migration error, after kysely has rolled that migration back.
 */
export async function migrateToLatest(db: Kysely<unknown>, dialect: Dialect): Promise<MigrationResultSet> {
  const result = await (await migrator(db, dialect)).migrateToLatest();
  if (result.error) throw result.error;
  return result;
}

/**
 * Brings the schema up to the migration named, and no further: for measuring a change of schema against the one
 * before it (bench/profile-deliveries.ts).
 * @throws the first migration error, after kysely has rolled that migration back.
 */
export async function migrateUpTo(db: Kysely<unknown>, dialect: Dialect, name: string): Promise<MigrationResultSet> {
  const result = await (await migrator(db, dialect)).migrateTo(name);
  if (result.error) throw result.error;
  return result;
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
