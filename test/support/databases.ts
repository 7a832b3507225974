import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** A database made for one suite, and how to throw it away. */
export interface TestDatabase {
  dialect: 'sqlite' | 'postgres';
  url: string;
  drop(): Promise<void>;
}

export interface TestDatabaseKind {
  name: 'sqlite' | 'postgres';
  create(): Promise<TestDatabase>;
}

const sqlite: TestDatabaseKind = {
  name: 'sqlite',
  async create() {
    const dir = mkdtempSync(join(tmpdir(), 'publisher-test-'));
    return { dialect: 'sqlite', url: `sqlite:${join(dir, 'service.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  },
};

/** A fresh schema per suite on TEST_DATABASE_URL; the server reaches it through search_path. */
function postgres(baseUrl: string): TestDatabaseKind {
  return {
    name: 'postgres',
    async create() {
      const schema = `t_${randomBytes(6).toString('hex')}`;
      const admin = new pg.Client({ connectionString: baseUrl });
      await admin.connect();
      await admin.query(`create schema ${schema}`);
      await admin.end();
      const url = new URL(baseUrl);
      url.searchParams.set('options', `-c search_path=${schema}`);
      return {
        dialect: 'postgres',
        url: url.toString(),
        drop: async () => {
          const c = new pg.Client({ connectionString: baseUrl });
          await c.connect();
          await c.query(`drop schema if exists ${schema} cascade`);
          await c.end();
        },
      };
    },
  };
}

/** SQLite always; PostgreSQL too when TEST_DATABASE_URL is set (CI sets it). */
export function testDatabaseKinds(): TestDatabaseKind[] {
  const url = process.env.TEST_DATABASE_URL;
  return url ? [sqlite, postgres(url)] : [sqlite];
}
