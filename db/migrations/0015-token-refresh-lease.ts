import type { FrozenMigration } from './types.js';

/**
 * One renewal of a connection's tokens at a time, across processes: networks that rotate refresh tokens (X,
 * TikTok, Bluesky) refuse the second of two renewals sent with the same refresh token, which must not be taken
 * for a revoked connection. A renewal holds the connection until this instant.
 */
export const tokenRefreshLease: FrozenMigration = {
  name: '0015_token_refresh_lease',
  async up(db) {
    await db.schema.alterTable('connections').addColumn('token_refresh_until', 'bigint').execute();
  },
};
