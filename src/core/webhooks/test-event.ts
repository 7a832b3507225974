import { toIso } from '../clock.js';
import type { EventType } from '../events/events.js';

/** The placeholder ids of a test event: they look like no real id (no service prefix), so no lookup can match. */
const PLACEHOLDER = { content: 'test_content', job: 'test_job', connection: 'test_connection', brand: 'test_brand' } as const;

/**
 * The body of a test event: the shape of spec 2.4 for `type`, marked `"test": true` at the top level
 * so a receiver can tell it from a real event before acting on it. Spec 6.1 allows no event type of our own.
 */
export function testEventPayload(args: { eventId: string; type: EventType; workspaceId: string; now: number }) {
  const base = { id: args.eventId, type: args.type, created_at: toIso(args.now), test: true as const };
  if (args.type === 'connection.expired') {
    return {
      ...base,
      data: {
        workspace_id: args.workspaceId,
        connection_id: PLACEHOLDER.connection,
        brand_id: PLACEHOLDER.brand,
        platform_slug: 'linkedin',
        reason: 'This is a test event sent from the dashboard or the API; no connection expired.',
      },
    };
  }
  const job = (platform: string, published: boolean, n: number) => ({
    job_id: `${PLACEHOLDER.job}_${n}`,
    platform_slug: platform,
    status: published ? 'published' : 'failed',
    external_post_url: published ? 'https://example.com/test-post' : null,
    error_code: published ? null : 'upstream_unknown',
  });
  const jobs =
    args.type === 'content.published' ? [job('linkedin', true, 1)] : args.type === 'content.partial' ? [job('linkedin', true, 1), job('threads', false, 2)] : [job('linkedin', false, 1)];
  return { ...base, data: { content_id: PLACEHOLDER.content, workspace_id: args.workspaceId, jobs } };
}
