import { type Kysely, sql } from 'kysely';
import type { Database } from '../schema.js';

/** Depth and age of the two work queues, for monitoring. */
export async function queueStats(db: Kysely<Database>, now: number) {
  const jobs = await db
    .selectFrom('jobs')
    .select([sql<number | string>`count(*)`.as('n'), sql<number | string | null>`min(run_at)`.as('oldest')])
    .where('active', '=', 1)
    .where('run_at', '<=', now)
    .where('status', 'in', ['queued', 'publishing', 'confirming'])
    .executeTakeFirst();
  const deliveries = await db
    .selectFrom('deliveries')
    .select([sql<number | string>`count(*)`.as('n'), sql<number | string | null>`min(next_attempt_at)`.as('oldest')])
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .executeTakeFirst();
  const overdue = await db
    .selectFrom('contents')
    .select(sql<number | string>`count(*)`.as('n'))
    .where('status', '=', 'scheduled')
    .where('publish_at', '<=', now)
    .executeTakeFirst();
  const age = (oldest: number | string | null | undefined) => (oldest === null || oldest === undefined ? 0 : Math.max(0, (now - Number(oldest)) / 1000));
  return {
    dueJobs: Number(jobs?.n ?? 0),
    oldestJobAgeSeconds: age(jobs?.oldest),
    pendingDeliveries: Number(deliveries?.n ?? 0),
    oldestDeliveryAgeSeconds: age(deliveries?.oldest),
    overdueScheduled: Number(overdue?.n ?? 0),
  };
}
