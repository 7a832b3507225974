import { z } from 'zod';
import { platformListSchema } from '../src/core/platforms.js';
import { PLATFORM_SLUGS } from '../src/vocabulary/platforms.js';
import { count, defineTool, listed } from './define-tool.js';

export const listPlatformsTool = defineTool({
  name: 'list_platforms',
  title: 'List platforms',
  description:
    `Lists the supported platforms (${PLATFORM_SLUGS.join(', ')}) with the content types each accepts, text, title, thread and media limits (and how each network counts text), ` +
    'whether a title is required and whether live connections exist in this installation. Use it before writing a post to respect each platform\'s limits ' +
    '(e.g. threads allows 500 characters per post, bluesky 300 graphemes, x 280 weighted characters). Free: no meter is used; it cannot fail except with server_error.',
  permission: 'workspace.read',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: z.strictObject({}),
  outputSchema: platformListSchema,
  summary(list) {
    const live = list.data.filter((p) => p.live_available).map((p) => p.slug);
    return `${count(list.data.length, 'platform')}: ${listed(list.data.map((p) => p.slug))}; live connections possible on ${live.length === 0 ? 'none (sandbox only)' : listed(live)}.`;
  },
  // Same function as GET /api/v1/platforms: live_available is true where start_connection_oauth can begin.
  handle: async (_input, { services }) => services.networkConnect.platforms(),
});
