import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { toMillis } from './rows.js';

export interface BrandQueueRow {
  brandId: string;
  workspaceId: string;
  timeZone: string;
  /** JSON text of the slots, as the core validated and serialized them. */
  slots: string;
  updatedAt: number;
}

/**
 * Writes a brand's queue whole: one statement, so concurrent writers of the same brand each replace the row
 * atomically and the stored queue is always exactly one writer's.
 */
export async function upsertBrandQueue(db: Kysely<Database>, row: BrandQueueRow): Promise<void> {
  await db
    .insertInto('brand_queues')
    .values({ brand_id: row.brandId, workspace_id: row.workspaceId, time_zone: row.timeZone, slots: row.slots, updated_at: row.updatedAt })
    .onConflict((oc) => oc.column('brand_id').doUpdateSet({ time_zone: row.timeZone, slots: row.slots, updated_at: row.updatedAt }))
    .execute();
}

/** The queue of a brand of the workspace, if one was set. */
export async function findBrandQueue(db: Kysely<Database>, workspaceId: string, brandId: string): Promise<BrandQueueRow | undefined> {
  const r = await db
    .selectFrom('brand_queues')
    .select(['brand_id', 'workspace_id', 'time_zone', 'slots', 'updated_at'])
    .where('workspace_id', '=', workspaceId)
    .where('brand_id', '=', brandId)
    .executeTakeFirst();
  return r && { brandId: r.brand_id, workspaceId: r.workspace_id, timeZone: r.time_zone, slots: r.slots, updatedAt: toMillis(r.updated_at) };
}
