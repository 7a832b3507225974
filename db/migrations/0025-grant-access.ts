import type { FrozenMigration } from './types.js';

/**
 * What an OAuth grant gives its client, beside oidc-provider's own grant (which only knows scopes): the role and
 * brands the person or key granted, and who approved. Keyed by the provider's grant id; the approver is also in
 * the grant's account id (`ws:key_…` or `ws:usr_…`), repeated here so the connected-apps list reads one table.
 * Grants approved before this table existed have no row and act with their key's access, as they always did.
 */
export const grantAccess: FrozenMigration = {
  name: '0025_grant_access',
  async up(db) {
    await db.schema
      .createTable('oauth_grant_access')
      .addColumn('grant_id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull())
      .addColumn('client_id', 'text', (c) => c.notNull())
      // user or api_key
      .addColumn('approver_type', 'text', (c) => c.notNull())
      .addColumn('approver_id', 'text', (c) => c.notNull())
      // The approver's email or key name, copied when the grant was approved.
      .addColumn('approver_label', 'text')
      .addColumn('role', 'text', (c) => c.notNull())
      // JSON array of brand ids; null for every brand the approver has.
      .addColumn('brand_ids', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('oauth_grant_access_workspace_idx').on('oauth_grant_access').columns(['workspace_id', 'client_id']).execute();
  },
};
