import { deliveryListQuerySchema, deliveryListSchema, webhookIdSchema } from '../src/core/webhooks/webhooks.schema.js';
import { count, dashboardLink, defineTool, MAX_LIST_LINKS, tally } from './define-tool.js';

const inputSchema = deliveryListQuerySchema.extend({
  webhook_id: webhookIdSchema.describe('The endpoint whose deliveries to list (wh_..., from list_webhooks).'),
});

export const listDeliveriesTool = defineTool({
  name: 'list_deliveries',
  title: 'List webhook deliveries',
  description:
    'Lists the deliveries of one webhook endpoint, newest first, with every attempt (time, HTTP status the receiver answered, latency, what went wrong). ' +
    'status "failed" returns every delivery that will not be retried automatically (stopped by a 4xx, or dead after 6 attempts). ' +
    'Use it to diagnose a receiver, then redeliver_delivery once it is fixed. Paginated like list_contents (limit, cursor, next_cursor). ' +
    'Free: no meter is used. Errors: not_found (webhook), validation_failed (bad cursor).',
  permission: 'webhooks.read',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema,
  outputSchema: deliveryListSchema,
  summary: (page) =>
    `${count(page.data.length, 'delivery', 'deliveries')} on this page${page.data.length > 0 ? ` (${tally(page.data.map((d) => d.status))})` : ''}${page.next_cursor !== null ? '; more with next_cursor' : ''}.`,
  links: (page) => page.data.slice(0, MAX_LIST_LINKS).map((d) => dashboardLink.delivery(d.id, d.event_type)),
  handle: ({ webhook_id, ...query }, { principal, services }) => services.webhooks.deliveries(principal, principal.workspaceId, webhook_id, query),
});
