import { createdWebhookSchema, createWebhookInputSchema } from '../src/core/webhooks/webhooks.schema.js';
import { dashboardLink, defineTool, listed } from './define-tool.js';

export const createWebhookTool = defineTool({
  name: 'create_webhook',
  title: 'Register a webhook endpoint',
  description:
    'Registers a public HTTPS address that will receive signed POSTs for the chosen events (content.published, content.partial, content.failed, connection.expired). ' +
    'The answer holds the signing secret (whsec_...) exactly once: give it to the user to store, it cannot be read again. ' +
    'Each call creates a new endpoint, so check list_webhooks first to avoid duplicates. Returns at once with the endpoint id; test it with send_webhook_test. Spends 1 on the webhooks stock meter while the endpoint exists. ' +
    'Errors: validation_failed (the url is not public HTTPS, or an event type is unknown), limit_reached (webhooks meter full).',
  // Open world: it points the workspace's events at an outside receiver.
  permission: 'webhooks.manage',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  inputSchema: createWebhookInputSchema,
  outputSchema: createdWebhookSchema,
  // The secret stays in the JSON only: a summary is read aloud and logged by clients more readily.
  summary: (w) => `Registered webhook ${w.id} sending ${listed(w.enabled_events)} to ${w.url}; its secret is in this answer only, give it to the user to store.`,
  links: (w) => [dashboardLink.webhook(w.id, w.url)],
  handle: (input, { principal, services }) => services.webhooks.create(principal, principal.workspaceId, input),
});
