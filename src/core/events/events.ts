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

/**
 * The review's events (README, Approvals). Ours, not the spec's: an endpoint receives them only when its
 * `enabled_events` names them, so an endpoint made for the spec's four never sees them.
 */
export const APPROVAL_EVENT_TYPES = ['content.approval_requested', 'content.approved', 'content.changes_requested'] as const;
export type ApprovalEventType = (typeof APPROVAL_EVENT_TYPES)[number];

/** Every type an endpoint may list in `enabled_events`. */
export const WEBHOOK_EVENT_TYPES = [...EVENT_TYPES, ...APPROVAL_EVENT_TYPES] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

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
  args: { id: string; workspaceId: string; type: WebhookEventType; subjectId: string; payload: object; now: number },
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

/** The body of a review event: the content as it stands after the step, and who took it. */
export interface ApprovalEventPayload {
  id: string;
  type: ApprovalEventType;
  created_at: string;
  data: {
    content_id: string;
    workspace_id: string;
    brand_id: string;
    status: string;
    publish_at: string | null;
    actor: { type: string; id: string | null; label: string | null; role: string | null };
    comment: string | null;
  };
}

/**
 * Records a review step (submitted, approved, changes requested) in the outbox, in the transaction of the step;
 * delivered only to endpoints that list its type.
 */
export async function recordApprovalEvent(
  tx: Kysely<Database>,
  args: {
    type: ApprovalEventType;
    content: { id: string; workspaceId: string; brandId: string; status: string; publishAt: number | null };
    actor: ApprovalEventPayload['data']['actor'];
    comment: string | null;
    now: number;
  },
): Promise<void> {
  const c = args.content;
  const payload: ApprovalEventPayload = {
    id: newId('evt_'),
    type: args.type,
    created_at: toIso(args.now),
    data: {
      content_id: c.id,
      workspace_id: c.workspaceId,
      brand_id: c.brandId,
      status: c.status,
      publish_at: c.publishAt === null ? null : toIso(c.publishAt),
      actor: args.actor,
      comment: args.comment,
    },
  };
  await appendEvent(tx, { id: payload.id, workspaceId: c.workspaceId, type: args.type, subjectId: c.id, payload, now: args.now });
}
