import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';

export type Dialect = 'sqlite' | 'postgres';

export type DatabaseTarget =
  | {
      dialect: 'sqlite';
      file: string;
      /** How long a storage failure (full disk, I/O error) counts as recent for readiness (default 30 s). */
      writeFailureHoldMs?: number;
    }
  | {
      dialect: 'postgres';
      connectionString: string;
      /** Bounded waits (0 disables one); see `PostgresWaits`. */
      waits?: Partial<PostgresWaits>;
    };

/**
 * How long a PostgreSQL caller may wait, so a held lock, a full pool or an unreachable server turns into an error
 * rather than a request that hangs until its client gives up.
 */
export interface PostgresWaits {
  /** For a pooled connection: every one busy, or the server not answering a new one. */
  connectMs: number;
  /** For one statement, server side (`statement_timeout`). */
  statementMs: number;
  /** For a lock, server side (`lock_timeout`): a statement queued behind another transaction's lock. */
  lockMs: number;
}

export const DEFAULT_POSTGRES_WAITS: PostgresWaits = { connectMs: 5_000, statementMs: 30_000, lockMs: 5_000 };

const DEFAULT_WRITE_FAILURE_HOLD_MS = 30_000;

/**
 * better-sqlite3 with prepared statements kept for reuse. kysely calls `prepare` for
 * every query, and compiling the same SQL again was the largest single cost of a request in the profile.
 */
export interface SqliteHandle {
  prepare(sql: string): BetterSqlite3.Statement;
  transaction: BetterSqlite3.Database['transaction'];
  close(): void;
}

const BUSY_TIMEOUT_MS = 5000;

/**
 * SQLite's result codes that say the file cannot be written or read (full disk, I/O error, read-only or damaged
 * file), as opposed to a statement's own failure (a constraint) or another process holding the lock (busy).
 */
const STORAGE_FAILURE = /^SQLITE_(FULL|IOERR|READONLY|CORRUPT|CANTOPEN|NOTADB)/;

/** The last storage failure a connection met, kept so readiness can report it. */
interface StorageFailures {
  record(err: unknown): void;
  /** The last storage failure if it happened within `holdMs`, else null. */
  recent(holdMs: number): Error | null;
}

function storageFailures(): StorageFailures {
  let last: { error: Error; at: number } | null = null;
  return {
    record(err) {
      const code = (err as { code?: unknown } | null)?.code;
      if (err instanceof Error && typeof code === 'string' && STORAGE_FAILURE.test(code)) last = { error: err, at: Date.now() };
    },
    recent(holdMs) {
      return last !== null && Date.now() - last.at < holdMs ? last.error : null;
    },
  };
}

/** Makes the statement's runs report their errors to `failures` (then throw them as before). */
function watched(stmt: BetterSqlite3.Statement, failures: StorageFailures): BetterSqlite3.Statement {
  for (const method of ['run', 'all', 'get'] as const) {
    const original = stmt[method].bind(stmt) as (...args: unknown[]) => unknown;
    Object.defineProperty(stmt, method, {
      value: (...args: unknown[]) => {
        try {
          return original(...args);
        } catch (err) {
          failures.record(err);
          throw err;
        }
      },
    });
  }
  return stmt;
}

function withStatementCache(sqlite: BetterSqlite3.Database, failures: StorageFailures, size = 512): SqliteHandle {
  const cache = new Map<string, BetterSqlite3.Statement>();
  // After a full disk or an I/O error SQLite has already rolled the transaction back itself; the rollback that
  // follows (kysely's, on the way out of the failed work) would then fail with "no transaction is active" and
  // that second error would replace the first for every caller. Run as a statement that does nothing instead.
  const nothing = sqlite.prepare('select 0 where 0');
  return {
    prepare(sql) {
      if (sql === 'rollback' && !sqlite.inTransaction) return nothing;
      let stmt = cache.get(sql);
      if (stmt) return stmt;
      stmt = watched(sqlite.prepare(sql), failures);
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
export type Db = (
  | { dialect: 'sqlite'; kysely: Kysely<Database>; sqlite: SqliteHandle }
  | { dialect: 'postgres'; kysely: Kysely<Database>; pool: pg.Pool }
) & {
  /**
   * A storage failure met recently (SQLite: a full disk, an I/O error; within the target's hold), or null:
   * writes are failing though the database still answers a read. Always null on PostgreSQL, whose server reports
   * its own storage through its errors and its availability.
   */
  recentWriteFailure(): Error | null;
  close(): Promise<void>;
};

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
    const failures = storageFailures();
    const handle = withStatementCache(sqlite, failures);
    const kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: handle }) });
    const holdMs = target.writeFailureHoldMs ?? DEFAULT_WRITE_FAILURE_HOLD_MS;
    return { dialect: 'sqlite', kysely, sqlite: handle, recentWriteFailure: () => failures.recent(holdMs), close: () => kysely.destroy() };
  }
  const waits = { ...DEFAULT_POSTGRES_WAITS, ...target.waits };
  const pool = new pg.Pool({
    connectionString: target.connectionString,
    max: options.poolSize ?? 10,
    // pg treats 0 (and absence) as "no limit"; these are sent as session settings when a connection opens.
    connectionTimeoutMillis: waits.connectMs,
    statement_timeout: waits.statementMs,
    lock_timeout: waits.lockMs,
  });
  // A client whose connection drops (a server restart, a failover) emits `error`; unheard, that event ends the
  // process. The pool listens only while a client is idle, so each client gets a listener of its own for the
  // time it is checked out: the query in flight fails with the error and its caller handles that, and the pool
  // discards the broken client when it is released. The next checkout opens a new connection.
  pool.on('connect', (client) => client.on('error', () => undefined));
  pool.on('error', () => undefined);
  const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { dialect: 'postgres', kysely, pool, recentWriteFailure: () => null, close: () => kysely.destroy() };
}
