import type { FrozenMigration } from './types.js';

/**
 * An index of audit entries by time alone: the retention sweep deletes the oldest entries of every workspace at
 * once, which the (workspace_id, occurred_at) index cannot find without visiting each workspace.
 */
export const audit: FrozenMigration = {
  name: '0024_audit',
  async up(db) {
    await db.schema.createIndex('audit_events_time_idx').on('audit_events').columns(['occurred_at']).execute();
  },
};
