import type { FrozenMigration } from './types.js';

/**
 * Deliveries get a "redeliver requested" mark (spec 4.4: a redeliver forces a new attempt). A redeliver sets it;
 * claiming a delivery for an attempt clears it (that attempt honours every request made before it); recording
 * an attempt's outcome leaves it alone and, when it is set, keeps the delivery pending and due. So a redeliver
 * asked while an attempt is in flight is not overwritten by that attempt's outcome: one more attempt follows.
 */
export const redeliverRequested: FrozenMigration = {
  name: '0008_redeliver_requested',
  async up(db) {
    await db.schema
      .alterTable('deliveries')
      .addColumn('redeliver_requested', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
};
