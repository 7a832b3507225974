import type { FrozenMigration } from './types.js';

/**
 * The processes counting rate limits on one SQLite file. A process alone on its file counts in memory, so an
 * authenticated read writes nothing; one that starts beside it finds it here and waits until it has handed its counts over to `rate_limits`
 * (src/web/rate-counting.ts). PostgreSQL always counts in `rate_limits` and leaves this table empty.
 */
export const rateLimitProcesses: FrozenMigration = {
  name: '0017_rate_limit_processes',
  async up(db) {
    await db.schema
      .createTable('rate_limit_processes')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('pid', 'integer', (c) => c.notNull())
      .addColumn('heartbeat_at', 'bigint', (c) => c.notNull())
      .addColumn('counting', 'text', (c) => c.notNull())
      .execute();
  },
};
