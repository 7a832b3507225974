import { z } from 'zod';
import { approveInputSchema } from '../src/core/approvals/approvals.schema.js';
import { contentIdSchema, contentSchema } from '../src/core/contents/contents.schema.js';
import { count, dashboardLink, defineTool, whenOf } from './define-tool.js';

const inputSchema = z.strictObject({ content_id: contentIdSchema, ...approveInputSchema.shape });

export const approveContentTool = defineTool({
  name: 'approve_content',
  title: 'Approve a post waiting for approval',
  permission: 'contents.approve',
  description:
    'Approves a post pending approval, as the person this credential acts for. Publishes to the networks: at its publish_at (or the publish_at given), or now with publish_now: true (or when it never had a time). ' +
    'Returns at once with the post (content_id; follow it with get_content). Spends like any post when it starts publishing: 1 on criacao_de_conteudos and 1 per platform on publicacoes. A post whose time passed (approval_overdue) needs publish_now or a new publish_at. ' +
    'Only for roles that may approve (owner, admin, editor, client); nobody approves a post they submitted unless they could publish it without approval. Approve only when the user asked you to. ' +
    'Errors: forbidden, content_not_editable (not pending, or changed meanwhile: read it again), validation_failed (publish_at), limit_reached, not_found.',
  // Open world: approving publishes to the networks. Not idempotent: a second call is refused (the post is no longer pending).
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  inputSchema,
  outputSchema: contentSchema,
  summary: (c) =>
    c.status === 'scheduled'
      ? `Approved post ${c.content_id}; scheduled for ${whenOf(c) ?? 'its time'} (${count(c.jobs.length, 'job')}).`
      : `Approved post ${c.content_id}; publishing now (${count(c.jobs.length, 'job')}).`,
  links: (c) => [dashboardLink.content(c.content_id, c.status)],
  handle: ({ content_id, publish_at, time_zone, publish_now }, { principal, services }) =>
    services.contents.approve(principal, principal.workspaceId, content_id, { publish_at, time_zone, publish_now }),
});
