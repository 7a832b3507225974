import type { FrozenMigration } from './types.js';

/**
 * Networks with one server per user (Mastodon): this service registers itself as an app once per server and
 * keeps the client (its secret sealed); a connection flow remembers which server it started on.
 */
export const networkInstanceApps: FrozenMigration = {
  name: '0014_network_instance_apps',
  async up(db) {
    await db.schema
      .createTable('network_instance_apps')
      .addColumn('platform_slug', 'text', (c) => c.notNull())
      .addColumn('origin', 'text', (c) => c.notNull())
      .addColumn('redirect_uri', 'text', (c) => c.notNull())
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('client_secret_sealed', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      // One registration per server and callback address: two first connections racing keep the first one.
      .addPrimaryKeyConstraint('network_instance_apps_pk', ['platform_slug', 'origin', 'redirect_uri'])
      .execute();
    await db.schema.alterTable('network_oauth_states').addColumn('instance_origin', 'text').execute();
  },
};
