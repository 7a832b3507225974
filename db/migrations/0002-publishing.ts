import type { FrozenMigration } from './types.js';

/**
 * Brands, connections, contents, jobs (durable work rows with leases), meters, idempotency keys, uploaded
 * media, the event outbox, and the sandbox network's own record of the posts it created.
 */
export const publishing: FrozenMigration = {
  name: '0002_publishing',
  async up(db) {
    await db.schema.alterTable('workspaces').addColumn('plan', 'text', (c) => c.notNull().defaultTo('default')).execute();

    await db.schema
      .createTable('brands')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('deleted_at', 'bigint')
      .execute();
    await db.schema.createIndex('brands_workspace_idx').on('brands').columns(['workspace_id', 'created_at']).execute();

    await db.schema
      .createTable('connections')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('brand_id', 'text', (c) => c.notNull().references('brands.id').onDelete('cascade'))
      .addColumn('platform_slug', 'text', (c) => c.notNull())
      .addColumn('mode', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('status_reason', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('connections_brand_idx').on('connections').columns(['workspace_id', 'brand_id', 'platform_slug']).execute();

    await db.schema
      .createTable('contents')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('brand_id', 'text', (c) => c.notNull().references('brands.id'))
      .addColumn('content_type', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('request', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('completed_at', 'bigint')
      .execute();
    await db.schema.createIndex('contents_workspace_idx').on('contents').columns(['workspace_id', 'created_at', 'id']).execute();

    await db.schema
      .createTable('jobs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('content_id', 'text', (c) => c.notNull().references('contents.id').onDelete('cascade'))
      .addColumn('workspace_id', 'text', (c) => c.notNull())
      .addColumn('connection_id', 'text', (c) => c.notNull().references('connections.id'))
      .addColumn('platform_slug', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('error_code', 'text')
      .addColumn('error_message', 'text')
      .addColumn('previous_status', 'text')
      .addColumn('sandbox_outcome', 'text')
      .addColumn('external_container_id', 'text')
      .addColumn('external_post_id', 'text')
      .addColumn('external_post_url', 'text')
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('confirm_checks', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('confirm_misses', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('confirm_deadline', 'bigint')
      .addColumn('late_check_until', 'bigint')
      // Claimable work: active = 1, run_at due, lease free or expired.
      .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('run_at', 'bigint', (c) => c.notNull())
      .addColumn('locked_by', 'text')
      .addColumn('locked_until', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('published_at', 'bigint')
      .execute();
    await db.schema.createIndex('jobs_due_idx').on('jobs').columns(['active', 'run_at']).execute();
    await db.schema.createIndex('jobs_content_idx').on('jobs').columns(['content_id']).execute();

    await db.schema
      .createTable('meter_counters')
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('meter', 'text', (c) => c.notNull())
      // 'stock' for stock meters, the cycle key (e.g. 2026-11) for per-cycle meters.
      .addColumn('period', 'text', (c) => c.notNull())
      .addColumn('used', 'bigint', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('meter_counters_pk', ['workspace_id', 'meter', 'period'])
      .execute();

    await db.schema
      .createTable('idempotency_keys')
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('request_hash', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('outcome', 'text')
      .addColumn('locked_until', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('idempotency_keys_pk', ['workspace_id', 'key'])
      .execute();

    await db.schema
      .createTable('media')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('content_type', 'text', (c) => c.notNull())
      .addColumn('size_bytes', 'bigint', (c) => c.notNull())
      .addColumn('storage_path', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('events')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('subject_id', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('events_workspace_idx').on('events').columns(['workspace_id', 'created_at']).execute();

    // The sandbox network's side: one row per post it created. A container publishes at most once.
    await db.schema
      .createTable('sandbox_posts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('container_id', 'text', (c) => c.notNull().unique())
      .addColumn('job_id', 'text', (c) => c.notNull())
      .addColumn('connection_id', 'text', (c) => c.notNull())
      .addColumn('platform_slug', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('sandbox_containers')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('job_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
