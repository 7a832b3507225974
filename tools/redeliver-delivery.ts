import { z } from 'zod';
import { deliveryIdSchema, deliverySchema } from '../src/core/webhooks/webhooks.schema.js';
import { dashboardLink, defineTool } from './define-tool.js';

export const redeliverDeliveryTool = defineTool({
  name: 'redeliver_delivery',
  title: 'Redeliver a webhook event',
  description:
    'Queues a new attempt now for one delivery, whatever its status (above all a dead or failed one, after the receiver was fixed), keeping the same delivery id ' +
    'so the receiver can de-duplicate. The attempt itself happens within seconds; call list_deliveries to see its result. Each call sends the event again. ' +
    'Free: no meter is used. Errors: not_found when the delivery is unknown in this workspace.',
  permission: 'webhooks.manage',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  inputSchema: z.strictObject({ delivery_id: deliveryIdSchema.describe('Delivery id (del_…), from list_deliveries.') }),
  outputSchema: deliverySchema,
  summary: (d) => `Queued a new attempt of delivery ${d.id} (${d.event_type}, ${d.attempt_count} made so far); read its result with list_deliveries.`,
  links: (d) => [dashboardLink.delivery(d.id, d.event_type)],
  handle: ({ delivery_id }, { principal, services }) => services.webhooks.redeliver(principal, principal.workspaceId, delivery_id),
});
