import type { FrozenMigration } from './types.js';

/**
 * People and their access. API keys gain a role (existing keys are admins, which can do what every key could
 * before), the brands they are limited to (JSON array, null for all) and who made them. A person (`users`)
 * belongs to workspaces through `memberships`, each with a role and brands; `invitations` hold a digest of their
 * one-time token; `user_sessions` are a person's dashboard sessions.
 */
export const people: FrozenMigration = {
  name: '0019_people',
  async up(db) {
    await db.schema.alterTable('api_keys').addColumn('role', 'text', (c) => c.notNull().defaultTo('admin')).execute();
    await db.schema.alterTable('api_keys').addColumn('brand_ids', 'text').execute();
    // `usr_…` or `key_…`; null for keys minted by the service itself (the first key, the CLI).
    await db.schema.alterTable('api_keys').addColumn('created_by', 'text').execute();

    await db.schema
      .createTable('users')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('name', 'text')
      // Self-describing hash string (`scrypt$…`); null for a person who signs in only by passkey or SSO.
      .addColumn('password_hash', 'text')
      .addColumn('email_verified_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    // Emails are kept lowercased by the application; one account per address.
    await db.schema.createIndex('users_email_key').on('users').column('email').unique().execute();

    await db.schema
      .createTable('memberships')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('brand_ids', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('memberships_workspace_user_key').on('memberships').columns(['workspace_id', 'user_id']).unique().execute();
    await db.schema.createIndex('memberships_user_idx').on('memberships').column('user_id').execute();

    await db.schema
      .createTable('invitations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('role', 'text', (c) => c.notNull())
      .addColumn('brand_ids', 'text')
      .addColumn('token_digest', 'text', (c) => c.notNull().unique())
      .addColumn('created_by', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('accepted_at', 'bigint')
      .addColumn('accepted_by', 'text')
      .addColumn('revoked_at', 'bigint')
      .execute();
    await db.schema.createIndex('invitations_workspace_idx').on('invitations').column('workspace_id').execute();

    // A person's dashboard sessions (sessions opened with an API key stay in dashboard_sessions). The workspace is
    // the one the person is looking at; the role is read from the membership on every request.
    await db.schema
      .createTable('user_sessions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('token_digest', 'text', (c) => c.notNull().unique())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('workspace_id', 'text')
      // password, password+totp, recovery_code, passkey, sso, invitation
      .addColumn('auth_method', 'text', (c) => c.notNull())
      .addColumn('ip', 'text')
      .addColumn('user_agent', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
      .addColumn('ends_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('user_sessions_user_idx').on('user_sessions').column('user_id').execute();
    await db.schema.createIndex('user_sessions_ends_idx').on('user_sessions').column('ends_at').execute();

    // Append-only: written in the same transaction as the change it records, removed only by the retention sweep.
    await db.schema
      .createTable('audit_events')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull())
      .addColumn('occurred_at', 'bigint', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      // user, api_key, oauth, system
      .addColumn('actor_type', 'text', (c) => c.notNull())
      .addColumn('actor_id', 'text')
      // A name copied at the time (email, key name and prefix, client name), so the entry reads after deletions.
      .addColumn('actor_label', 'text')
      .addColumn('actor_role', 'text')
      .addColumn('via', 'text', (c) => c.notNull())
      .addColumn('target_type', 'text')
      .addColumn('target_id', 'text')
      .addColumn('target_label', 'text')
      // JSON object: what changed, secrets never included.
      .addColumn('details', 'text')
      .addColumn('ip', 'text')
      .addColumn('user_agent', 'text')
      .addColumn('request_id', 'text')
      .execute();
    await db.schema.createIndex('audit_events_workspace_time_idx').on('audit_events').columns(['workspace_id', 'occurred_at', 'id']).execute();

  },
};
