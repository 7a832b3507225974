import { updateWebhookInputSchema, webhookIdSchema, webhookSchema } from '../src/core/webhooks/webhooks.schema.js';
import { dashboardLink, defineTool, listed } from './define-tool.js';

export const updateWebhookTool = defineTool({
  name: 'update_webhook',
  title: 'Update a webhook endpoint',
  description:
    'Changes a webhook endpoint (webhook_id from list_webhooks): send only what changes among url (public HTTPS), description, enabled_events and active ' +
    '(false pauses deliveries; events are not queued for it meanwhile, true resumes). The signing secret stays the same. Answers the endpoint as stored. ' +
    'Free: no meter is used. Errors: not_found (webhook unknown in this workspace), validation_failed (the url is not public HTTPS, an event type is unknown or repeated).',
  // Destructive: the fields sent overwrite the stored ones (a new url leaves the old receiver without events).
  // Idempotent: the same fields twice are one change. Open world: its url points the workspace's events at an
  // outside receiver, as create_webhook does.
  permission: 'webhooks.manage',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  inputSchema: updateWebhookInputSchema.extend({ webhook_id: webhookIdSchema.describe('Webhook endpoint id (wh_…), from list_webhooks.') }),
  outputSchema: webhookSchema,
  summary: (w) =>
    w.active ? `Webhook ${w.id} sends ${listed(w.enabled_events)} to ${w.url}.` : `Webhook ${w.id} is paused; once resumed it sends ${listed(w.enabled_events)} to ${w.url}.`,
  links: (w) => [dashboardLink.webhook(w.id, w.url)],
  handle: ({ webhook_id, ...input }, { principal, services }) => services.webhooks.update(principal, principal.workspaceId, webhook_id, input),
});
