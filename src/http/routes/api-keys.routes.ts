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

const exampleKey = { id: 'key_2x7c4v9b1n6m3q8w5e0r', name: 'zapier', prefix: 'svc_live', starts_with: 'svc_live_4f1c', created_at: '2026-02-20T10:20:00.000Z', role: 'admin' as const, brand_ids: null, created_by: 'key_9a8s7d6f5g4h3j2k1l0z' };

export function apiKeyRoutes(apiKeys: ApiKeysService) {
  return [
    defineRoute({
      operationId: 'createApiKey',
      method: 'post',
      path: '/api/v1/workspaces/{wsId}/api-keys',
      tag: 'API keys',
      summary: 'Create an API key',
      description:
        'Creates a key for this workspace. The plaintext `api_key` is returned only in this response. With `revoke_others: true` every other key of the workspace is revoked in the same transaction (rotation). `role` (default `admin`) and `brand_ids` narrow what the key may do; never above the creating credential (403 `forbidden` naming `api_keys.manage`).',
      auth: 'bearer',
      params: workspaceParams,
      body: createApiKeyInputSchema,
      success: { status: 201, description: 'The new key, with its plaintext (shown once).', schema: createdApiKeySchema },
      example: {
        request: { name: 'zapier' },
        response: { ...exampleKey, api_key: 'svc_live_4f1c9e7a2b8d6f3e0a5c1b9d7e3f2a6c', revoked_other_keys: 0 },
      },
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
      example: { response: { data: [{ ...exampleKey, last_used_at: '2026-02-27T16:20:00.000Z', revoked_at: null }] } },
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
