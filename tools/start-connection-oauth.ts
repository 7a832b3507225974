import { z } from 'zod';
import { connectionIdSchema, platformSlugSchema, startedOAuthSchema } from '../src/core/connections/connections.schema.js';
import { brandIdSchema } from '../src/core/brands/brands.schema.js';
import { ServiceError } from '../src/core/errors.js';
import { defineTool } from './define-tool.js';

export const startConnectionOauthTool = defineTool({
  name: 'start_connection_oauth',
  title: 'Connect a social network account',
  description:
    "Starts connecting a live account of a network to a brand (give brand_id and platform_slug), or re-authorizing an expired connection (give connection_id). " +
    "Returns an authorization_url: show it to the user, who approves on the network's own page; the connection appears (or becomes active again) when they finish. " +
    'Use it after a token_expired or permission_revoked job error, or a connection.expired event. Fails with platform_not_supported when this installation has no app for that network.',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  inputSchema: z.strictObject({
    brand_id: brandIdSchema.optional().describe('Brand to connect a new account to (with platform_slug).'),
    platform_slug: platformSlugSchema.optional(),
    connection_id: connectionIdSchema.optional().describe('An existing live connection to re-authorize (alone).'),
  }),
  outputSchema: startedOAuthSchema,
  handle: async (input, { principal, services }) => {
    if (input.connection_id !== undefined) return services.networkConnect.startReconnect(principal, principal.workspaceId, input.connection_id);
    if (input.brand_id === undefined || input.platform_slug === undefined) {
      throw new ServiceError('validation_failed', 'brand_id: give brand_id and platform_slug for a new connection, or connection_id to reconnect');
    }
    return services.networkConnect.start(principal, principal.workspaceId, input.brand_id, input.platform_slug);
  },
});
