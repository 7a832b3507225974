import type { FrozenMigration } from './types.js';

/**
 * A published job's notice: what the network said about the post that its author should know although it went
 * out (a video the network keeps private, for one). Null for almost every job.
 */
export const jobNotice: FrozenMigration = {
  name: '0018_job_notice',
  async up(db) {
    await db.schema.alterTable('jobs').addColumn('notice', 'text').execute();
  },
};
