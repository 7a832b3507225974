import type { FrozenMigration } from './types.js';

/**
 * Drops the (status, next_attempt_at) index on deliveries. Claims read the partial index
 * of pending deliveries by endpoint (migration 0013), and so does the queue's depth: nothing needs an index of every
 * delivery by status. Keeping it cost every record: a delivered attempt moved its entry from the pending part to
 * the delivered part, and since an event's deliveries to every endpoint fall due together, one endpoint's entries
 * sat between the others'. Beside another endpoint's backlog each delivery wrote 17 % more pages than alone; without
 * the index, 5 % (bench/profile-deliveries.ts, 20,000 deliveries).
 */
export const deliveryDueIndexDropped: FrozenMigration = {
  name: '0016_delivery_due_index_dropped',
  async up(db) {
    await db.schema.dropIndex('deliveries_due_idx').ifExists().execute();
  },
};
