import type { FrozenMigration } from './types.js';

/** Web dashboard sessions: a digest of the cookie value, the API key that signed in, and the two deadlines. */
export const dashboard: FrozenMigration = {
  name: '0007_dashboard',
  async up(db) {
    await db.schema
      .createTable('dashboard_sessions')
      .addColumn('token_digest', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('key_id', 'text', (c) => c.notNull().references('api_keys.id').onDelete('cascade'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
      // The end of the session whatever its activity (created_at + the maximum length).
      .addColumn('ends_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('dashboard_sessions_key_idx').on('dashboard_sessions').column('key_id').execute();
    await db.schema.createIndex('dashboard_sessions_ends_idx').on('dashboard_sessions').column('ends_at').execute();
  },
};
