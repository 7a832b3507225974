import { z } from 'zod';
import { webhookListSchema } from '../src/core/webhooks/webhooks.schema.js';
import { defineTool } from './define-tool.js';

export const listWebhooksTool = defineTool({
  name: 'list_webhooks',
  title: 'List webhook endpoints',
  description:
    'Lists the workspace\'s webhook endpoints with their url, subscribed events and whether they are active; secrets are never shown again. ' +
    'Use it to find a webhook_id for list_deliveries, or before create_webhook to avoid registering the same address twice. Free: no meter is used.',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: z.strictObject({}),
  outputSchema: webhookListSchema,
  handle: (_input, { principal, services }) => services.webhooks.list(principal, principal.workspaceId),
});
