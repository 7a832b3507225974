import { contentListQuerySchema, contentListSchema } from '../src/core/contents/contents.schema.js';
import { defineTool } from './define-tool.js';

export const listContentsTool = defineTool({
  name: 'list_contents',
  title: 'List contents',
  description:
    'Lists the workspace\'s contents, each with its jobs. Filter by status: draft, scheduled, publishing, published, partial, failed or canceled. ' +
    'Without from/to the list is newest first (created_after and created_before filter by creation time). ' +
    'With from and/or to it is the calendar: only contents whose publish_at is at or after from and before to, earliest publish_at first (created_after and created_before do not apply there; to must be after from); ' +
    'e.g. status scheduled with from and to lists what will publish in that window. from and to are RFC 3339 date-times with an offset (2026-11-24T00:00:00-05:00 or …Z); ' +
    'each content shows publish_at in UTC plus time_zone and local_publish_at, the local time it was meant for. ' +
    'Pages hold up to limit items (default 20, at most 100); pass next_cursor back as cursor (with the same filters) for the next page, null means the last page. ' +
    'Use it to find a content_id, to review the schedule or drafts, or to see what failed. Free: no meter is used. Errors: validation_failed (bad status, cursor or date).',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: contentListQuerySchema,
  outputSchema: contentListSchema,
  handle: (query, { principal, services }) => services.contents.list(principal, principal.workspaceId, query),
});
