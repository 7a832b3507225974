import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { present } from './required.js';

/** A database made for one suite, and how to throw it away. */
export interface TestDatabase {
  dialect: 'sqlite' | 'postgres';
  url: string;
  drop(): Promise<void>;
}

export interface TestDatabaseKind {
  name: 'sqlite' | 'postgres';
  /**
   * A new database. On PostgreSQL it is a copy of the run's migrated template when there is one
   * (test/support/global-template.ts); `empty` asks for one with no table, for tests of migrating itself.
   */
  create(options?: { empty?: boolean }): Promise<TestDatabase>;
}

const sqlite: TestDatabaseKind = {
  name: 'sqlite',
  async create() {
    const dir = mkdtempSync(join(tmpdir(), 'publisher-test-'));
    return { dialect: 'sqlite', url: `sqlite:${join(dir, 'service.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  },
};

/**
 * A fresh database per suite beside TEST_DATABASE_URL's, named after it so a run's leftovers are easy to find.
 * Not a schema: kysely's migrator lists tables across every schema of its database, and a schema another suite
 * drops in the middle of that listing fails it ("schema ... does not exist"); databases do not see each other.
 * Copying the migrated template saves running every migration for each of about a hundred suites.
 */
/** Runs one administrative statement (create or drop a database) on its own connection to `baseUrl`. */
export async function adminQuery(baseUrl: string, statement: string): Promise<void> {
  const c = new pg.Client({ connectionString: baseUrl });
  await c.connect();
  try {
    await c.query(statement);
  } finally {
    await c.end();
  }
}

function postgres(baseUrl: string): TestDatabaseKind {
  const admin = (statement: string) => adminQuery(baseUrl, statement);
  return {
    name: 'postgres',
    async create(options = {}) {
      const url = new URL(baseUrl);
      const name = `${decodeURIComponent(url.pathname.slice(1)) || 'test'}_t_${randomBytes(6).toString('hex')}`;
      const template = options.empty === true ? undefined : process.env.TEST_DATABASE_TEMPLATE;
      await admin(template ? `create database "${name}" template "${template}"` : `create database "${name}"`);
      url.pathname = `/${encodeURIComponent(name)}`;
      return {
        dialect: 'postgres',
        url: url.toString(),
        drop: () => admin(`drop database if exists "${name}" with (force)`),
      };
    },
  };
}

/**
 * SQLite always; PostgreSQL too when TEST_DATABASE_URL is set. CI must set it: without it every PostgreSQL run
 * would be left out silently, so under CI=true its absence fails the file (./required.ts).
 */
export function testDatabaseKinds(): TestDatabaseKind[] {
  const url = process.env.TEST_DATABASE_URL;
  if (url) return [sqlite, postgres(url)];
  present('TEST_DATABASE_URL is not set (no PostgreSQL to run on)');
  return [sqlite];
}
