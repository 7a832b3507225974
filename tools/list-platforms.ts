import { z } from 'zod';
import { platformListSchema } from '../src/core/platforms.js';
import { defineTool } from './define-tool.js';

export const listPlatformsTool = defineTool({
  name: 'list_platforms',
  title: 'List platforms',
  description:
    'Lists the supported platforms (instagram, facebook, threads, youtube, linkedin) with the content types each accepts, text, title, thread and media limits, ' +
    'whether a title is required and whether live connections exist in this installation. Use it before writing a post to respect each platform\'s limits ' +
    '(e.g. threads allows 500 characters per post). Free: no meter is used; it cannot fail except with server_error.',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: z.strictObject({}),
  outputSchema: platformListSchema,
  // Same function as GET /api/v1/platforms: live_available is true where start_connection_oauth can begin.
  handle: async (_input, { services }) => services.networkConnect.platforms(),
});
