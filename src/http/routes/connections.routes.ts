import { z } from 'zod';
import { brandIdSchema } from '../../core/brands/brands.schema.js';
import {
  appPasswordSignInSchema,
  connectAppPasswordInputSchema,
  connectionIdSchema,
  connectionListQuerySchema,
  connectionListSchema,
  connectionSchema,
  createSandboxConnectionInputSchema,
  networkCallbackQuerySchema,
  platformSlugSchema,
  startedOAuthSchema,
  startOAuthConnectionInputSchema,
} from '../../core/connections/connections.schema.js';
import type { ConnectionsService } from '../../core/connections/connections.service.js';
import type { NetworkConnectService } from '../../core/connections/network-connect.service.js';
import { defineRoute } from '../route.js';
import { workspaceParams } from './common.js';

const brandParams = workspaceParams.extend({ brandId: brandIdSchema });
const connectionParams = workspaceParams.extend({ connId: connectionIdSchema });

/** Every operation on connections: sandbox ones created directly, live ones through the network's OAuth. */
const exampleConnection: z.output<typeof connectionSchema> = {
  id: 'conn_7t2mz4q8kx1vb9c3nfa5',
  brand_id: 'brand_4k8xq2m7tv9c1zb3nfa0',
  platform_slug: 'instagram',
  mode: 'sandbox',
  name: '@cornerbakery (sandbox)',
  status: 'active',
  status_reason: null,
  created_at: '2026-02-20T10:06:12.000Z',
  updated_at: '2026-02-20T10:06:12.000Z',
};

export function connectionRoutes(connections: ConnectionsService, connect: NetworkConnectService) {
  return [
    defineRoute({
      operationId: 'createSandboxConnection',
      method: 'post',
      path: '/api/v1/workspaces/{wsId}/brands/{brandId}/connections',
      tag: 'Connections',
      summary: 'Create a sandbox connection',
      description: 'A connection to the sandbox network for one platform. Counted on the `connections` stock meter.',
      auth: 'bearer',
      params: brandParams,
      body: createSandboxConnectionInputSchema,
      success: { status: 201, description: 'The connection.', schema: connectionSchema },
      example: { request: { platform_slug: 'instagram', mode: 'sandbox', name: '@cornerbakery (sandbox)' }, response: exampleConnection },
      errors: ['not_found', 'limit_reached'],
      handle: ({ principal, params, body }) => connections.createSandbox(principal, params.wsId, params.brandId, body),
    }),
    defineRoute({
      operationId: 'listConnections',
      method: 'get',
      path: '/api/v1/workspaces/{wsId}/connections',
      tag: 'Connections',
      summary: 'List connections',
      auth: 'bearer',
      params: workspaceParams,
      query: connectionListQuerySchema,
      success: { status: 200, description: 'The connections, oldest first.', schema: connectionListSchema },
      example: { response: { data: [exampleConnection] } },
      handle: ({ principal, params, query }) => connections.list(principal, params.wsId, query),
    }),
    defineRoute({
      operationId: 'getConnection',
      method: 'get',
      path: '/api/v1/workspaces/{wsId}/connections/{connId}',
      tag: 'Connections',
      summary: 'Get a connection',
      auth: 'bearer',
      params: connectionParams,
      success: { status: 200, description: 'The connection.', schema: connectionSchema },
      example: { response: exampleConnection },
      errors: ['not_found'],
      handle: ({ principal, params }) => connections.get(principal, params.wsId, params.connId),
    }),
    defineRoute({
      operationId: 'deactivateConnection',
      method: 'post',
      path: '/api/v1/workspaces/{wsId}/connections/{connId}/deactivate',
      tag: 'Connections',
      summary: 'Deactivate a connection',
      description: 'Frees its slot on the connections meter (limit_reached resolve `desativar_outra`). Jobs on it fail with token_expired.',
      auth: 'bearer',
      params: connectionParams,
      success: { status: 200, description: 'The connection, now inactive.', schema: connectionSchema },
      errors: ['not_found'],
      handle: ({ principal, params }) => connections.deactivate(principal, params.wsId, params.connId),
    }),
    defineRoute({
      operationId: 'startOAuthConnection',
      method: 'post',
      path: '/api/v1/workspaces/{wsId}/brands/{brandId}/connections/oauth',
      tag: 'Connections',
      summary: 'Start connecting a live network account',
      description: "Spec 4.6 startOAuthConnection. Returns the network's authorization URL; its callback creates the connection. 422 platform_not_supported when the network is not configured here.",
      auth: 'bearer',
      params: brandParams,
      body: startOAuthConnectionInputSchema,
      success: { status: 200, description: 'Where to send the user.', schema: startedOAuthSchema },
      errors: ['not_found', 'platform_not_supported', 'validation_failed'],
      handle: ({ principal, params, body }) => connect.start(principal, params.wsId, params.brandId, body.platform_slug, { instance: body.instance }),
    }),
    defineRoute({
      operationId: 'connectAppPassword',
      method: 'post',
      path: '/api/v1/workspaces/{wsId}/brands/{brandId}/connections/app-password',
      tag: 'Connections',
      summary: 'Connect a live account with its app password',
      description:
        "For networks whose `connect` is `app_password` in GET /platforms (Bluesky): signs in with the account's app password and creates the connection at once. " +
        'The password is used for that sign-in only and never stored; the session it opens is kept sealed and renewed before it expires. 422 validation_failed when the network refuses the sign-in.',
      auth: 'bearer',
      params: brandParams,
      body: connectAppPasswordInputSchema,
      success: { status: 201, description: 'The connection, active.', schema: connectionSchema },
      errors: ['not_found', 'platform_not_supported', 'validation_failed', 'limit_reached'],
      handle: ({ principal, params, body }) => {
        const { platform_slug, ...signIn } = body;
        return connect.signIn(principal, params.wsId, { brandId: params.brandId, platform: platform_slug }, signIn);
      },
    }),
    defineRoute({
      operationId: 'reconnectAppPassword',
      method: 'post',
      path: '/api/v1/workspaces/{wsId}/connections/{connId}/app-password',
      tag: 'Connections',
      summary: 'Renew an app-password connection',
      description: 'For an expired Bluesky connection (or to renew one): signs in again with a new app password; the connection keeps its id and history.',
      auth: 'bearer',
      params: connectionParams,
      body: appPasswordSignInSchema,
      success: { status: 200, description: 'The connection, active.', schema: connectionSchema },
      errors: ['not_found', 'platform_not_supported', 'validation_failed'],
      handle: ({ principal, params, body }) => connect.signIn(principal, params.wsId, { connectionId: params.connId }, body),
    }),
    defineRoute({
      operationId: 'reconnectOAuthConnection',
      method: 'post',
      path: '/api/v1/workspaces/{wsId}/connections/{connId}/oauth',
      tag: 'Connections',
      summary: 'Re-authorize a live connection',
      description: 'For an expired connection (or to renew one): the callback keeps the connection id and its history.',
      auth: 'bearer',
      params: connectionParams,
      success: { status: 200, description: 'Where to send the user.', schema: startedOAuthSchema },
      errors: ['not_found', 'platform_not_supported'],
      handle: ({ principal, params }) => connect.startReconnect(principal, params.wsId, params.connId),
    }),
    defineRoute({
      operationId: 'networkOAuthCallback',
      method: 'get',
      path: '/api/v1/oauth/networks/{platform}/callback',
      tag: 'Connections',
      summary: "The network's OAuth callback",
      description:
        "Reached by the user's browser from the network. Validates the single-use state, exchanges the code and creates or reactivates the connection. " +
        'A request that prefers HTML (a browser) gets a page saying what happened instead, or a redirect to the dashboard when a dashboard session of that workspace is signed in; this JSON answer is for programs.',
      auth: 'none',
      params: z.object({ platform: platformSlugSchema }),
      query: networkCallbackQuerySchema,
      success: { status: 200, description: 'The connection, active.', schema: connectionSchema },
      errors: ['not_found', 'platform_not_supported', 'limit_reached'],
      handle: ({ params, query }) => connect.callback(params.platform, query),
    }),
  ];
}
