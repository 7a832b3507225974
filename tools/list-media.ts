import { mediaListQuerySchema, mediaListSchema } from '../src/core/media/media.schema.js';
import { count, dashboardLink, defineTool } from './define-tool.js';

export const listMediaTool = defineTool({
  name: 'list_media',
  title: 'List uploaded media',
  description:
    'Lists the workspace\'s uploads (the media library), newest first: id, type, size, creation time, a signed address of the file valid for 24 hours, and the contents that use each one (used_by). ' +
    'Reuse an upload in publish_content with media: [{media_id}] instead of uploading it again. Add a file from a public address with import_media_from_url (sending the bytes is REST only: POST …/media). ' +
    'Paginated like list_contents (limit, cursor, next_cursor). Free: no meter is used. Errors: validation_failed (bad cursor).',
  permission: 'media.read',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: mediaListQuerySchema,
  outputSchema: mediaListSchema,
  summary(page) {
    const inUse = page.data.filter((m) => m.used_by.length > 0).length;
    return `${count(page.data.length, 'upload')} on this page${page.data.length > 0 ? `, ${inUse} used by a content` : ''}${page.next_cursor !== null ? '; more with next_cursor' : ''}.`;
  },
  links: () => [dashboardLink.media()],
  handle: (query, { principal, services }) => services.media.list(principal, principal.workspaceId, query),
});
