import { type Kysely, type Migration, type MigrationResultSet, Migrator, sql } from 'kysely';
import type { Dialect } from './connect.js';
import { migrations } from './migrations/index.js';

/**
 * Brings the schema up to date. Safe to run from several processes at once: kysely's migrator takes a lock
 * table, so one process migrates and the others wait, then find nothing left to do.
 * @throws the first migration error, after kysely has rolled that migration back.
 */
export async function migrateToLatest(db: Kysely<unknown>, dialect: Dialect): Promise<MigrationResultSet> {
  // Kysely finds its bookkeeping tables by name in any schema; on a PostgreSQL server that hosts several schemas
  // (one per tenant or test run) it must be pinned to ours.
  const migrationTableSchema =
    dialect === 'postgres' ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema : undefined;
  const migrator = new Migrator({
    db,
    ...(migrationTableSchema === undefined ? {} : { migrationTableSchema }),
    provider: {
      getMigrations: async () =>
        Object.fromEntries(
          migrations.map((m): [string, Migration] => [m.name, { up: (tx) => m.up(tx, dialect) }]),
        ),
    },
  });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error;
  return result;
}
