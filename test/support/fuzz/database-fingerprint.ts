import { type Kysely, sql } from 'kysely';
import type { Database } from '../../../db/schema.js';

/**
 * What a rejected request must not change: the row counts of the main tables, and beyond counts the soft
 * deletes, revocations, last updates (the clock moves between cases), meters and balances.
 */
export const DATABASE_PROBES: Readonly<Record<string, string>> = {
  contents: 'select count(*) from contents',
  jobs: 'select count(*) from jobs',
  brands: 'select count(*) from brands',
  connections: 'select count(*) from connections',
  webhooks: 'select count(*) from webhooks',
  api_keys: 'select count(*) from api_keys',
  media: 'select count(*) from media',
  credit_ledger: 'select count(*) from credit_ledger',
  idempotency_keys: 'select count(*) from idempotency_keys',
  idempotency_in_flight: "select count(*) from idempotency_keys where state <> 'done'",
  brands_live: 'select count(*) from brands where deleted_at is null',
  webhooks_live: 'select count(*) from webhooks where deleted_at is null',
  api_keys_live: 'select count(*) from api_keys where revoked_at is null',
  connections_active: "select count(*) from connections where status = 'active'",
  oauth_clients: 'select count(*) from oauth_clients',
  network_oauth_states: 'select count(*) from network_oauth_states',
  events: 'select count(*) from events',
  deliveries: 'select count(*) from deliveries',
  delivery_attempts: 'select count(*) from delivery_attempts',
  credit_batches: 'select count(*) from credit_batches',
  credit_remaining: 'select coalesce(sum(remaining), 0) from credit_batches',
  meters_used: 'select coalesce(sum(used), 0) from meter_counters',
  brands_updated: 'select max(updated_at) from brands',
  connections_updated: 'select max(updated_at) from connections',
  contents_updated: 'select max(updated_at) from contents',
  jobs_updated: 'select max(updated_at) from jobs',
  webhooks_updated: 'select max(updated_at) from webhooks',
  deliveries_updated: 'select max(updated_at) from deliveries',
  oauth_clients_updated: 'select max(updated_at) from oauth_clients',
};

const PROBES_SQL = `select ${Object.entries(DATABASE_PROBES)
  .map(([name, query]) => `(${query}) as "${name}"`)
  .join(', ')}`;

export type DatabaseFingerprint = Record<string, string>;

/** The database as a rejected request must leave it, read in one statement. */
export async function databaseFingerprint(db: Kysely<Database>): Promise<DatabaseFingerprint> {
  const { rows } = await sql<Record<string, unknown>>`${sql.raw(PROBES_SQL)}`.execute(db);
  const row = rows[0] ?? {};
  return Object.fromEntries(Object.keys(DATABASE_PROBES).map((k) => [k, row[k] === null || row[k] === undefined ? '-' : String(Number(row[k]))]));
}

/** What changed between two fingerprints, except the `allowed` entries (`name: before → after`). */
export function databaseChanges(before: DatabaseFingerprint, after: DatabaseFingerprint, allowed: readonly string[] = []): string[] {
  return Object.keys(before)
    .filter((k) => before[k] !== after[k] && !allowed.includes(k))
    .map((k) => `${k}: ${before[k]} → ${after[k]}`);
}
