import { createContentInputSchema, createdContentSchema } from '../src/core/contents/contents.schema.js';
import { idempotencyKeySchema } from '../src/core/idempotency/idempotency.schema.js';
import { defineTool } from './define-tool.js';

const inputSchema = createContentInputSchema.extend({
  idempotency_key: idempotencyKeySchema
    .optional()
    .describe(
      'Unique per logical post (e.g. a UUID you make up). Calling again with the same key and the same content returns the first answer (same content_id) instead of posting twice; the same key with different content fails with idempotency_conflict. Kept 24 hours.',
    ),
});

export const publishContentTool = defineTool({
  name: 'publish_content',
  title: 'Publish content',
  description:
    'Publishes one post to one or more platforms of a brand through its connections, creating one job per platform that runs in the background. ' +
    'Use preview_content first when unsure the post fits every platform, and always pass an idempotency_key so a retried call cannot post twice. ' +
    'Returns the content_id and queued jobs at once; follow with get_content until every job is published or failed. ' +
    'Costs 1 on the criacao_de_conteudos meter and 1 per target platform on publicacoes (see get_usage); nothing is stored or charged when a check fails. ' +
    'Errors: caption_too_long, platform_not_supported, media_too_large, connections_required (pick target_connections among the listed ones), ' +
    'not_found (brand or connection), limit_reached (a meter is full), idempotency_conflict, validation_failed.',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  inputSchema,
  outputSchema: createdContentSchema,
  async handle({ idempotency_key, ...content }, { principal, services }) {
    // The key is not part of the request it protects: the same content under the same key is the same request,
    // whichever door it came through.
    const result = await services.contents.create(principal, principal.workspaceId, content, idempotency_key);
    if (!result.outcome.ok) throw result.outcome.error;
    return result.outcome.value;
  },
});
