import type { SqliteHandle } from '../connect.js';
import { type WindowCount, sqliteHit } from './rate-limits.repo.js';

/** Where a process counts its rate limits: in its own memory, or in `rate_limits`. */
export type Counting = 'memory' | 'database';

/** What makes a registered process count as alive: a recent heartbeat, and its pid still running on this host. */
export interface Liveness {
  now: number;
  staleMs: number;
  alive(pid: number): boolean;
}

interface ProcessRow {
  id: string;
  pid: number;
  heartbeat_at: number;
  counting: Counting;
}

function others(sqlite: SqliteHandle, id: string, liveness: Liveness): { live: ProcessRow[]; dead: ProcessRow[] } {
  const rows = sqlite.prepare('SELECT id, pid, heartbeat_at, counting FROM rate_limit_processes WHERE id <> ?').all(id) as ProcessRow[];
  const sorted: { live: ProcessRow[]; dead: ProcessRow[] } = { live: [], dead: [] };
  for (const r of rows) (Number(r.heartbeat_at) > liveness.now - liveness.staleMs && liveness.alive(r.pid) ? sorted.live : sorted.dead).push(r);
  return sorted;
}

/**
 * Registers process `id` on the file and says where it counts: in memory only if no other live process is
 * registered. One IMMEDIATE transaction, so two processes starting at once are ordered by the write lock and the
 * second sees the first. Rows of processes that are gone are removed.
 */
export function joinCounting(sqlite: SqliteHandle, id: string, pid: number, liveness: Liveness): Counting {
  return sqlite
    .transaction(() => {
      const { live, dead } = others(sqlite, id, liveness);
      for (const row of dead) leaveCounting(sqlite, row.id);
      const counting: Counting = live.length === 0 ? 'memory' : 'database';
      sqlite
        .prepare('INSERT INTO rate_limit_processes (id, pid, heartbeat_at, counting) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET pid = excluded.pid, heartbeat_at = excluded.heartbeat_at, counting = excluded.counting')
        .run(id, pid, liveness.now, counting);
      return counting;
    })
    .immediate();
}

/** Whether another live process is registered, and whether one of them still counts in memory. */
export function otherCounters(sqlite: SqliteHandle, id: string, liveness: Liveness): { any: boolean; inMemory: boolean } {
  const { live } = others(sqlite, id, liveness);
  return { any: live.length > 0, inMemory: live.some((r) => r.counting === 'memory') };
}

/**
 * Adds this process's windows to `rate_limits` and marks it as counting there, in one IMMEDIATE transaction: a
 * process waiting for the hand-over sees both or neither.
 */
export function handOverCounts(sqlite: SqliteHandle, id: string, windows: Iterable<[string, WindowCount]>, now: number): void {
  sqlite
    .transaction(() => {
      for (const [key, window] of windows) sqliteHit(sqlite, key, window.points, window.expire, now);
      sqlite.prepare("UPDATE rate_limit_processes SET counting = 'database', heartbeat_at = ? WHERE id = ?").run(now, id);
    })
    .immediate();
}

export function heartbeat(sqlite: SqliteHandle, id: string, now: number): void {
  sqlite.prepare('UPDATE rate_limit_processes SET heartbeat_at = ? WHERE id = ?').run(now, id);
}

/** Removes process `id`'s row: at its own stop, or by another that found it gone. */
export function leaveCounting(sqlite: SqliteHandle, id: string): void {
  sqlite.prepare('DELETE FROM rate_limit_processes WHERE id = ?').run(id);
}
