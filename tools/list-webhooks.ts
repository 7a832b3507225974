import { z } from 'zod';
import { webhookListSchema } from '../src/core/webhooks/webhooks.schema.js';
import { count, dashboardLink, defineTool, MAX_LIST_LINKS } from './define-tool.js';

export const listWebhooksTool = defineTool({
  name: 'list_webhooks',
  title: 'List webhook endpoints',
  description:
    'Lists the workspace\'s webhook endpoints with their url, subscribed events and whether they are active; secrets are never shown again. ' +
    'Use it to find a webhook_id for list_deliveries, or before create_webhook to avoid registering the same address twice. Free: no meter is used.',
  permission: 'webhooks.read',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: z.strictObject({}),
  outputSchema: webhookListSchema,
  summary(list) {
    const paused = list.data.filter((w) => !w.active).length;
    return list.data.length === 0 ? 'No webhook endpoint yet.' : `${count(list.data.length, 'webhook endpoint')}${paused > 0 ? `, ${paused} paused` : ''}.`;
  },
  links: (list) => list.data.slice(0, MAX_LIST_LINKS).map((w) => dashboardLink.webhook(w.id, w.url)),
  handle: (_input, { principal, services }) => services.webhooks.list(principal, principal.workspaceId),
});
