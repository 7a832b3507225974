import { brandIdSchema } from '../src/core/brands/brands.schema.js';
import { connectionSchema, createSandboxConnectionInputSchema } from '../src/core/connections/connections.schema.js';
import { dashboardLink, defineTool } from './define-tool.js';

export const addSandboxConnectionTool = defineTool({
  name: 'add_sandbox_connection',
  title: 'Add a sandbox connection',
  description:
    'Adds a sandbox connection to a brand for one platform (mode must be "sandbox"): posts through it go to the built-in simulated network, never to the real one, ' +
    'so it is the way to try publish_content end to end. Live accounts are connected with start_connection_oauth instead. Each call adds a new connection. ' +
    'Returns at once with the connection id. Spends 1 on the connections stock meter while the connection is active (get_usage). ' +
    'Errors: not_found (brand_id unknown in this workspace), limit_reached (connections meter full), validation_failed.',
  permission: 'connections.manage',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  inputSchema: createSandboxConnectionInputSchema.extend({ brand_id: brandIdSchema.describe('Brand id (brand_…), from list_brands.') }),
  outputSchema: connectionSchema,
  summary: (c) => `Added sandbox connection ${c.name} (${c.id}) on ${c.platform_slug} to brand ${c.brand_id}.`,
  links: (c) => [dashboardLink.connection(c.id, c.brand_id, c.name)],
  handle: ({ brand_id, ...input }, { principal, services }) => services.connections.createSandbox(principal, principal.workspaceId, brand_id, input),
});
