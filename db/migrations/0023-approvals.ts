import type { FrozenMigration } from './types.js';

/**
 * Approvals: which roles' contents wait for a person's approval (a JSON array of roles, per brand and as the
 * workspace's default; null: the default, which is contributors only), who last submitted a content (the
 * approver may not be that actor unless they could publish it themselves), and a content's review thread: its
 * comments and the approval steps (submitted, approved, changes requested), each with its actor copied.
 */
export const approvals: FrozenMigration = {
  name: '0023_approvals',
  async up(db) {
    await db.schema.alterTable('brands').addColumn('approval_roles', 'text').execute();
    await db.schema.alterTable('workspaces').addColumn('approval_roles', 'text').execute();
    // `user:usr_…`, `api_key:key_…` or `oauth:<client id>`.
    await db.schema.alterTable('contents').addColumn('submitted_by', 'text').execute();
    await db.schema
      .createTable('content_reviews')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('content_id', 'text', (c) => c.notNull().references('contents.id').onDelete('cascade'))
      // comment | submitted | approved | changes_requested
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('actor_type', 'text', (c) => c.notNull())
      .addColumn('actor_id', 'text')
      .addColumn('actor_label', 'text')
      .addColumn('actor_role', 'text')
      .addColumn('body', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('content_reviews_content').on('content_reviews').columns(['content_id', 'created_at']).execute();
  },
};
