import { z } from 'zod';
import { EVENT_TYPES, WEBHOOK_EVENT_TYPES } from '../events/events.js';

/** An endpoint's id, wherever a door takes one. */
export const webhookIdSchema = z.string().describe('Webhook endpoint id (wh_…).');

/** A delivery's id, wherever a door takes one. */
export const deliveryIdSchema = z.string().describe('Delivery id (del_…).');

/** Spec 2.3, 2.5, 4.4. */

export const eventTypeSchema = z.enum(EVENT_TYPES);

/** What an endpoint may list: the spec's four, and the review's three, sent only to endpoints that list them. */
export const webhookEventTypeSchema = z.enum(WEBHOOK_EVENT_TYPES);

const enabledEvents = z
  .array(webhookEventTypeSchema)
  .min(1)
  .refine((l) => new Set(l).size === l.length, { message: 'must not repeat an event type' })
  .describe(
    'Event types sent to this endpoint (spec 6.1). Besides the spec\'s four, content.approval_requested, content.approved and content.changes_requested (approvals) are sent only to an endpoint that lists them.',
  );

export const createWebhookInputSchema = z
  .strictObject({
    url: z.url().max(2048).describe('Public HTTPS address that receives the POSTs.'),
    description: z.string().max(500).default('').describe('Free text.'),
    enabled_events: enabledEvents,
  })
  .meta({ id: 'CreateWebhookInput' });

export const updateWebhookInputSchema = z
  .strictObject({
    url: z.url().max(2048).optional().describe('New receiver address (public https); later deliveries go there.'),
    description: z.string().max(500).optional().describe('New free-text note shown with the endpoint; an empty string clears it.'),
    enabled_events: enabledEvents.optional(),
    active: z.boolean().optional().describe('false pauses deliveries to this endpoint (events are not queued for it meanwhile).'),
  })
  .meta({ id: 'UpdateWebhookInput' });

export const webhookSchema = z
  .object({
    id: z.string().describe('wh_…'),
    url: z.string(),
    description: z.string(),
    enabled_events: z.array(webhookEventTypeSchema),
    active: z.boolean(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'Webhook' });

export const createdWebhookSchema = webhookSchema
  .extend({ secret: z.string().describe('whsec_… — the HMAC key; returned only in this response.') })
  .meta({ id: 'CreatedWebhook' });

export const webhookListSchema = z.object({ data: z.array(webhookSchema) }).meta({ id: 'WebhookList' });

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'dead'] as const;

export const deliveryAttemptSchema = z.object({
  number: z.number().int().describe('1 for the first attempt.'),
  at: z.iso.datetime(),
  manual: z.boolean().describe('Made by a redeliver request.'),
  http_status: z.number().int().nullable().describe('Status the receiver answered; null when it did not answer.'),
  latency_ms: z.number().int(),
  error: z.string().nullable().describe('What went wrong, in our words (never the receiver\'s body).'),
});

export const deliverySchema = z
  .object({
    id: z.string().describe('del_… — stays the same across retries and redeliveries: receivers de-duplicate on it (or on event_id).'),
    webhook_id: z.string(),
    event_id: z.string(),
    event_type: webhookEventTypeSchema,
    status: z
      .enum(DELIVERY_STATUSES)
      .describe('pending: an attempt is due or scheduled; delivered: a 2xx arrived; failed: stopped by a 4xx other than 408/429; dead: 6 attempts failed (dead letter).'),
    attempt_count: z.number().int(),
    next_attempt_at: z.iso.datetime().nullable(),
    created_at: z.iso.datetime(),
    delivered_at: z.iso.datetime().nullable(),
    attempts: z.array(deliveryAttemptSchema),
    test: z
      .boolean()
      .describe('true for a test event sent with POST …/webhooks/{whId}/test: its body carries `"test": true` and placeholder ids that name nothing real.'),
  })
  .meta({ id: 'Delivery' });

export const sendTestEventInputSchema = z
  .strictObject({
    event_type: eventTypeSchema
      .optional()
      .describe("The event type the test payload imitates; by default the endpoint's first enabled event type."),
  })
  .meta({ id: 'SendTestEventInput' });

export const deliveryListQuerySchema = z.strictObject({
  status: z
    .enum(DELIVERY_STATUSES)
    .optional()
    .describe('Filter. `failed` returns every delivery that will not be retried automatically: failed (stopped by a 4xx) and dead.'),
  limit: z.coerce.number().int().min(1).max(100).default(20).describe('Deliveries per page, 1 to 100.'),
  cursor: z.string().max(200).optional().describe('next_cursor of the previous page.'),
});

export const deliveryListSchema = z.object({ data: z.array(deliverySchema), next_cursor: z.string().nullable() }).meta({ id: 'DeliveryList' });

export const verifyInputSchema = z
  .strictObject({
    secret: z.string().min(1).max(200).describe('The endpoint\'s signing secret (whsec_…), as shown when the endpoint was created.'),
    signature_header: z.string().max(200).describe('Value of Service-Signature: sha256=<hex>.'),
    payload: z.string().max(1_000_000).describe('The signed string: {timestamp}.{raw body}.'),
    tolerance_seconds: z
      .number()
      .int()
      .min(0)
      .max(86_400 * 365)
      .describe('Largest accepted difference, in seconds, between the timestamp in the payload and now; 300 (5 minutes) is the value receivers typically use.'),
  })
  .meta({ id: 'VerifyWebhookInput' });

export const verifyResultSchema = z
  .object({
    valid: z.boolean(),
    checks: z.object({ signature_format: z.boolean(), timestamp_within_tolerance: z.boolean(), hmac_matches: z.boolean() }),
    reason: z.string().nullable().describe('null when valid; otherwise starts with the name of the first failed check.'),
  })
  .meta({ id: 'VerifyWebhookResult' });

export type CreateWebhookInput = z.infer<typeof createWebhookInputSchema>;
export type UpdateWebhookInput = z.infer<typeof updateWebhookInputSchema>;
export type Webhook = z.infer<typeof webhookSchema>;
export type WebhookList = z.infer<typeof webhookListSchema>;
export type CreatedWebhook = z.infer<typeof createdWebhookSchema>;
export type Delivery = z.infer<typeof deliverySchema>;
export type DeliveryListQuery = z.infer<typeof deliveryListQuerySchema>;
export type SendTestEventInput = z.infer<typeof sendTestEventInputSchema>;

/**
 * A delivery as its endpoint's owner reads it in the dashboard: the exact body that was signed and each attempt's
 * bounded excerpt of the receiver's answer. Not a REST or MCP shape: the excerpt is the receiver's text.
 */
export type DeliveryDetail = Omit<Delivery, 'attempts'> & {
  request_body: string;
  attempts: (Delivery['attempts'][number] & { response_excerpt: string | null })[];
};
