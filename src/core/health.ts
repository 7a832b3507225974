import type { Kysely } from 'kysely';
import { ping } from '../../db/repositories/health.repo.js';
import type { Database } from '../../db/schema.js';

export type HealthService = ReturnType<typeof createHealthService>;

export function createHealthService(deps: { db: Kysely<Database> }) {
  return {
    /** True when the database answers; never throws. */
    async databaseReachable(): Promise<boolean> {
      try {
        await ping(deps.db);
        return true;
      } catch {
        return false;
      }
    },
  };
}
