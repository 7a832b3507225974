import { z } from 'zod';
import { webhookIdSchema } from '../src/core/webhooks/webhooks.schema.js';
import { defineTool } from './define-tool.js';

export const deleteWebhookTool = defineTool({
  name: 'delete_webhook',
  title: 'Delete a webhook endpoint',
  description:
    'Deletes a webhook endpoint (webhook_id from list_webhooks) for good: no event is sent to it any more, pending deliveries to it are not sent, and its secret is gone ' +
    '(a new endpoint gets a new secret). To stop deliveries for a while instead, use update_webhook with active: false. Confirm with the user first. ' +
    'Frees its slot on the webhooks meter. Free: nothing is spent. Errors: not_found (unknown in this workspace, or already deleted).',
  // A second call changes nothing more (it answers not_found), so it is idempotent as HTTP's DELETE is.
  permission: 'webhooks.manage',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  inputSchema: z.strictObject({ webhook_id: webhookIdSchema.describe('Webhook endpoint id (wh_…), from list_webhooks.') }),
  outputSchema: z.object({ webhook_id: z.string().describe('The endpoint deleted (wh_…).'), deleted: z.literal(true) }),
  summary: (out) => `Deleted webhook endpoint ${out.webhook_id}; no more events are sent to it.`,
  async handle({ webhook_id }, { principal, services }) {
    await services.webhooks.remove(principal, principal.workspaceId, webhook_id);
    return { webhook_id, deleted: true as const };
  },
});
