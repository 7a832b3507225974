import { contentListQuerySchema, contentListSchema } from '../src/core/contents/contents.schema.js';
import { defineTool } from './define-tool.js';

export const listContentsTool = defineTool({
  name: 'list_contents',
  title: 'List contents',
  description:
    'Lists the workspace\'s contents, newest first, each with its jobs; filter by status (publishing, published, partial, failed) and creation date. ' +
    'Pages hold up to limit items (default 20, at most 100); pass next_cursor back as cursor for the next page, null means the last page. ' +
    'Use it to find a content_id or to review what failed. Free: no meter is used. Errors: validation_failed (bad cursor or date).',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: contentListQuerySchema,
  outputSchema: contentListSchema,
  handle: (query, { principal, services }) => services.contents.list(principal, principal.workspaceId, query),
});
