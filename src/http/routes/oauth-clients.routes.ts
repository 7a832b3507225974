import { z } from 'zod';
import {
  createdOAuthClientSchema,
  createOAuthClientInputSchema,
  oauthClientListSchema,
  oauthClientSchema,
  updateOAuthClientInputSchema,
} from '../../core/oauth-clients/oauth-clients.schema.js';
import type { OAuthClientsService } from '../../core/oauth-clients/oauth-clients.service.js';
import { defineRoute } from '../route.js';
import { workspaceParams } from './common.js';

const clientParams = workspaceParams.extend({ clientId: z.string().describe('mcp_client_…') });

export function oauthClientRoutes(clients: OAuthClientsService) {
  return [
    defineRoute({
      operationId: 'createOAuthClient',
      method: 'post',
      path: '/api/v1/workspaces/{wsId}/oauth-clients',
      tag: 'OAuth clients',
      summary: 'Create a confidential OAuth client',
      description:
        'For an assistant builder (e.g. a custom GPT action). Authenticate at the token endpoint with client_secret_post (client_secret_basic also works). The client_secret is returned only here. The user approves on the consent page with their own API key.',
      auth: 'bearer',
      params: workspaceParams,
      body: createOAuthClientInputSchema,
      success: { status: 201, description: 'The client and its secret.', schema: createdOAuthClientSchema },
      handle: ({ principal, params, body }) => clients.create(principal, params.wsId, body),
    }),
    defineRoute({
      operationId: 'listOAuthClients',
      method: 'get',
      path: '/api/v1/workspaces/{wsId}/oauth-clients',
      tag: 'OAuth clients',
      summary: 'List confidential OAuth clients',
      auth: 'bearer',
      params: workspaceParams,
      success: { status: 200, description: 'The clients (never their secrets).', schema: oauthClientListSchema },
      handle: ({ principal, params }) => clients.list(principal, params.wsId),
    }),
    defineRoute({
      operationId: 'getOAuthClient',
      method: 'get',
      path: '/api/v1/workspaces/{wsId}/oauth-clients/{clientId}',
      tag: 'OAuth clients',
      summary: 'Get a confidential OAuth client',
      auth: 'bearer',
      params: clientParams,
      success: { status: 200, description: 'The client.', schema: oauthClientSchema },
      errors: ['not_found'],
      handle: ({ principal, params }) => clients.get(principal, params.wsId, params.clientId),
    }),
    defineRoute({
      operationId: 'updateOAuthClient',
      method: 'patch',
      path: '/api/v1/workspaces/{wsId}/oauth-clients/{clientId}',
      tag: 'OAuth clients',
      summary: 'Update a client (name, redirect URIs)',
      description: 'Set the real callback of the calling tool, e.g. https://chat.openai.com/aip/g-{action_id}/oauth/callback.',
      auth: 'bearer',
      params: clientParams,
      body: updateOAuthClientInputSchema,
      success: { status: 200, description: 'The client.', schema: oauthClientSchema },
      errors: ['not_found'],
      handle: ({ principal, params, body }) => clients.update(principal, params.wsId, params.clientId, body),
    }),
    defineRoute({
      operationId: 'deleteOAuthClient',
      method: 'delete',
      path: '/api/v1/workspaces/{wsId}/oauth-clients/{clientId}',
      tag: 'OAuth clients',
      summary: 'Delete a client',
      description: 'Its grants and tokens stop working at once.',
      auth: 'bearer',
      params: clientParams,
      success: { status: 204, description: 'Deleted.' },
      errors: ['not_found'],
      handle: ({ principal, params }) => clients.remove(principal, params.wsId, params.clientId),
    }),
  ];
}
