import type { FrozenMigration } from './types.js';

/** Credit batches (lotes), the append-only ledger, and what each credit-paid job cost. */
export const wallet: FrozenMigration = {
  name: '0005_wallet',
  async up(db) {
    await db.schema
      .createTable('credit_batches')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('amount', 'bigint', (c) => c.notNull())
      .addColumn('remaining', 'bigint', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      // The payment provider's event id (or another outside reference): a batch is created once per reference.
      .addColumn('external_ref', 'text', (c) => c.unique())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint')
      .addColumn('expired_at', 'bigint')
      .execute();
    await db.schema.createIndex('credit_batches_workspace_idx').on('credit_batches').columns(['workspace_id', 'expires_at']).execute();

    await db.schema
      .createTable('credit_ledger')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id').onDelete('cascade'))
      .addColumn('batch_id', 'text', (c) => c.notNull().references('credit_batches.id'))
      .addColumn('kind', 'text', (c) => c.notNull())
      // Signed: grants and refunds add, spends and expiries subtract.
      .addColumn('amount', 'bigint', (c) => c.notNull())
      .addColumn('operation', 'text')
      .addColumn('reference', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('credit_ledger_workspace_idx').on('credit_ledger').columns(['workspace_id', 'created_at', 'id']).execute();

    await db.schema.alterTable('jobs').addColumn('credit_batch_id', 'text').execute();
    await db.schema.alterTable('jobs').addColumn('credit_cost', 'bigint').execute();
  },
};
