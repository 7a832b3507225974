import { z } from 'zod';
import { chooseTargetInputSchema, connectionIdSchema, connectionSchema } from '../src/core/connections/connections.schema.js';
import { defineTool } from './define-tool.js';

export const choosePublishTargetTool = defineTool({
  name: 'choose_publish_target',
  title: 'Choose where a connection publishes',
  description:
    "Moves a live connection to another of the account's places, target_id from list_publish_targets (a Pinterest board): its jobs not yet published go there, " +
    "and its name follows (username · board). Choosing the current place again changes nothing. Errors: validation_failed (a target_id the account cannot publish to), " +
    'not_found (connection_id), platform_not_supported (a network without places, or a sandbox connection). Free: no meter is used.',
  // Destructive: the new place overwrites the connection's current one, for its jobs not yet published too.
  // Idempotent: the same choice twice leaves the connection as the first left it. Open world: the board is
  // checked with the network, with the user's connection.
  permission: 'connections.manage',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  inputSchema: z.strictObject({ connection_id: connectionIdSchema, ...chooseTargetInputSchema.shape }),
  outputSchema: connectionSchema,
  summary: (c) => `Connection ${c.id} now publishes as “${c.name}”.`,
  handle: ({ connection_id, target_id }, { principal, services }) => services.networkConnect.chooseTarget(principal, principal.workspaceId, connection_id, target_id),
});
