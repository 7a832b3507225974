import { type Kysely, sql } from 'kysely';
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

/**
 * Reads a brand's queue and takes its row lock for the rest of the transaction (a no-op update works on both
 * dialects; on SQLite it takes the write lock), so requests taking the brand's next free slot run one after
 * another, each seeing the slots the previous ones took. Undefined when the brand has no queue.
 */
export async function lockBrandQueue(db: Kysely<Database>, workspaceId: string, brandId: string): Promise<BrandQueueRow | undefined> {
  const r = await db
    .updateTable('brand_queues')
    .set({ updated_at: sql<number>`updated_at` })
    .where('workspace_id', '=', workspaceId)
    .where('brand_id', '=', brandId)
    .returning(['brand_id', 'workspace_id', 'time_zone', 'slots', 'updated_at'])
    .executeTakeFirst();
  return r && { brandId: r.brand_id, workspaceId: r.workspace_id, timeZone: r.time_zone, slots: r.slots, updatedAt: toMillis(r.updated_at) };
}

/** The zones of those brands of the workspace that have a queue, by brand id, in one statement. */
export async function brandQueueZones(db: Kysely<Database>, workspaceId: string, brandIds: readonly string[]): Promise<Map<string, string>> {
  if (brandIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('brand_queues')
    .select(['brand_id', 'time_zone'])
    .where('workspace_id', '=', workspaceId)
    .where('brand_id', 'in', [...brandIds])
    .execute();
  return new Map(rows.map((r) => [r.brand_id, r.time_zone]));
}
