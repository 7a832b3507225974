import { z } from 'zod';
import { connectionIdSchema, publishTargetListSchema } from '../src/core/connections/connections.schema.js';
import { count, defineTool } from './define-tool.js';

export const listPublishTargetsTool = defineTool({
  name: 'list_publish_targets',
  title: 'List where a connection can publish',
  description:
    "Lists the places a live connection can publish to, on networks with several per account: Pinterest's boards (the public, not ad-only ones the account can pin to), " +
    'read from the network now, the current one marked current: true. A Pinterest connection starts on the first such board; choose another with choose_publish_target. ' +
    'Errors: not_found (connection_id from list_connections), platform_not_supported (a network that publishes to the account itself, or a sandbox connection), ' +
    'and the network\'s own refusals (token_expired: reconnect with start_connection_oauth). Free: no meter is used.',
  // Open world: the list is read from the network at each call, with the user's connection.
  permission: 'connections.read',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  inputSchema: z.strictObject({ connection_id: connectionIdSchema }),
  outputSchema: publishTargetListSchema,
  summary: (list) => {
    const current = list.data.find((t) => t.current);
    return list.data.length === 0
      ? 'The account has no place this connection can publish to (on Pinterest: no public board it can pin to).'
      : `${count(list.data.length, 'place')} to publish to; current: ${current ? `${current.name} (${current.id})` : 'none of these'}.`;
  },
  handle: ({ connection_id }, { principal, services }) => services.networkConnect.targets(principal, principal.workspaceId, connection_id),
});
