import { importMediaInputSchema, mediaItemSchema } from '../src/core/media/media.schema.js';
import { dashboardLink, defineTool } from './define-tool.js';

/** Sizes in words a person reads at a glance. */
function bytes(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

export const importMediaFromUrlTool = defineTool({
  name: 'import_media_from_url',
  title: 'Import a media file from an address',
  description:
    'Copies an image or video from a public https address into the workspace\'s media library, as an upload would: answers its id, content_type, size_bytes and a signed url. ' +
    'Then use it in publish_content with media: [{media_id}] (it stays in the library for later posts; see list_media). Each call makes a new upload. ' +
    'Returns at once with the media id when the copy is done, and the copy is bounded: a file that does not arrive within 10 seconds fails (use a faster host or a smaller file). Private, local and non-https addresses are refused. ' +
    'Spends the file\'s size in bytes on the media_storage meter while it is kept (get_usage). ' +
    'Errors: validation_failed naming url (not a public https address, unreachable, an HTTP error, too slow, not an image or video type we accept, an empty file), ' +
    'limit_reached (the file does not fit media_storage).',
  // Not destructive: it only adds a media item. Not idempotent: each call stores another copy. Closed world: the
  // one outside read is an anonymous download of the public address the user named; nobody is acted on.
  permission: 'media.upload',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  inputSchema: importMediaInputSchema,
  outputSchema: mediaItemSchema,
  summary: (m) => `Imported ${m.content_type} ${m.id} (${bytes(m.size_bytes)}) into the media library.`,
  links: () => [dashboardLink.media()],
  handle: ({ url }, { principal, services }) => services.media.importFromUrl(principal, principal.workspaceId, url),
});
