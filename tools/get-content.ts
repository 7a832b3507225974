import { z } from 'zod';
import { contentIdSchema, contentSchema } from '../src/core/contents/contents.schema.js';
import { dashboardLink, defineTool, listed, tally, whenOf } from './define-tool.js';

export const getContentTool = defineTool({
  name: 'get_content',
  title: 'Get content',
  description:
    'Reads one content with the state of each platform job: scheduled (waiting for publish_at), queued, publishing, confirming, published (with external_post_url) or failed (with error_code and error_message). ' +
    'The content status is draft or scheduled while it waits (publish_at, time_zone and local_publish_at say when), canceled if canceled, publishing until every job is final, then published, partial or failed. Use it after publish_content or retry_failed_targets to follow progress; ' +
    'jobs usually settle within seconds to minutes. Free: no meter is used. Errors: not_found when the id is unknown in this workspace.',
  permission: 'contents.read',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: z.strictObject({ content_id: contentIdSchema }),
  outputSchema: contentSchema,
  summary(c) {
    const when = c.status === 'scheduled' ? ` for ${whenOf(c) ?? 'its time'}` : '';
    const failed = c.jobs.filter((j) => j.status === 'failed').map((j) => `${j.platform_slug}: ${j.error_code ?? 'failed'}`);
    const jobs = c.jobs.length === 0 ? '' : `; jobs: ${tally(c.jobs.map((j) => j.status))}`;
    return `Post ${c.content_id} is ${c.status}${when} on ${listed(c.target_platforms)}${jobs}${failed.length > 0 ? ` (${listed(failed)})` : ''}.`;
  },
  links: (c) => [dashboardLink.content(c.content_id, c.status)],
  handle: ({ content_id }, { principal, services }) => services.contents.get(principal, principal.workspaceId, content_id),
});
