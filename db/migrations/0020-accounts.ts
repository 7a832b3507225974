import type { FrozenMigration } from './types.js';

/**
 * A person's second factor and password resets. `user_totp` holds the TOTP secret sealed with SECRET_KEY (set at
 * enrolment, in force once `confirmed_at` is set) and the last time step accepted, so a code is never accepted
 * twice. Recovery codes and reset tokens are stored as SHA-256 digests only; each is used once (`used_at`).
 */
export const accounts: FrozenMigration = {
  name: '0020_accounts',
  async up(db) {
    await db.schema
      .createTable('user_totp')
      .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
      .addColumn('secret_sealed', 'text', (c) => c.notNull())
      .addColumn('confirmed_at', 'bigint')
      .addColumn('last_step', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('recovery_codes')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('code_digest', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .execute();
    await db.schema.createIndex('recovery_codes_user_digest_key').on('recovery_codes').columns(['user_id', 'code_digest']).unique().execute();

    await db.schema
      .createTable('password_resets')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('token_digest', 'text', (c) => c.notNull().unique())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('used_at', 'bigint')
      .execute();
    await db.schema.createIndex('password_resets_user_idx').on('password_resets').column('user_id').execute();
  },
};
