import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Db } from '../../db/connect.js';
import { migrateToLatest, migrateUpTo } from '../../db/migrate.js';
import type { Kysely } from 'kysely';
import { testDatabaseKinds, type TestDatabase } from '../support/databases.js';

const postgres = testDatabaseKinds().find((kind) => kind.name === 'postgres');

// A process that starts while another migrates waits for the other's migration lock for as long as it takes; the
// request-sized lock deadline must not fail its start.
describe.skipIf(!postgres)('migrations on PostgreSQL with short request deadlines', () => {
  let database: TestDatabase;
  let db: Db;
  beforeAll(async () => {
    database = await postgres!.create({ empty: true });
    db = connect({ dialect: 'postgres', connectionString: database.url, waits: { lockMs: 200, statementMs: 200 } });
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  it('waits out a table lock held longer than the request lock deadline, and leaves the deadlines as they were', async () => {
    const kysely = db.kysely as unknown as Kysely<unknown>;
    await migrateUpTo(kysely, 'postgres', '0014_network_instance_apps');
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    try {
      // The next migration adds a column to connections, which waits for every reader of the table to finish.
      await holder.query('begin');
      await holder.query('lock table connections in access share mode');
      const migrating = migrateToLatest(kysely, 'postgres');
      await new Promise((resolve) => setTimeout(resolve, 800));
      await holder.query('commit');
      await expect(migrating).resolves.toBeDefined();
    } finally {
      await holder.end();
    }
    const pool = (db as Extract<Db, { dialect: 'postgres' }>).pool;
    const clients = await Promise.all(Array.from({ length: 3 }, () => pool.connect()));
    try {
      const settings = await Promise.all(clients.map(async (client) => (await client.query<{ lock_timeout: string }>('show lock_timeout')).rows[0]?.lock_timeout));
      expect(settings).toEqual(['200ms', '200ms', '200ms']);
    } finally {
      for (const client of clients) client.release();
    }
  });
});
