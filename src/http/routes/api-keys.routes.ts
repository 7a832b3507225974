import { z } from 'zod';
import {
  apiKeyListSchema,
  createApiKeyInputSchema,
  createdApiKeySchema,
} from '../../core/api-keys/api-keys.schema.js';
import type { ApiKeysService } from '../../core/api-keys/api-keys.service.js';
import { defineRoute } from '../route.js';
import { workspaceParams } from './common.js';

const keyParams = workspaceParams.extend({ keyId: z.string().describe('API key id (key_…).') });

export function apiKeyRoutes(apiKeys: ApiKeysService) {
  return [
    defineRoute({
      operationId: 'createApiKey',
      method: 'post',
      path: '/api/v1/workspaces/{wsId}/api-keys',
      tag: 'API keys',
      summary: 'Create an API key',
      description:
        'Creates a key for this workspace. The plaintext `api_key` is returned only in this response. With `revoke_others: true` every other key of the workspace is revoked in the same transaction (rotation).',
      auth: 'bearer',
      params: workspaceParams,
      body: createApiKeyInputSchema,
      success: { status: 201, description: 'The new key, with its plaintext (shown once).', schema: createdApiKeySchema },
      handle: ({ principal, params, body }) => apiKeys.create(principal, params.wsId, body),
    }),
    defineRoute({
      operationId: 'listApiKeys',
      method: 'get',
      path: '/api/v1/workspaces/{wsId}/api-keys',
      tag: 'API keys',
      summary: 'List API keys',
      description: 'Every key of the workspace, newest first, active and revoked; never the plaintext.',
      auth: 'bearer',
      params: workspaceParams,
      success: { status: 200, description: 'The keys.', schema: apiKeyListSchema },
      handle: ({ principal, params }) => apiKeys.list(principal, params.wsId),
    }),
    defineRoute({
      operationId: 'revokeApiKey',
      method: 'delete',
      path: '/api/v1/workspaces/{wsId}/api-keys/{keyId}',
      tag: 'API keys',
      summary: 'Revoke an API key',
      description: 'Irreversible and immediate: the next request with this key answers 401 invalid_api_key. Revoking a revoked key is a no-op.',
      auth: 'bearer',
      params: keyParams,
      success: { status: 204, description: 'Revoked.' },
      errors: ['not_found'],
      handle: ({ principal, params }) => apiKeys.revoke(principal, params.wsId, params.keyId),
    }),
  ];
}
