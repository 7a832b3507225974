import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';

/** Another process already serves this SQLite file. */
export class ServingLockHeld extends Error {
  override readonly name = 'ServingLockHeld';
}

export interface ServingLock {
  release(): void;
}

/**
 * Takes the one serving place of a SQLite database file: an exclusive lock on `<file>.serving-lock`, held until
 * `release` or the end of the process. SQLite's exclusive lock is an OS file lock (POSIX advisory locks on Unix,
 * LockFileEx on Windows), so the operating system drops it when its process dies, SIGKILL included: a crashed
 * process never blocks the next start. The lock sits in a file of its own, so the CLI and worker processes, which
 * open the database itself, run beside the serving process.
 *
 * Why one serving process: rate limits count in that process's memory (spec 8's budget would split across two),
 * and several serving processes are what PostgreSQL is for.
 * @throws ServingLockHeld when another process (or this one, through an earlier lock not yet released) holds it.
 */
export function takeServingLock(databaseFile: string): ServingLock {
  const path = `${databaseFile}.serving-lock`;
  mkdirSync(dirname(path), { recursive: true });
  // No busy wait: a held lock is an answer, not something to wait out.
  const lock = new BetterSqlite3(path, { timeout: 0 });
  try {
    lock.pragma('locking_mode = EXCLUSIVE');
    lock.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    lock.close();
    if ((err as { code?: unknown }).code === 'SQLITE_BUSY') {
      throw new ServingLockHeld(
        `Another process already serves ${databaseFile} (it holds ${path}). SQLite runs one serving process (SERVICE_ROLE=all or api); run a SERVICE_ROLE=worker process or the CLI beside it, or several serving processes on PostgreSQL.`,
      );
    }
    throw err;
  }
  return { release: () => lock.close() };
}
