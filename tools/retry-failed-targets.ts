import { contentIdSchema, retryInputSchema, retryResultSchema } from '../src/core/contents/contents.schema.js';
import { count, dashboardLink, defineTool, listed } from './define-tool.js';

const inputSchema = retryInputSchema.extend({
  content_id: contentIdSchema.describe('The content whose failed jobs to retry (UUID returned by publish_content).'),
});

export const retryFailedTargetsTool = defineTool({
  name: 'retry_failed_targets',
  title: 'Retry failed targets',
  description:
    'Publishes to the networks again: re-queues the failed jobs of a content whose failure is safe to retry (e.g. quota_exceeded, upstream_5xx, or token_expired after reconnecting). ' +
    'Jobs that failed confirmation (confirmacao_esgotada, confirmacao_indisponivel, post_inexistente) are left alone because their post may already be live; ' +
    'set force to true only after checking the post is not there, since it risks a duplicate post. ' +
    'Jobs whose connection is expired or inactive are never re-queued (they would fail again at once): they come back in skipped, to reconnect first. ' +
    'Returns at once with the re-queued jobs (possibly none) and the skipped ones; follow with get_content. ' +
    'Spends 1 on the publicacoes meter per re-queued job, nothing for skipped ones. Errors: not_found (content), limit_reached (publicacoes is full).',
  permission: 'contents.publish',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  inputSchema,
  outputSchema: retryResultSchema,
  summary: (r) => {
    const waiting = r.skipped.filter((j) => j.reason === 'connection_not_active');
    const reconnect =
      waiting.length === 0 ? '' : ` Skipped until their connection is reconnected: ${listed(waiting.map((j) => `${j.platform_slug} (${j.connection_id}, ${j.connection_status})`))}.`;
    return r.requeued.length === 0
      ? `No job of post ${r.content_id} was re-queued (none failed in a way that is safe to retry); it stays ${r.status}.${reconnect}`
      : `Re-queued ${count(r.requeued.length, 'failed job')} of post ${r.content_id} on ${listed(r.requeued.map((j) => j.platform_slug))}; follow with get_content.${reconnect}`;
  },
  links: (r) => [dashboardLink.content(r.content_id, r.status)],
  handle: ({ content_id, force }, { principal, services }) => services.contents.retry(principal, principal.workspaceId, content_id, { force }),
});
