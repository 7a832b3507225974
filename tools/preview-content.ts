import { createContentInputSchema, previewSchema } from '../src/core/contents/contents.schema.js';
import { count, defineTool, listed } from './define-tool.js';

export const previewContentTool = defineTool({
  name: 'preview_content',
  title: 'Preview content (dry run)',
  description:
    'Runs every check publish_content would run on the same input (platform limits, content types, media sizes, connections, meters) and shows what would be published on each platform, ' +
    'including how a long text would be split into a thread with thread_split "auto". Free: creates, charges and publishes nothing, so it is safe to call as often as needed. ' +
    'Use it before publish_content to catch problems early. ' +
    'Errors are those of publish_content: caption_too_long, platform_not_supported, media_too_large, media_unsupported_format, connections_required, not_found, limit_reached (a meter would be exceeded), validation_failed.',
  // Read-only: it stores, charges and publishes nothing. Closed world: the only outside reads are anonymous checks
  // of the media addresses the post names (size and type, never the body); no network or receiver is reached.
  permission: 'contents.draft',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: createContentInputSchema,
  outputSchema: previewSchema,
  summary: (p) =>
    `Dry run: ${count(p.jobs.length, 'post')} would go out on ${listed(p.jobs.map((j) => `${j.platform_slug}${j.connection_mode === 'sandbox' ? ' (sandbox)' : ''}`))}${
      p.jobs.some((j) => j.thread !== null) ? ', some as threads' : ''
    }; nothing was created, charged or published.`,
  handle: (input, { principal, services }) => services.contents.preview(principal, principal.workspaceId, input),
});
