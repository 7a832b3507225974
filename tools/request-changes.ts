import { z } from 'zod';
import { requestChangesInputSchema } from '../src/core/approvals/approvals.schema.js';
import { contentIdSchema, contentSchema } from '../src/core/contents/contents.schema.js';
import { dashboardLink, defineTool } from './define-tool.js';

export const requestChangesTool = defineTool({
  name: 'request_changes',
  title: 'Send a post back with requested changes',
  permission: 'contents.approve',
  description:
    'Sends a post pending approval back to its author with a comment saying what to change: it becomes changes_requested (nothing publishes) and the comment joins its thread. ' +
    'The author edits it (update_content) and submits it again (submit_for_approval). Only for roles that may approve. Free: no meter is used. ' +
    'Errors: forbidden, content_not_editable (not pending), validation_failed (comment empty), not_found.',
  // Not destructive: it adds a comment and moves the post back to its author, every field kept. Not idempotent: a second call is refused.
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  inputSchema: z.strictObject({ content_id: contentIdSchema, ...requestChangesInputSchema.shape }),
  outputSchema: contentSchema,
  summary: (c) => `Sent post ${c.content_id} back to its author with your comment (changes_requested).`,
  links: (c) => [dashboardLink.content(c.content_id, c.status)],
  handle: ({ content_id, comment }, { principal, services }) => services.contents.requestChanges(principal, principal.workspaceId, content_id, { comment }),
});
