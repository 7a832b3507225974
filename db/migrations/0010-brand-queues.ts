import type { FrozenMigration } from './types.js';

/**
 * Brand publishing queues (README, Publishing queues): one row per brand, its IANA time zone (canonical spelling) and its weekly
 * slots as JSON text (`[{days, time}]`), validated by the core before every write. The brand id is the key, so
 * concurrent writes of the same queue are one upsert each and the last one wins whole.
 */
export const brandQueues: FrozenMigration = {
  name: '0010_brand_queues',
  async up(db) {
    await db.schema
      .createTable('brand_queues')
      .addColumn('brand_id', 'text', (c) => c.primaryKey().references('brands.id').onDelete('cascade'))
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('time_zone', 'text', (c) => c.notNull())
      .addColumn('slots', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('brand_queues_workspace_idx').on('brand_queues').column('workspace_id').execute();
  },
};
