import { CompiledQuery, sql } from 'kysely';
import type { Db, SqliteHandle } from '../connect.js';
import { toMillis } from './rows.js';

/** A window's count after a hit: how many points it holds now and when it ends (epoch ms). */
export interface WindowCount {
  points: number;
  expire: number;
}

export interface RateCounter {
  /**
   * Adds `points` to `key`'s fixed window and returns the window as it is after the addition. A window that has
   * ended restarts at this hit and lasts `windowMs`. One statement, atomic in the database: every process sharing
   * the database counts into the same row, and concurrent hits never lose one another.
   */
  hit(key: string, points: number, windowMs: number, now: number): Promise<WindowCount>;
  /** Deletes windows that ended before `now` (the table would otherwise keep a row per address ever seen). */
  sweep(now: number): Promise<void>;
}

// One upsert per hit. In both dialects the SET expressions read the row as it was before the update, so the
// restart test and the sum see the same old values. `rate_limits.expire` may be NULL in rows written by older
// versions (rate-limiter-flexible's store); such a row counts as ended.
// Positional, so the driver and kysely bind the same list (`sqliteHitParameters`).
const SQLITE_HIT = `INSERT INTO rate_limits (key, points, expire) VALUES (?, ?, ?)
ON CONFLICT (key) DO UPDATE SET
  points = CASE WHEN coalesce(rate_limits.expire, 0) <= ? THEN ? ELSE rate_limits.points + ? END,
  expire = CASE WHEN coalesce(rate_limits.expire, 0) <= ? THEN ? ELSE rate_limits.expire END
RETURNING points, expire`;

const sqliteHitParameters = (key: string, points: number, expire: number, now: number) => [key, points, expire, now, points, points, now, expire];

/** A counting statement's returned row as a window (PostgreSQL returns its bigint as text). */
const toWindow = (row: { points: number; expire: number | string }): WindowCount => ({ points: row.points, expire: toMillis(row.expire) });

/**
 * SQLite: adds `points` to `key`'s window, which, if it has ended (or is new), becomes the window ending at `expire`.
 * Synchronous, on the driver: better-sqlite3 runs and commits it before returning.
 */
export function sqliteHit(sqlite: SqliteHandle, key: string, points: number, expire: number, now: number): WindowCount {
  return toWindow(sqlite.prepare(SQLITE_HIT).get(sqliteHitParameters(key, points, expire, now)) as { points: number; expire: number });
}

/**
 * PostgreSQL's counting clause, for an `INSERT INTO rate_limits (key, points, expire)` whose row gives `$2` points
 * and the end `$3` of a window starting now (`$4`). Shared by the plain hit and the API key lookup that counts its
 * workspace's hit in the same statement (api-keys.repo.ts).
 */
export const POSTGRES_HIT_ON_CONFLICT = `ON CONFLICT (key) DO UPDATE SET
  points = CASE WHEN coalesce(rate_limits.expire, 0) <= $4 THEN $2 ELSE rate_limits.points + $2 END,
  expire = CASE WHEN coalesce(rate_limits.expire, 0) <= $4 THEN $3 ELSE rate_limits.expire END
RETURNING points, expire`;

const POSTGRES_HIT = `INSERT INTO rate_limits (key, points, expire) VALUES ($1, $2, $3)
${POSTGRES_HIT_ON_CONFLICT}`;

/** A hit on a workspace's window, to be counted by a statement that first finds the workspace (an API key lookup). */
export interface WorkspaceHit {
  /** The window's key is this prefix followed by the workspace id. */
  keyPrefix: string;
  points: number;
  windowMs: number;
  now: number;
}

/**
 * The rate limit's counters in the service's own table. Written against the drivers, not kysely: this runs
 * on every authenticated request, and building the query each time cost more than running it.
 */
export function rateCounter(db: Db): RateCounter {
  // Once every five minutes, so through kysely in both dialects: on SQLite it then waits for a transaction open on
  // the connection, where a statement on the driver would join it and be undone with it.
  const sweep = async (now: number): Promise<void> => {
    await db.kysely.deleteFrom('rate_limits').where(sql`coalesce(expire, 0)`, '<=', now).execute();
  };
  if (db.dialect === 'sqlite') {
    const sqlite = db.sqlite;
    return {
      async hit(key, points, windowMs, now) {
        // On the driver, at once, unless a transaction is open on the connection (one of kysely's, awaiting a step):
        // run now, the hit would join it and be undone with it. Through kysely it waits for the connection instead.
        if (!sqlite.inTransaction()) return sqliteHit(sqlite, key, points, now + windowMs, now);
        const { rows } = await db.kysely.executeQuery<{ points: number; expire: number }>(CompiledQuery.raw(SQLITE_HIT, sqliteHitParameters(key, points, now + windowMs, now)));
        return toWindow(rows[0]!);
      },
      sweep,
    };
  }
  const pool = db.pool;
  return {
    async hit(key, points, windowMs, now) {
      const result = await pool.query<{ points: number; expire: string }>({ name: 'rate_limit_hit', text: POSTGRES_HIT, values: [key, points, now + windowMs, now] });
      return toWindow(result.rows[0]!);
    },
    sweep,
  };
}
