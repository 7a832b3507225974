import type { FrozenMigration } from './types.js';

/** Webhook endpoints, their deliveries (durable work rows) and every attempt made. */
export const webhooks: FrozenMigration = {
  name: '0003_webhooks',
  async up(db) {
    await db.schema
      .createTable('webhooks')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('enabled_events', 'text', (c) => c.notNull())
      .addColumn('active', 'integer', (c) => c.notNull())
      .addColumn('secret_sealed', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('deleted_at', 'bigint')
      .execute();
    await db.schema.createIndex('webhooks_workspace_idx').on('webhooks').columns(['workspace_id', 'created_at']).execute();

    await db.schema
      .createTable('deliveries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('event_type', 'text', (c) => c.notNull())
      // The exact bytes sent and signed.
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempt_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('manual', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'bigint')
      .addColumn('locked_by', 'text')
      .addColumn('locked_until', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('delivered_at', 'bigint')
      .execute();
    await db.schema.createIndex('deliveries_due_idx').on('deliveries').columns(['status', 'next_attempt_at']).execute();
    await db.schema.createIndex('deliveries_webhook_idx').on('deliveries').columns(['webhook_id', 'created_at', 'id']).execute();

    await db.schema
      .createTable('delivery_attempts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('delivery_id', 'text', (c) => c.notNull().references('deliveries.id').onDelete('cascade'))
      .addColumn('number', 'integer', (c) => c.notNull())
      .addColumn('manual', 'integer', (c) => c.notNull())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addColumn('http_status', 'integer')
      .addColumn('latency_ms', 'integer', (c) => c.notNull())
      .addColumn('error', 'text')
      .execute();
    await db.schema.createIndex('delivery_attempts_delivery_idx').on('delivery_attempts').columns(['delivery_id', 'number']).execute();
  },
};
