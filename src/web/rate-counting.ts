import { randomUUID } from 'node:crypto';
import type { Db } from '../../db/connect.js';
import { type Counting, handOverCounts, heartbeat, joinCounting, leaveCounting, type Liveness, otherCounters } from '../../db/repositories/rate-limit-processes.repo.js';
import type { WindowCount } from '../../db/repositories/rate-limits.repo.js';

/**
 * Fixed windows counted in this process's memory, with exactly the database counter's rules
 * (db/repositories/rate-limits.repo.ts): a window that has ended restarts at the hit that finds it ended.
 */
export class MemoryWindows {
  private readonly windows = new Map<string, WindowCount>();

  hit(key: string, points: number, windowMs: number, now: number): WindowCount {
    const window = this.windows.get(key);
    if (window === undefined || window.expire <= now) {
      this.windows.set(key, { points, expire: now + windowMs });
      return { points, expire: now + windowMs };
    }
    window.points += points;
    return { points: window.points, expire: window.expire };
  }

  /** The windows still running at `now`. */
  *running(now: number): Iterable<[string, WindowCount]> {
    for (const [key, window] of this.windows) if (window.expire > now) yield [key, window];
  }

  sweep(now: number): void {
    for (const [key, window] of this.windows) if (window.expire <= now) this.windows.delete(key);
  }

  clear(): void {
    this.windows.clear();
  }
}

/**
 * Where this process counts its rate limits (spec 8's budget, and the per-address one).
 *
 * PostgreSQL: always in `rate_limits`, one statement per request, shared by every process.
 *
 * SQLite: a process alone on its file counts in memory, exactly, with no write per request. It is alone while it is
 * the only live process registered in `rate_limit_processes` (which it joins at start). A process that starts
 * beside it registers, which changes the file's data version; the first notices that within `checkMs`, adds its
 * running windows to `rate_limits` and marks itself as counting there, in one transaction; the newcomer's `join`
 * returns only after every live process has done so, and counts nothing before. From then on both count in
 * the database, so the budget stays one budget across them: exact, as before, at one upsert per request. A process
 * that is not alone stays counting in the database until it stops.
 *
 * A process that dies loses the counts it held in memory: its workspaces' current windows restart lower. A process
 * frozen for longer than `staleMs` (30 s) is taken for gone by a newcomer; when it wakes it hands over within `checkMs`, and
 * until then the two budgets are apart by what it had counted.
 */
export interface CountingPlace {
  /** Whether a request now is counted in memory. */
  inMemory(): boolean;
  readonly windows: MemoryWindows;
  /** Registers this process; resolves once it knows where it counts (after any other's hand-over). */
  join(): Promise<void>;
  leave(): void;
}

export interface CountingSettings {
  heartbeatMs: number;
  staleMs: number;
  checkMs: number;
  /** How long `join` waits for others to hand over before giving up. */
  joinTimeoutMs: number;
}

// A heartbeat can be held up by another process's long write (the busy timeout is 5 s); a pid that still runs is
// taken for alive for 30 s without one.
const DEFAULTS: CountingSettings = { heartbeatMs: 1000, staleMs: 30_000, checkMs: 25, joinTimeoutMs: 60_000 };

/** Whether a pid runs on this host (a SQLite file is shared only by processes of one host). */
function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function countingPlace(db: Db, settings: Partial<CountingSettings> = {}): CountingPlace {
  const windows = new MemoryWindows();
  if (db.dialect !== 'sqlite') return { inMemory: () => false, windows, join: async () => undefined, leave: () => undefined };
  const { heartbeatMs, staleMs, checkMs, joinTimeoutMs } = { ...DEFAULTS, ...settings };
  const sqlite = db.sqlite;
  const id = randomUUID();
  const liveness = (): Liveness => ({ now: Date.now(), staleMs, alive: pidAlive });
  // 'database' until joined: a process that never joins (a worker, which serves no limited door) counts in the table.
  let counting: Counting = 'database';
  let joined = false;
  let handingOver = false;
  let seenVersion = sqlite.dataVersion();
  let timers: NodeJS.Timeout[] = [];

  const stopTimers = () => {
    for (const t of timers) clearInterval(t);
    timers = [];
  };
  /**
   * Hands the counts over once someone has joined and the connection is free. Run on a timer, not per request: the
   * newcomer counts nothing before the hand-over, so counting on in memory until then loses nothing, and a request
   * pays no statement to look (reading the data version is a read transaction of its own, ≈ 10 % of a read's CPU).
   */
  const check = (): void => {
    if (counting === 'database') return;
    if (!handingOver) {
      const version = sqlite.dataVersion();
      if (version === seenVersion) return;
      seenVersion = version;
      handingOver = otherCounters(sqlite, id, liveness()).any;
      if (!handingOver) return;
    }
    // A statement now would join a transaction someone else has open on this connection: keep counting in memory
    // until it ends; the hand-over then carries these counts too, and the newcomer is still waiting for it.
    if (sqlite.inTransaction()) return;
    const now = Date.now();
    handOverCounts(sqlite, id, windows.running(now), now);
    windows.clear();
    counting = 'database';
    handingOver = false;
  };
  /**
   * A timer's statements never wait for another process's write lock (which would hold the event loop for up to the
   * busy timeout): they fail at once with SQLITE_BUSY and are tried again at the next tick.
   */
  const onTimer = (run: () => void) => () => {
    try {
      sqlite.withoutWaiting(run);
    } catch {
      // Still counting where it was; the newcomer waits for the next try.
    }
  };

  return {
    inMemory: () => counting === 'memory',
    windows,
    async join() {
      if (joined) return;
      joined = true;
      seenVersion = sqlite.dataVersion();
      const giveUp = Date.now() + joinTimeoutMs;
      for (;;) {
        try {
          counting = joinCounting(sqlite, id, process.pid, liveness());
          break;
        } catch (err) {
          // Another process's write outlasted the busy timeout: try again, until the join's own time is up.
          if ((err as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() > giveUp) throw err;
        }
      }
      timers.push(
        setInterval(
          onTimer(() => {
            if (!sqlite.inTransaction()) heartbeat(sqlite, id, Date.now());
          }),
          heartbeatMs,
        ).unref(),
      );
      if (counting === 'memory') {
        timers.push(setInterval(onTimer(check), checkMs).unref());
        return;
      }
      while (otherCounters(sqlite, id, liveness()).inMemory) {
        if (Date.now() > giveUp) throw new Error(`another process on this SQLite file did not hand its rate-limit counts over within ${joinTimeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, checkMs));
      }
    },
    leave() {
      stopTimers();
      // A row left behind (the file busy at this moment) is passed over once this pid has ended.
      if (joined && !sqlite.inTransaction()) onTimer(() => leaveCounting(sqlite, id))();
      joined = false;
    },
  };
}
