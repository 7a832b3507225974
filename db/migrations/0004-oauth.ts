import type { FrozenMigration } from './types.js';

/** The authorization server's storage: clients, and every other oidc-provider model keyed by (model, id). */
export const oauth: FrozenMigration = {
  name: '0004_oauth',
  async up(db) {
    await db.schema
      .createTable('oauth_clients')
      .addColumn('id', 'text', (c) => c.primaryKey())
      // Null for clients registered dynamically (RFC 7591); set for confidential clients made in a workspace.
      .addColumn('workspace_id', 'text', (c) => c.references('workspaces.id').onDelete('cascade'))
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('metadata', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('oauth_clients_workspace_idx').on('oauth_clients').columns(['workspace_id', 'created_at']).execute();

    await db.schema
      .createTable('oauth_store')
      .addColumn('model', 'text', (c) => c.notNull())
      .addColumn('id', 'text', (c) => c.notNull())
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('grant_id', 'text')
      .addColumn('uid', 'text')
      .addColumn('account_id', 'text')
      .addColumn('client_id', 'text')
      .addColumn('expires_at', 'bigint')
      .addColumn('consumed_at', 'bigint')
      .addPrimaryKeyConstraint('oauth_store_pk', ['model', 'id'])
      .execute();
    await db.schema.createIndex('oauth_store_grant_idx').on('oauth_store').column('grant_id').execute();
    await db.schema.createIndex('oauth_store_uid_idx').on('oauth_store').column('uid').execute();
    await db.schema.createIndex('oauth_store_account_idx').on('oauth_store').column('account_id').execute();
    await db.schema.createIndex('oauth_store_client_idx').on('oauth_store').column('client_id').execute();
    await db.schema.createIndex('oauth_store_expires_idx').on('oauth_store').column('expires_at').execute();
  },
};
