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
  title: 'Publish or schedule content',
  description:
    'Publishes one post to one or more platforms of a brand through its connections, now or later, creating one job per platform that runs in the background. ' +
    'Timing, at most one of: nothing (publish now; status publishing), publish_at (status scheduled), queue: true (the brand\'s next free queue slot, see get_queue; status scheduled), ' +
    'draft: true (saved, nothing runs or is charged; status draft). ' +
    'publish_at with an offset (2026-11-24T09:00:00-05:00, or Z for UTC) is that instant. Without an offset (2026-11-24T09:00) it is a local wall-clock time in time_zone ' +
    '(an IANA name such as America/New_York: pass the user\'s zone when they say "tomorrow at 9"), else in the brand queue\'s zone, else UTC; never convert to UTC yourself. ' +
    'Times are checked: a past time, one more than 365 days ahead, a malformed time or an unknown zone answers validation_failed naming publish_at or time_zone. ' +
    'The answer shows publish_at (UTC), time_zone and local_publish_at: read them back to the user to confirm the time. ' +
    'Use preview_content first when unsure the post fits every platform, and always pass an idempotency_key so a retried call cannot post twice. ' +
    'Returns at once with the content_id (the handle for get_content, update_content, cancel_content, publish_content_now) and its jobs; follow with get_content until every job is published or failed. ' +
    'Costs 1 on the criacao_de_conteudos meter and 1 per target platform on publicacoes (see get_usage), charged when publishing starts (now, or at the scheduled time), never for a draft or a canceled post; nothing is stored or charged when a check fails. A scheduled post that cannot be paid at its time fails its jobs (limit_reached or a credit error, see get_content). ' +
    'Errors: caption_too_long, platform_not_supported, media_too_large, connections_required (pick target_connections among the listed ones), ' +
    'not_found (brand or connection), limit_reached (a meter is full), idempotency_conflict, validation_failed (also queue: true on a brand without queue slots).',
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
