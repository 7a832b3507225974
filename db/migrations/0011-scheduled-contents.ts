import { sql } from 'kysely';
import type { FrozenMigration } from './types.js';

/**
 * Scheduled contents and drafts (README, Scheduling). A content gains its publication instant (`publish_at`, UTC ms), the
 * IANA zone and the local wall time it was meant for, the queue slot it holds (unique per brand, so two requests
 * racing for a brand's next slot cannot both hold it), the validated request as given (edits merge into it) and a
 * version that every edit bumps (an edit conditional on the version it read cannot overwrite another).
 *
 * Contents written before have `publish_at` = their creation instant: they were published at once.
 */
export const scheduledContents: FrozenMigration = {
  name: '0011_scheduled_contents',
  async up(db) {
    await db.schema.alterTable('contents').addColumn('publish_at', 'bigint').execute();
    await db.schema.alterTable('contents').addColumn('time_zone', 'text').execute();
    await db.schema.alterTable('contents').addColumn('local_publish_at', 'text').execute();
    await db.schema.alterTable('contents').addColumn('queue_slot', 'bigint').execute();
    await db.schema.alterTable('contents').addColumn('input', 'text').execute();
    await db.schema.alterTable('contents').addColumn('version', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    await sql`update contents set publish_at = created_at`.execute(db);
    // The scheduler's scan: the earliest due scheduled contents.
    await db.schema.createIndex('contents_due_idx').on('contents').columns(['status', 'publish_at', 'id']).execute();
    // The calendar feed: a workspace's contents by publication instant, with or without a status.
    await db.schema.createIndex('contents_calendar_idx').on('contents').columns(['workspace_id', 'publish_at', 'id']).execute();
    await db.schema.createIndex('contents_calendar_status_idx').on('contents').columns(['workspace_id', 'status', 'publish_at', 'id']).execute();
    // NULLs are distinct in a unique index on both databases: only held slots collide.
    await db.schema.createIndex('contents_queue_slot_uq').on('contents').columns(['brand_id', 'queue_slot']).unique().execute();
  },
};
