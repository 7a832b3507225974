import { createContentInputSchema, createdContentSchema } from '../src/core/contents/contents.schema.js';
import { idempotencyKeySchema } from '../src/core/idempotency/idempotency.schema.js';
import { count, dashboardLink, defineTool, listed, PENDING_APPROVAL_WORDS, whenOf } from './define-tool.js';

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
    'Publishes to the networks: one post on platforms of a brand, one background job per platform: now, at publish_at, in the brand\'s next free queue slot (queue: true, see get_queue) or as a draft (draft: true; nothing runs). ' +
    'Time zone: publish_at with an offset (2026-11-24T09:00:00-05:00) is that instant; without one (2026-11-24T09:00) it is local time in time_zone (IANA, e.g. America/New_York: pass the user\'s zone), ' +
    'else the brand queue\'s zone, else UTC. Do not convert to UTC yourself. Times are checked: past, over 365 days ahead, malformed or an unknown zone is validation_failed; ' +
    'confirm the answer\'s local_publish_at and time_zone with the user. ' +
    'Use preview_content when unsure the post fits, and pass an idempotency_key so a retry cannot post twice. Returns at once with content_id (for get_content, update_content, cancel_content, publish_content_now), without waiting for the networks. ' +
    'Spends 1 on criacao_de_conteudos and 1 per platform on publicacoes (get_usage), or credits with modo creditos, charged when publishing starts, never for a draft or canceled post; a scheduled post that cannot be paid then fails its jobs. ' +
    'If the credential\'s role needs approval (a contributor, or a role the brand lists), the answer is status pending_approval: nothing runs and nothing is charged until a person approves it. ' +
    'Errors: caption_too_long, platform_not_supported, media_too_large, media_unsupported_format (a photo type the network refuses, e.g. PNG on Instagram), connections_required, not_found, limit_reached, idempotency_conflict, validation_failed (also queue: true on a brand without a queue).',
  permission: 'contents.draft',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  inputSchema,
  outputSchema: createdContentSchema,
  summary(c) {
    const on = c.jobs.length > 0 ? ` on ${listed(c.jobs.map((j) => j.platform_slug))}` : '';
    if (c.status === 'pending_approval') return `Post ${c.content_id} is waiting for approval (pending_approval)${c.publish_at === null ? '' : `, meant for ${whenOf(c) ?? c.publish_at}`}. ${PENDING_APPROVAL_WORDS}`;
    if (c.status === 'draft') return `Saved post ${c.content_id} as a draft${on}; nothing publishes until it is scheduled or published.`;
    if (c.status === 'scheduled') return `Scheduled post ${c.content_id} for ${whenOf(c) ?? 'its time'}${c.queued ? ' (a queue slot)' : ''}${on}.`;
    return `Publishing post ${c.content_id} now${on}: ${count(c.jobs.length, 'job')} started; follow with get_content.`;
  },
  links: (c) => [dashboardLink.content(c.content_id, c.status), ...(c.status === 'pending_approval' ? [dashboardLink.approvals()] : [])],
  async handle({ idempotency_key, ...content }, { principal, services }) {
    // The key is not part of the request it protects: the same content under the same key is the same request,
    // whichever door it came through.
    const result = await services.contents.create(principal, principal.workspaceId, content, idempotency_key);
    if (!result.outcome.ok) throw result.outcome.error;
    return result.outcome.value;
  },
});
