import type { FrozenMigration } from './types.js';

/** Live connections' tokens, a job's progress on a network, and the state of network OAuth flows. */
export const liveNetworks: FrozenMigration = {
  name: '0006_live_networks',
  async up(db) {
    await db.schema.alterTable('connections').addColumn('tokens_sealed', 'text').execute();
    await db.schema.alterTable('connections').addColumn('token_expires_at', 'bigint').execute();
    await db.schema.alterTable('connections').addColumn('external_account_id', 'text').execute();
    await db.schema.alterTable('connections').addColumn('expiry_warned_at', 'bigint').execute();
    await db.schema.alterTable('jobs').addColumn('network_state', 'text').execute();

    await db.schema
      .createTable('network_oauth_states')
      .addColumn('state', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('brand_id', 'text', (c) => c.notNull())
      .addColumn('connection_id', 'text')
      .addColumn('platform_slug', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .execute();
  },
};
