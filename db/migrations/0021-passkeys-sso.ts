import type { FrozenMigration } from './types.js';

/**
 * Passkeys and single sign-on. `passkeys` hold a person's WebAuthn credentials (public key and signature counter
 * only: the private key never leaves the authenticator). `auth_challenges` hold the one-time values a sign-in
 * ceremony needs between its two requests (a WebAuthn challenge, or an OpenID Connect state with its nonce and
 * PKCE verifier); each is consumed by deleting its row, so it serves once. `sso_identities` link an OpenID
 * provider's (issuer, subject) to a person.
 */
export const passkeysSso: FrozenMigration = {
  name: '0021_passkeys_sso',
  async up(db) {
    await db.schema
      .createTable('passkeys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      // The authenticator's credential id, base64url; an assertion names it.
      .addColumn('credential_id', 'text', (c) => c.notNull().unique())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      // COSE public key, base64url.
      .addColumn('public_key', 'text', (c) => c.notNull())
      .addColumn('counter', 'bigint', (c) => c.notNull())
      // JSON array of transport hints (usb, nfc, ble, internal, hybrid).
      .addColumn('transports', 'text')
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_used_at', 'bigint')
      .execute();
    await db.schema.createIndex('passkeys_user_idx').on('passkeys').column('user_id').execute();

    await db.schema
      .createTable('auth_challenges')
      .addColumn('id', 'text', (c) => c.primaryKey())
      // passkey_registration, passkey_sign_in, sso
      .addColumn('purpose', 'text', (c) => c.notNull())
      // The WebAuthn challenge or the OpenID state.
      .addColumn('challenge', 'text', (c) => c.notNull())
      // JSON: what the second request needs besides the challenge (nonce, PKCE verifier, where to go next).
      .addColumn('payload', 'text')
      // Set for a signed-in person's ceremony (registration): only that session may finish it.
      .addColumn('user_id', 'text')
      .addColumn('session_id', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('auth_challenges_expires_idx').on('auth_challenges').column('expires_at').execute();

    await db.schema
      .createTable('sso_identities')
      .addColumn('issuer', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('email', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('last_used_at', 'bigint')
      .addPrimaryKeyConstraint('sso_identities_pkey', ['issuer', 'subject'])
      .execute();
    await db.schema.createIndex('sso_identities_user_idx').on('sso_identities').column('user_id').execute();
  },
};
