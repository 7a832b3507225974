import type { FrozenMigration } from './types.js';

/**
 * Idempotency keys get an owner token: the random token of the request holding the claim. Every write a holder
 * makes (renewing its lease, recording its outcome, releasing the key) is conditional on it, so a request whose
 * claim was taken over can no longer touch the key, and the transaction that records its result rolls back.
 * Rows written before this migration have none; they are finished or their lease has long run out.
 */
export const idempotencyOwner: FrozenMigration = {
  name: '0009_idempotency_owner',
  async up(db) {
    await db.schema.alterTable('idempotency_keys').addColumn('owner_token', 'text').execute();
  },
};
