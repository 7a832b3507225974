import { z } from 'zod';
import { pendingListQuerySchema, pendingListSchema } from '../src/core/approvals/approvals.schema.js';
import { count, dashboardLink, defineTool, MAX_LIST_LINKS } from './define-tool.js';

export const listPendingApprovalsTool = defineTool({
  name: 'list_pending_approvals',
  title: 'List posts waiting for approval',
  permission: 'contents.read',
  description:
    'Lists the posts waiting for a person\'s approval (pending_approval) in the brands this credential sees, earliest time first. approval_overdue: true marks those whose publish_at passed while waiting: they did not publish and need a new time or publish now. Read-only. Free: no meter is used.',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: z.strictObject({ limit: pendingListQuerySchema.shape.limit }),
  outputSchema: pendingListSchema,
  summary: (list) => {
    const overdue = list.data.filter((c) => c.approval_overdue).length;
    return `${count(list.data.length, 'post')} waiting for approval${overdue > 0 ? `, ${overdue} overdue` : ''}.`;
  },
  links: (list) => [dashboardLink.approvals(), ...list.data.slice(0, MAX_LIST_LINKS - 1).map((c) => dashboardLink.content(c.content_id, c.status))],
  handle: (input, { principal, services }) => services.contents.pending(principal, principal.workspaceId, input),
});
