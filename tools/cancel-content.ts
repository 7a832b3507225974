import { z } from 'zod';
import { contentIdSchema, contentSchema } from '../src/core/contents/contents.schema.js';
import { idempotencyKeySchema } from '../src/core/idempotency/idempotency.schema.js';
import { dashboardLink, defineTool } from './define-tool.js';

export const cancelContentTool = defineTool({
  name: 'cancel_content',
  title: 'Cancel a draft or scheduled content',
  description:
    'Cancels a draft or scheduled content: it will never publish, its queue slot is free at once for the next queued post, and nothing is charged (scheduled posts are charged only when publishing starts). ' +
    'It cannot be undone: a canceled content cannot be edited or rescheduled; create it again with publish_content. Canceling a canceled content answers it again. ' +
    'Answers the content with status canceled. Free: no meter is used. ' +
    'Errors: content_not_editable (with the content\'s status) once publishing has started or finished, since a post already sent cannot be called back; not_found for an unknown content_id; validation_failed.',
  // Destructive: a canceled content can never be edited, rescheduled or published again (the core refuses it);
  // only a new content brings the post back. Idempotent: canceling a canceled content answers it unchanged.
  permission: 'contents.publish',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  inputSchema: z.strictObject({
    content_id: contentIdSchema,
    idempotency_key: idempotencyKeySchema.optional().describe('Unique per logical cancel (e.g. a UUID); a repeated call with it returns the first answer.'),
  }),
  outputSchema: contentSchema,
  summary: (c) => `Canceled post ${c.content_id}; it will never publish and nothing was charged for it.`,
  links: (c) => [dashboardLink.content(c.content_id, c.status)],
  async handle({ content_id, idempotency_key }, { principal, services }) {
    const result = await services.contents.cancel(principal, principal.workspaceId, content_id, idempotency_key);
    if (!result.outcome.ok) throw result.outcome.error;
    return result.outcome.value;
  },
});
