import { z } from 'zod';
import { connectionIdSchema, platformSlugSchema, startedOAuthSchema, startOAuthConnectionInputSchema } from '../src/core/connections/connections.schema.js';
import { brandIdSchema } from '../src/core/brands/brands.schema.js';
import { ServiceError } from '../src/core/errors.js';
import { defineTool } from './define-tool.js';

export const startConnectionOauthTool = defineTool({
  name: 'start_connection_oauth',
  title: 'Connect a social network account',
  description:
    "Starts connecting a live account of a network to a brand (give brand_id and platform_slug), or re-authorizing an expired connection (give connection_id). " +
    'Returns at once with an authorization_url and its state. A person must open that URL in their browser and approve on the network\'s own page: this tool cannot finish the connection itself, ' +
    'and nothing is connected until they do (then list_connections shows it active). The URL stops working at expires_at; call again for a new one. ' +
    'For Mastodon give instance, the user\'s server (e.g. mastodon.social). Bluesky connects with an app password, which a person enters in the dashboard, not here. ' +
    'For a test account without a network, use add_sandbox_connection instead. Use it after a token_expired or permission_revoked job error, or a connection.expired event. ' +
    'Spends 1 on the connections stock meter once the person finishes and the connection exists (a reconnection spends nothing more); this call itself spends nothing. ' +
    'Errors: not_found (brand or connection), platform_not_supported (this installation has no app for that network), validation_failed (a sandbox connection_id, neither brand_id with platform_slug nor connection_id, instance missing for Mastodon or given for another network).',
  // Open world: the connection it begins is with the network itself (its consent page, then our code exchange).
  permission: 'connections.manage',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  inputSchema: z.strictObject({
    brand_id: brandIdSchema.optional().describe('Brand to connect a new account to (with platform_slug).'),
    platform_slug: platformSlugSchema.optional(),
    instance: startOAuthConnectionInputSchema.shape.instance,
    connection_id: connectionIdSchema.optional().describe('An existing live connection to re-authorize (alone).'),
  }),
  outputSchema: startedOAuthSchema,
  summary: (s) => `Authorization started: the user must open authorization_url and approve on the network's page before ${s.expires_at}; nothing is connected until then.`,
  handle: async (input, { principal, services }) => {
    if (input.connection_id !== undefined) return services.networkConnect.startReconnect(principal, principal.workspaceId, input.connection_id);
    if (input.brand_id === undefined || input.platform_slug === undefined) {
      throw new ServiceError('validation_failed', 'brand_id: give brand_id and platform_slug for a new connection, or connection_id to reconnect');
    }
    return services.networkConnect.start(principal, principal.workspaceId, input.brand_id, input.platform_slug, { instance: input.instance });
  },
});
