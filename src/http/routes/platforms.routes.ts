import { type PlatformList, platformListSchema } from '../../core/platforms.js';
import { defineRoute } from '../route.js';

/** `platforms` is the network-connect service's catalogue, the one MCP's list_platforms answers from too. */
export function platformRoutes(platforms: () => PlatformList) {
  return [
    defineRoute({
      operationId: 'listPlatforms',
      method: 'get',
      path: '/api/v1/platforms',
      tag: 'Platforms',
      summary: 'List platforms',
      description: 'Each platform with its kind of network, content types, limits, and whether live connections are available.',
      auth: 'none',
      success: { status: 200, description: 'The platforms.', schema: platformListSchema },
      handle: async () => platforms(),
    }),
  ];
}
