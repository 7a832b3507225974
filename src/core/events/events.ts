import type { Kysely } from 'kysely';
import { insertDeliveries } from '../../../db/repositories/deliveries.repo.js';
import { insertEvent } from '../../../db/repositories/events.repo.js';
import { subscribedWebhooks } from '../../../db/repositories/webhooks.repo.js';
import type { JobRow } from '../../../db/repositories/jobs.repo.js';
import type { Database } from '../../../db/schema.js';
import { toIso } from '../clock.js';
import { newId, newTimeOrderedId } from '../ids.js';

/** Spec 6.1. */
export const EVENT_TYPES = ['content.published', 'content.partial', 'content.failed', 'connection.expired'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface ContentEventPayload {
  id: string;
  type: Extract<EventType, `content.${string}`>;
  created_at: string;
  data: {
    content_id: string;
    workspace_id: string;
    jobs: { job_id: string; platform_slug: string; status: string; external_post_url: string | null; error_code: string | null }[];
  };
  corrected?: true;
  previous_status?: string;
}

/**
 * The outbox (spec 6.3, ARCHITECTURE 6): the event row and one delivery per subscribed active endpoint, written
 * in the caller's transaction. The body stored on each delivery is the exact text that will be signed and sent.
 */
async function appendEvent(
  tx: Kysely<Database>,
  args: { id: string; workspaceId: string; type: EventType; subjectId: string; payload: object; now: number },
): Promise<void> {
  const body = JSON.stringify(args.payload);
  await insertEvent(tx, { id: args.id, workspaceId: args.workspaceId, type: args.type, subjectId: args.subjectId, payload: body, createdAt: args.now });
  const endpoints = await subscribedWebhooks(tx, args.workspaceId, args.type);
  await insertDeliveries(
    tx,
    endpoints.map((w) => ({ id: newTimeOrderedId('del_', args.now), workspaceId: args.workspaceId, webhookId: w.id, eventId: args.id, eventType: args.type, body, now: args.now })),
  );
}

/**
 * Records a content outcome in the outbox (spec 2.4, 6.2). Must run in the transaction that changed the
 * content's status, so the event exists exactly when the change does.
 */
export async function recordContentEvent(
  tx: Kysely<Database>,
  args: { workspaceId: string; contentId: string; outcome: 'published' | 'partial' | 'failed'; jobs: JobRow[]; previousStatus: string | null; now: number },
): Promise<ContentEventPayload> {
  const payload: ContentEventPayload = {
    id: newId('evt_'),
    type: `content.${args.outcome}`,
    created_at: toIso(args.now),
    data: {
      content_id: args.contentId,
      workspace_id: args.workspaceId,
      jobs: args.jobs.map((j) => ({
        job_id: j.id,
        platform_slug: j.platformSlug,
        status: j.status,
        external_post_url: j.externalPostUrl,
        error_code: j.errorCode,
      })),
    },
    ...(args.previousStatus === null ? {} : { corrected: true as const, previous_status: args.previousStatus }),
  };
  await appendEvent(tx, { id: payload.id, workspaceId: args.workspaceId, type: payload.type, subjectId: args.contentId, payload, now: args.now });
  return payload;
}

/** Records `connection.expired` (spec 6.1); the caller guarantees once per expiry. */
export async function recordConnectionExpired(
  tx: Kysely<Database>,
  args: { workspaceId: string; connectionId: string; brandId: string; platformSlug: string; reason: string; now: number },
): Promise<void> {
  const payload = {
    id: newId('evt_'),
    type: 'connection.expired' as const,
    created_at: toIso(args.now),
    data: { workspace_id: args.workspaceId, connection_id: args.connectionId, brand_id: args.brandId, platform_slug: args.platformSlug, reason: args.reason },
  };
  await appendEvent(tx, { id: payload.id, workspaceId: args.workspaceId, type: payload.type, subjectId: args.connectionId, payload, now: args.now });
}
