import type { Kysely } from 'kysely';
import { type BrandQueueRow, brandQueueZones, findBrandQueue, upsertBrandQueue } from '../../../db/repositories/brand-queues.repo.js';
import { heldQueueSlots } from '../../../db/repositories/contents.repo.js';
import { findBrand } from '../../../db/repositories/brands.repo.js';
import type { Database } from '../../../db/schema.js';
import { brandNotFound } from '../brands/brands.service.js';
import type { Clock } from '../clock.js';
import { seesBrand } from '../permissions/authorize.js';
import type { Permission } from '../permissions/roles.js';
import type { Principal } from '../principal.js';
import { assertWorkspaceAccess } from '../workspaces/access.js';
import { recordAudit } from '../audit/record.js';
import { nextSlots, type QueueDefinition } from './queue-slots.js';
import { NEXT_SLOTS_SHOWN, type Queue, type QueueInput, queueInputSchema } from './queue.schema.js';
import { addDays, canonicalTimeZone, localOf } from './zoned-time.js';

/** The zone of a brand that has no queue yet: an empty queue has no slot, so the zone only names a default. */
const DEFAULT_TIME_ZONE = 'UTC';

/** The local time suggested for a post when the brand has no free queue slot: the next morning. */
const SUGGESTED_TIME = '09:00';

export type QueueService = ReturnType<typeof createQueueService>;

/** A suggested local date and time for a brand's next post, and where it comes from. */
export interface SuggestedTime {
  /** `YYYY-MM-DD` in the brand's zone. */
  date: string;
  /** `HH:MM` in the brand's zone. */
  time: string;
  from: 'queue' | 'tomorrow';
}

/** The zone of a brand: its queue's, else UTC. */
export function brandTimeZone(row: BrandQueueRow | undefined): string {
  return row?.timeZone ?? DEFAULT_TIME_ZONE;
}

/** A stored queue row read back (its slots were validated before they were written). */
export function storedQueue(row: BrandQueueRow): QueueDefinition {
  return { time_zone: row.timeZone, slots: queueInputSchema.shape.slots.parse(JSON.parse(row.slots)) };
}

/** Renders a queue with its next free slots after `now` (not held by a scheduled content), each as an RFC 3339 instant with the zone's offset. */
function renderQueue(brandId: string, queue: QueueDefinition, now: number, held: ReadonlySet<number> = new Set()): Queue {
  const next = nextSlots(queue, now, NEXT_SLOTS_SHOWN, held).map((instant) => {
    const local = localOf(instant, queue.time_zone);
    // Slot instants are whole minutes, so the local date and time with the offset name the instant exactly.
    return { at: `${local.date}T${local.time}:00${local.offset}`, local_date: local.date, local_time: local.time };
  });
  return { brand_id: brandId, time_zone: queue.time_zone, slots: queue.slots.map((s) => ({ days: [...s.days], time: s.time })), next_slots: next };
}

export function createQueueService(deps: { db: Kysely<Database>; clock: Clock }) {
  const { db, clock } = deps;

  async function requireBrand(principal: Principal, workspaceId: string, brandId: string, permission: Permission): Promise<{ name: string }> {
    assertWorkspaceAccess(principal, workspaceId, permission);
    const brand = seesBrand(principal, brandId) ? await findBrand(db, workspaceId, brandId) : undefined;
    if (!brand) throw brandNotFound(brandId);
    return brand;
  }

  return {
    /**
     * Replaces a brand's queue (README, Publishing queues). The zone is checked and stored in its canonical spelling; the slots are
     * stored as given (validated by `queueInputSchema`). One upsert: concurrent writers leave exactly one body.
     * @throws ServiceError `forbidden` (another workspace), `not_found` (brand), `validation_failed` (zone, time, day).
     */
    async setQueue(principal: Principal, workspaceId: string, brandId: string, input: QueueInput): Promise<Queue> {
      const brand = await requireBrand(principal, workspaceId, brandId, 'brands.manage');
      const queue: QueueDefinition = { time_zone: canonicalTimeZone(input.time_zone), slots: input.slots };
      const now = clock.now();
      // Computing the next slots first checks every time and day again with the core's own rules.
      const answer = renderQueue(brandId, queue, now, await heldQueueSlots(db, brandId, now));
      await db.transaction().execute(async (tx) => {
        await upsertBrandQueue(tx, { brandId, workspaceId, timeZone: queue.time_zone, slots: JSON.stringify(answer.slots), updatedAt: now });
        await recordAudit(tx, principal, 'brand.queue_set', { type: 'brand', id: brandId, label: brand.name }, now, { time_zone: queue.time_zone, slots: answer.slots.length });
      });
      return answer;
    },

    /**
     * Each brand's time zone (its queue's, else UTC: the zone a local time without one is read in), by brand id,
     * without computing any slot. Brands not of the workspace answer UTC, as brands without a queue.
     * @throws ServiceError `forbidden` (another workspace).
     */
    async timeZones(principal: Principal, workspaceId: string, brandIds: readonly string[]): Promise<Record<string, string>> {
      assertWorkspaceAccess(principal, workspaceId, 'brands.read');
      // Brands the credential does not see answer as brands without a queue.
      const zones = await brandQueueZones(db, workspaceId, brandIds.filter((id) => seesBrand(principal, id)));
      return Object.fromEntries(brandIds.map((id) => [id, zones.get(id) ?? DEFAULT_TIME_ZONE]));
    },

    /**
     * A sensible time to schedule each brand's next post at, by brand id: its queue's next free slot after the
     * clock's now, else tomorrow at 09:00 in the brand's zone (UTC for a brand without a queue). Brands not of the
     * workspace answer as brands without a queue.
     * @throws ServiceError `forbidden` (another workspace).
     */
    async suggestedTimes(principal: Principal, workspaceId: string, brandIds: readonly string[]): Promise<Record<string, SuggestedTime>> {
      assertWorkspaceAccess(principal, workspaceId, 'brands.read');
      const now = clock.now();
      const entries = await Promise.all(
        brandIds.map(async (brandId): Promise<[string, SuggestedTime]> => {
          const row = seesBrand(principal, brandId) ? await findBrandQueue(db, workspaceId, brandId) : undefined;
          if (row) {
            const [slot] = nextSlots(storedQueue(row), now, 1, await heldQueueSlots(db, brandId, now));
            if (slot !== undefined) {
              const local = localOf(slot, row.timeZone);
              return [brandId, { date: local.date, time: local.time, from: 'queue' }];
            }
          }
          return [brandId, { date: addDays(localOf(now, brandTimeZone(row)).date, 1), time: SUGGESTED_TIME, from: 'tomorrow' }];
        }),
      );
      return Object.fromEntries(entries);
    },

    /**
     * A brand's queue with its next free slots after the clock's now. A brand without a queue answers an empty
     * queue in UTC (no slots), so every brand has a queue to read.
     * @throws ServiceError `forbidden` (another workspace), `not_found` (brand).
     */
    async getQueue(principal: Principal, workspaceId: string, brandId: string): Promise<Queue> {
      await requireBrand(principal, workspaceId, brandId, 'brands.read');
      const row = await findBrandQueue(db, workspaceId, brandId);
      const queue: QueueDefinition = row ? storedQueue(row) : { time_zone: DEFAULT_TIME_ZONE, slots: [] };
      const now = clock.now();
      return renderQueue(brandId, queue, now, await heldQueueSlots(db, brandId, now));
    },
  };
}
