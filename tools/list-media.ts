import { mediaListQuerySchema, mediaListSchema } from '../src/core/media/media.schema.js';
import { defineTool } from './define-tool.js';

export const listMediaTool = defineTool({
  name: 'list_media',
  title: 'List uploaded media',
  description:
    'Lists the workspace\'s uploads (the media library), newest first: id, type, size, creation time, a signed address of the file valid for 24 hours, and the contents that use each one (used_by). ' +
    'Reuse an upload in publish_content with media: [{media_id}] instead of uploading it again. Uploading itself is REST only (POST …/media with the file as body). ' +
    'Paginated like list_contents (limit, cursor, next_cursor). Free: no meter is used. Errors: validation_failed (bad cursor).',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: mediaListQuerySchema,
  outputSchema: mediaListSchema,
  handle: (query, { principal, services }) => services.media.list(principal, principal.workspaceId, query),
});
