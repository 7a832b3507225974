import { z } from 'zod';
import { contentIdSchema, contentSchema } from '../src/core/contents/contents.schema.js';
import { dashboardLink, defineTool, PENDING_APPROVAL_WORDS } from './define-tool.js';

export const submitForApprovalTool = defineTool({
  name: 'submit_for_approval',
  title: 'Submit a draft for approval',
  permission: 'contents.draft',
  description:
    'Submits a draft (or a post sent back with changes requested, after editing it with update_content) for a person to approve: it becomes pending_approval and keeps its publish_at. ' +
    'Nothing is published or charged until someone approves it. Submitting a post already pending answers it unchanged. Free: no meter is used. ' +
    'Errors: content_not_editable (the post is scheduled, publishing or finished), not_found, forbidden (the role may not draft on this brand).',
  // Not destructive: it moves the post into review and keeps every field; idempotent: submitting twice changes nothing more.
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: z.strictObject({ content_id: contentIdSchema }),
  outputSchema: contentSchema,
  summary: (c) => `Submitted post ${c.content_id} for approval. ${PENDING_APPROVAL_WORDS}`,
  links: (c) => [dashboardLink.content(c.content_id, c.status), dashboardLink.approvals()],
  handle: ({ content_id }, { principal, services }) => services.contents.submit(principal, principal.workspaceId, content_id),
});
