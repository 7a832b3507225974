import { contentListQuerySchema, contentListSchema } from '../src/core/contents/contents.schema.js';
import { count, dashboardLink, defineTool, MAX_LIST_LINKS, tally } from './define-tool.js';

export const listContentsTool = defineTool({
  name: 'list_contents',
  title: 'List contents',
  description:
    'Lists the workspace\'s contents with their jobs. status filters: draft, scheduled, publishing, published, partial, failed, canceled. ' +
    'Without from/to: newest first (created_after/created_before filter creation time). With from and/or to: the calendar, contents whose publish_at is in [from, to), earliest first; ' +
    'e.g. status scheduled with from and to lists what will publish in that window. from and to are RFC 3339 with an offset; each content shows publish_at (UTC) with time_zone and local_publish_at. ' +
    'Up to limit items (default 20, max 100); pass next_cursor back as cursor with the same filters, null means the last page. ' +
    'Free: no meter is used. Errors: validation_failed (bad status, cursor or date; to not after from).',
  permission: 'contents.read',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: contentListQuerySchema,
  outputSchema: contentListSchema,
  summary: (page) =>
    `${count(page.data.length, 'post')} on this page${page.data.length > 0 ? ` (${tally(page.data.map((c) => c.status))})` : ''}${page.next_cursor !== null ? '; more with next_cursor' : ''}.`,
  links: (page) => page.data.slice(0, MAX_LIST_LINKS).map((c) => dashboardLink.content(c.content_id, c.status)),
  handle: (query, { principal, services }) => services.contents.list(principal, principal.workspaceId, query),
});
