import type { Kysely } from 'kysely';
import { findBrandQueue, lockBrandQueue } from '../../../db/repositories/brand-queues.repo.js';
import { type ContentRow, EDITABLE_STATUSES, findContent, heldQueueSlots } from '../../../db/repositories/contents.repo.js';
import type { Database } from '../../../db/schema.js';
import type { Clock } from '../clock.js';
import { ServiceError } from '../errors.js';
import { newTimeOrderedId } from '../ids.js';
import { type IdempotencyService, type IdempotentResult, requestHash } from '../idempotency/idempotency.service.js';
import { parseIdempotencyKey } from '../idempotency/idempotency.schema.js';
import type { MetersService } from '../meters/meters.service.js';
import { MAX_SCHEDULE_AHEAD_MS, type PublishTime, slotTime } from '../scheduling/publish-time.js';
import { nextSlots } from '../scheduling/queue-slots.js';
import { brandTimeZone, storedQueue } from '../scheduling/queue.service.js';
import type { WalletService } from '../wallet/wallet.service.js';
import { contentNotFound, invalid, notEditable } from './content-errors.js';
import type { ContentPlan, ProbeMedia } from './content-plan.js';

/** What every contents operation is built over; the container passes one set to all of them. */
export interface ContentsDeps {
  db: Kysely<Database>;
  clock: Clock;
  meters: MetersService;
  idempotency: IdempotencyService;
  probeMedia: ProbeMedia;
  wallet: WalletService;
}

/** Where a stored content's time stands, as columns. */
export interface Placement {
  status: 'draft' | 'scheduled' | 'publishing' | 'pending_approval' | 'changes_requested';
  time: PublishTime | null;
  slot: number | null;
}

/** Records an operation's outcome under its Idempotency-Key, in the transaction of the change. */
export type RecordOutcome<T> = (tx: Kysely<Database>, value: T) => Promise<void>;

/** The brand's zone: a local publish_at without a zone is read in it. */
export async function zoneOf(db: Kysely<Database>, workspaceId: string, brandId: string): Promise<string> {
  return brandTimeZone(await findBrandQueue(db, workspaceId, brandId));
}

/**
 * Takes the brand's earliest free queue slot under the queue's row lock (taken first, so requests racing for
 * the brand's next slot are served one after another); `releasing` is a slot the caller gives up at the same
 * time. The unique index on (brand_id, queue_slot) backs the lock.
 * @throws ServiceError validation_failed (`queue`) when the brand has no queue or no free slot within 365 days.
 */
export async function takeQueueSlot(tx: Kysely<Database>, workspaceId: string, brandId: string, now: number, releasing: number | null = null): Promise<Placement> {
  const row = await lockBrandQueue(tx, workspaceId, brandId);
  if (!row) throw invalid('queue', `brand ${brandId} has no queue; set its slots first with PUT /api/v1/workspaces/{wsId}/brands/${brandId}/queue`);
  const queue = storedQueue(row);
  const held = await heldQueueSlots(tx, brandId, now);
  if (releasing !== null) held.delete(releasing);
  const [slot] = nextSlots(queue, now, 1, held);
  if (slot === undefined || slot > now + MAX_SCHEDULE_AHEAD_MS) throw invalid('queue', `the queue of brand ${brandId} has no free slot in the next 365 days`);
  return { status: 'scheduled', time: slotTime(slot, queue.time_zone), slot };
}

export function jobRowsFor(plan: ContentPlan, contentId: string, workspaceId: string, now: number) {
  return plan.targets.map((t) => ({
    id: newTimeOrderedId('job_', now),
    contentId,
    workspaceId,
    connectionId: t.connection.id,
    platformSlug: t.platform,
    sandboxOutcome: t.sandboxOutcome,
    now,
  }));
}

/** Runs a change of one content under an optional Idempotency-Key (one outcome per key and body). */
export async function once<T>(
  idempotency: IdempotencyService,
  workspaceId: string,
  idempotencyKey: string | undefined,
  hash: unknown,
  work: (record?: RecordOutcome<T>) => Promise<T>,
): Promise<IdempotentResult<T>> {
  parseIdempotencyKey(idempotencyKey, 'idempotency_key');
  if (idempotencyKey === undefined) return { replayed: false, outcome: { ok: true, value: await work() } };
  return idempotency.run<T>(workspaceId, idempotencyKey, requestHash(hash), work);
}

/** The content as it stands, or the error that stops a change of it. */
export async function editable(db: Kysely<Database>, workspaceId: string, contentId: string): Promise<ContentRow> {
  const row = await findContent(db, workspaceId, contentId);
  if (!row) throw contentNotFound(contentId);
  if (!(EDITABLE_STATUSES as readonly string[]).includes(row.status)) throw notEditable(row);
  return row;
}

/**
 * Retries a change that lost the version race to another edit (never one that lost to the scheduler or a
 * cancel: those leave the content not editable, which the next read reports).
 */
export async function withVersionRetry<T>(attempt: () => Promise<T | null>): Promise<T> {
  for (let i = 0; i < 5; i += 1) {
    const result = await attempt();
    if (result !== null) return result;
  }
  throw new ServiceError('server_error', 'The content kept changing while this change was applied; retry.');
}
