import { createdWebhookSchema, createWebhookInputSchema } from '../src/core/webhooks/webhooks.schema.js';
import { defineTool } from './define-tool.js';

export const createWebhookTool = defineTool({
  name: 'create_webhook',
  title: 'Register a webhook endpoint',
  description:
    'Registers a public HTTPS address that will receive signed POSTs for the chosen events (content.published, content.partial, content.failed, connection.expired). ' +
    'The answer holds the signing secret (whsec_...) exactly once: give it to the user to store, it cannot be read again. ' +
    'Each call creates a new endpoint, so check list_webhooks first to avoid duplicates. Costs 1 on the webhooks stock meter while the endpoint exists. ' +
    'Errors: validation_failed (the url is not public HTTPS, or an event type is unknown), limit_reached (webhooks meter full).',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  inputSchema: createWebhookInputSchema,
  outputSchema: createdWebhookSchema,
  handle: (input, { principal, services }) => services.webhooks.create(principal, principal.workspaceId, input),
});
