import { z } from 'zod';
import { contentIdSchema, contentSchema } from '../src/core/contents/contents.schema.js';
import { idempotencyKeySchema } from '../src/core/idempotency/idempotency.schema.js';
import { dashboardLink, defineTool, listed } from './define-tool.js';

export const publishContentNowTool = defineTool({
  name: 'publish_content_now',
  title: 'Publish a draft or scheduled content now',
  description:
    'Publishes to the networks now a draft or scheduled content instead of at its time: its jobs start at once. Returns at once with the content, without waiting for the networks (follow with get_content). ' +
    'Spends now, in this cycle: 1 on criacao_de_conteudos and 1 per platform on publicacoes (get_usage), or credits with modo creditos. A draft is checked again first, as at creation. ' +
    'Never publishes twice: with the same idempotency_key a repeat returns the first answer, without one it is content_not_editable. ' +
    'Errors: content_not_editable (with status) once publishing started or finished or the content was canceled; not_found; limit_reached or a credit error (nothing changes); ' +
    'for a draft the creation checks (caption_too_long, connections_required…); idempotency_conflict; validation_failed.',
  // Destructive: the time the content was scheduled for (or its draft state) is given up for now, and a post
  // that went out cannot be called back. Idempotent: it publishes once whatever the repeats. Open world: it
  // publishes to the networks.
  permission: 'contents.publish',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  inputSchema: z.strictObject({
    content_id: contentIdSchema,
    idempotency_key: idempotencyKeySchema.optional().describe('Unique per logical request (e.g. a UUID); a repeated call with it returns the first answer instead of failing.'),
  }),
  outputSchema: contentSchema,
  summary: (c) => `Publishing post ${c.content_id} now on ${listed(c.target_platforms)}; follow with get_content.`,
  links: (c) => [dashboardLink.content(c.content_id, c.status)],
  async handle({ content_id, idempotency_key }, { principal, services }) {
    const result = await services.contents.publishNow(principal, principal.workspaceId, content_id, idempotency_key);
    if (!result.outcome.ok) throw result.outcome.error;
    return result.outcome.value;
  },
});
