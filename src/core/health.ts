import type { Kysely } from 'kysely';
import { ping } from '../../db/repositories/health.repo.js';
import type { Database } from '../../db/schema.js';

export type HealthService = ReturnType<typeof createHealthService>;

/** Why the service is not ready, in words a load balancer's operator reads; null when it is. */
export type Unreadiness = string | null;

/**
 * Readiness for a load balancer: the database answers within `deadlineMs`, and writes are not failing.
 * @param deps.deadlineMs the probe's own bound: it does not wait the pool's or the server's longer timeouts out
 *   (a probe that hangs takes a process out no sooner than one that fails).
 * @param deps.recentWriteFailure a storage failure met recently by any write (SQLite's full disk), or null.
 */
export function createHealthService(deps: { db: Kysely<Database>; deadlineMs: number; recentWriteFailure(): Error | null }) {
  async function reachable(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), deps.deadlineMs);
    });
    try {
      // The ping left behind at the deadline ends on its own, within the pool's and the server's bounds.
      return await Promise.race([ping(deps.db).then(() => true, () => false), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    /** True when the database answers within the deadline; never throws. */
    databaseReachable: reachable,
    /** Null when ready, else why not (the database does not answer in time, or writes are failing); never throws. */
    async unreadiness(): Promise<Unreadiness> {
      if (!(await reachable())) return 'The database is not reachable.';
      const failure = deps.recentWriteFailure();
      if (failure) {
        const code = (failure as { code?: unknown }).code;
        return `The database cannot write${typeof code === 'string' ? ` (${code})` : ''}; writes are failing, see the log.`;
      }
      return null;
    },
  };
}
