import type { FrozenMigration } from './types.js';

/**
 * Webhook debugging (README, Webhook debugging): each delivery attempt keeps a bounded excerpt of what the receiver answered (at
 * most 2 KB of text, control characters removed), so the person who owns the endpoint can read why it refused.
 * Attempts recorded before have none.
 */
export const attemptResponses: FrozenMigration = {
  name: '0012_attempt_responses',
  async up(db) {
    await db.schema.alterTable('delivery_attempts').addColumn('response_excerpt', 'text').execute();
  },
};
