import { sql } from 'kysely';
import type { FrozenMigration } from './types.js';

/**
 * Deliveries are claimed endpoint by endpoint: an index of pending deliveries by endpoint and due time,
 * so a claim reads only the endpoints that have room and never walks the backlog of a receiver already at its
 * concurrency cap. Partial (pending rows only): delivered history does not grow it.
 */
export const deliveryEndpointDue: FrozenMigration = {
  name: '0013_delivery_endpoint_due',
  async up(db) {
    await db.schema
      .createIndex('deliveries_endpoint_due_idx')
      .on('deliveries')
      .columns(['webhook_id', 'next_attempt_at'])
      .where(sql.ref('status'), '=', 'pending')
      .execute();
  },
};
