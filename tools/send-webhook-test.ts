import { deliverySchema, sendTestEventInputSchema, webhookIdSchema } from '../src/core/webhooks/webhooks.schema.js';
import { dashboardLink, defineTool } from './define-tool.js';

export const sendWebhookTestTool = defineTool({
  name: 'send_webhook_test',
  title: 'Send a test event to a webhook endpoint',
  description:
    'Queues one signed test delivery to a webhook endpoint through the normal path (same headers, signature, retries and redeliver as real events). ' +
    'The body has the shape of event_type (default: the endpoint\'s first enabled type), carries "test": true and placeholder ids (test_…) that name nothing real. ' +
    'Returns at once with the queued delivery (test: true); the attempt follows within seconds: read its result with list_deliveries. Each call sends a new event. ' +
    'Use it to check a receiver and its signature check. Free: nothing is counted on the plan. Errors: not_found (webhook unknown in this workspace), validation_failed (unknown event_type).',
  permission: 'webhooks.manage',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  inputSchema: sendTestEventInputSchema.extend({ webhook_id: webhookIdSchema.describe('Webhook endpoint id (wh_…), from list_webhooks.') }),
  outputSchema: deliverySchema,
  summary: (d) => `Queued test delivery ${d.id} (${d.event_type}) to webhook ${d.webhook_id}; its attempt follows within seconds (list_deliveries).`,
  links: (d) => [dashboardLink.delivery(d.id, d.event_type), dashboardLink.webhook(d.webhook_id, d.webhook_id)],
  handle: ({ webhook_id, ...input }, { principal, services }) => services.webhooks.sendTest(principal, principal.workspaceId, webhook_id, input),
});
