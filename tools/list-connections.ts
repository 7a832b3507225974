import { connectionListQuerySchema, connectionListSchema } from '../src/core/connections/connections.schema.js';
import { count, dashboardLink, defineTool, listed, MAX_LIST_LINKS, tally } from './define-tool.js';

export const listConnectionsTool = defineTool({
  name: 'list_connections',
  title: 'List connections',
  description:
    'Lists the workspace\'s network connections (one account on one platform, under a brand), oldest first, optionally filtered by brand_id, platform_slug or status. ' +
    'Only active connections publish; expired ones must be reconnected (their jobs fail with token_expired), inactive ones were switched off. ' +
    'mode sandbox means posts go to the built-in simulated network, not the real one. Use it to choose target_connections when a brand has several accounts on a platform ' +
    '(publish_content then fails with connections_required). Free: no meter is used.',
  permission: 'connections.read',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: connectionListQuerySchema,
  outputSchema: connectionListSchema,
  summary: (list) =>
    list.data.length === 0
      ? 'No connection matches: add one with add_sandbox_connection or start_connection_oauth.'
      : `${count(list.data.length, 'connection')} (${tally(list.data.map((c) => `${c.status} ${c.mode}`))}) on ${listed([...new Set(list.data.map((c) => c.platform_slug))])}.`,
  // Connections are shown in their brand's card: one link per brand.
  links: (list) => [...new Set(list.data.map((c) => c.brand_id))].slice(0, MAX_LIST_LINKS).map((id) => dashboardLink.brandConnections(id)),
  handle: (query, { principal, services }) => services.connections.list(principal, principal.workspaceId, query),
});
