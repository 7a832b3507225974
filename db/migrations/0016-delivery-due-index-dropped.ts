import type { FrozenMigration } from './types.js';

/**
 * Drops the (status, next_attempt_at) index on deliveries (issue 19, bench row (d)). Since migration 0013 claims read
 * the partial index of pending deliveries by endpoint, and the queue's depth reads pending rows too, so nothing needs
 * an index of every delivery by status. Keeping it cost every record: a delivered attempt moved its entry from the
 * pending part to the delivered part, and since an event's deliveries to every endpoint are due at about the same
 * time, one endpoint's entries sat between the others'. Beside another endpoint's backlog each delivery then wrote
 * 21 % more pages; without the index, 7 % (bench/profile-deliveries.ts).
 */
export const deliveryDueIndexDropped: FrozenMigration = {
  name: '0016_delivery_due_index_dropped',
  async up(db) {
    await db.schema.dropIndex('deliveries_due_idx').ifExists().execute();
  },
};
