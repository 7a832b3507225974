import { createContentInputSchema, previewSchema } from '../src/core/contents/contents.schema.js';
import { defineTool } from './define-tool.js';

export const previewContentTool = defineTool({
  name: 'preview_content',
  title: 'Preview content (dry run)',
  description:
    'Runs every check publish_content would run on the same input (platform limits, content types, media sizes, connections, meters) and shows what would be published on each platform, ' +
    'including how a long text would be split into a thread with thread_split "auto". Creates, charges and publishes nothing, so it is free and safe to call as often as needed. ' +
    'Use it before publish_content to catch problems early. ' +
    'Errors are those of publish_content: caption_too_long, platform_not_supported, media_too_large, connections_required, not_found, limit_reached (a meter would be exceeded), validation_failed.',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: createContentInputSchema,
  outputSchema: previewSchema,
  handle: (input, { principal, services }) => services.contents.preview(principal, principal.workspaceId, input),
});
