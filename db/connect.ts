import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { namingStatements } from './postgres-statements.js';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

export type DatabaseTarget =
  | { dialect: 'sqlite'; file: string }
  /** `preparedStatements: false` for a pooler in transaction mode that cannot keep them (default true). */
  | { dialect: 'postgres'; connectionString: string; preparedStatements?: boolean };

/**
 * better-sqlite3 with prepared statements kept for reuse. kysely calls `prepare` for
 * every query, and compiling the same SQL again was the largest single cost of a request in the profile.
 */
export interface SqliteHandle {
  prepare(sql: string): BetterSqlite3.Statement;
  /**
   * SQLite's `PRAGMA data_version`: changes whenever another connection (another process on the file) has committed
   * since this connection last looked, never for this connection's own commits: how a process alone on the file
   * learns that another has joined it (src/web/rate-counting.ts).
   */
  dataVersion(): number;
  /** Whether a transaction is open on the connection: a statement run now would join it. */
  inTransaction(): boolean;
  /**
   * Runs `run` with no busy wait: a write that meets another process's write lock fails at once (SQLITE_BUSY)
   * instead of holding the event loop for up to the busy timeout. For housekeeping that can simply try again later.
   */
  withoutWaiting<T>(run: () => T): T;
  transaction: BetterSqlite3.Database['transaction'];
  close(): void;
}

const BUSY_TIMEOUT_MS = 5000;

function withStatementCache(sqlite: BetterSqlite3.Database, size = 512): SqliteHandle {
  const cache = new Map<string, BetterSqlite3.Statement>();
  const dataVersion = sqlite.prepare('PRAGMA data_version').pluck();
  return {
    dataVersion: () => dataVersion.get() as number,
    inTransaction: () => sqlite.inTransaction,
    withoutWaiting(run) {
      sqlite.pragma('busy_timeout = 0');
      try {
        return run();
      } finally {
        sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      }
    },
    prepare(sql) {
      let stmt = cache.get(sql);
      if (stmt) return stmt;
      stmt = sqlite.prepare(sql);
      // SQL built with values inlined would grow the cache without bound: keep the most recent only.
      if (cache.size >= size) cache.delete(cache.keys().next().value as string);
      cache.set(sql, stmt);
      return stmt;
    },
    transaction: sqlite.transaction.bind(sqlite),
    close: () => sqlite.close(),
  };
}

/** An open database: the kysely handle plus the driver object, which a few libraries need directly. */
export type Db =
  | { dialect: 'sqlite'; kysely: Kysely<Database>; sqlite: SqliteHandle; close(): Promise<void> }
  | { dialect: 'postgres'; kysely: Kysely<Database>; pool: pg.Pool; close(): Promise<void> };

/**
 * Opens the database named by `target`. SQLite gets WAL (readers do not block the writer), a busy timeout
 * (another process holding the write lock makes us wait, not fail) and enforced foreign keys.
 */
export function connect(target: DatabaseTarget, options: { poolSize?: number } = {}): Db {
  if (target.dialect === 'sqlite') {
    if (target.file !== ':memory:') mkdirSync(dirname(target.file), { recursive: true });
    const sqlite = new BetterSqlite3(target.file);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('synchronous = NORMAL');
    const handle = withStatementCache(sqlite);
    const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: handle }) });
    return { dialect: 'sqlite', kysely, sqlite: handle, close: () => kysely.destroy() };
  }
  const pool = new pg.Pool({ connectionString: target.connectionString, max: options.poolSize ?? 10 });
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool: target.preparedStatements === false ? pool : namingStatements(pool) }) });
  return { dialect: 'postgres', kysely, pool, close: () => kysely.destroy() };
}
