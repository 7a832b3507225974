import type { z } from 'zod';
import {
  createdWebhookSchema,
  deliverySchema,
  sendTestEventInputSchema,
  createWebhookInputSchema,
  updateWebhookInputSchema,
  verifyInputSchema,
  verifyResultSchema,
  webhookIdSchema,
  webhookListSchema,
  webhookSchema,
} from '../../core/webhooks/webhooks.schema.js';
import type { WebhooksService } from '../../core/webhooks/webhooks.service.js';
import { defineRoute } from '../route.js';
import { workspaceParams } from './common.js';

const webhookParams = workspaceParams.extend({ whId: webhookIdSchema });

const SIGNING =
  'Each event is POSTed as JSON with headers Content-Type, Service-Timestamp (Unix seconds), Service-Signature (`sha256=` + lowercase hex HMAC-SHA256 of `{timestamp}.{raw body}` keyed by the secret), Service-Webhook-Id and Service-Delivery-Id. ' +
  'Answer 2xx within 30 s. 5xx, 408, 429, 3xx (redirects are not followed), timeouts and connection failures are retried at +1 min, +5 min, +30 min, +2 h and +12 h; other 4xx stop. After 6 attempts the delivery is dead. ' +
  'Delivery is at least once: de-duplicate on Service-Delivery-Id (the same across retries and redeliveries) or on the event id.';

const exampleWebhook: z.output<typeof webhookSchema> = {
  id: 'wh_5q8t1w4z7c0f3j6m9p2s',
  url: 'https://hooks.cornerbakery.example/publisher',
  description: 'Posts to the team chat when a post goes out or fails.',
  enabled_events: ['content.published', 'content.failed'],
  active: true,
  created_at: '2026-02-20T10:15:40.000Z',
  updated_at: '2026-02-20T10:15:40.000Z',
};

export function webhookRoutes(webhooks: WebhooksService) {
  return [
    defineRoute({
      operationId: 'createWebhook',
      method: 'post',
      path: '/api/v1/workspaces/{wsId}/webhooks',
      tag: 'Webhooks',
      summary: 'Register a webhook endpoint',
      description: `The secret (whsec_…) is returned only here. Counted on the webhooks stock meter. ${SIGNING}`,
      auth: 'bearer',
      params: workspaceParams,
      body: createWebhookInputSchema,
      success: { status: 201, description: 'The endpoint and its secret.', schema: createdWebhookSchema },
      example: {
        request: { url: exampleWebhook.url, description: exampleWebhook.description, enabled_events: exampleWebhook.enabled_events },
        response: { ...exampleWebhook, secret: 'whsec_3f9a1c7e5b2d8f4a6c0e9b1d7f3a5c8e2b4d6f0a1c3e5b7d' },
      },
      errors: ['limit_reached'],
      handle: ({ principal, params, body }) => webhooks.create(principal, params.wsId, body),
    }),
    defineRoute({
      operationId: 'listWebhooks',
      method: 'get',
      path: '/api/v1/workspaces/{wsId}/webhooks',
      tag: 'Webhooks',
      summary: 'List webhook endpoints',
      auth: 'bearer',
      params: workspaceParams,
      success: { status: 200, description: 'The endpoints (never their secrets).', schema: webhookListSchema },
      example: { response: { data: [exampleWebhook] } },
      handle: ({ principal, params }) => webhooks.list(principal, params.wsId),
    }),
    defineRoute({
      operationId: 'getWebhook',
      method: 'get',
      path: '/api/v1/workspaces/{wsId}/webhooks/{whId}',
      tag: 'Webhooks',
      summary: 'Get a webhook endpoint',
      auth: 'bearer',
      params: webhookParams,
      success: { status: 200, description: 'The endpoint.', schema: webhookSchema },
      example: { response: exampleWebhook },
      errors: ['not_found'],
      handle: ({ principal, params }) => webhooks.get(principal, params.wsId, params.whId),
    }),
    defineRoute({
      operationId: 'updateWebhook',
      method: 'patch',
      path: '/api/v1/workspaces/{wsId}/webhooks/{whId}',
      tag: 'Webhooks',
      summary: 'Update a webhook endpoint',
      auth: 'bearer',
      params: webhookParams,
      body: updateWebhookInputSchema,
      success: { status: 200, description: 'The endpoint.', schema: webhookSchema },
      errors: ['not_found'],
      handle: ({ principal, params, body }) => webhooks.update(principal, params.wsId, params.whId, body),
    }),
    defineRoute({
      operationId: 'deleteWebhook',
      method: 'delete',
      path: '/api/v1/workspaces/{wsId}/webhooks/{whId}',
      tag: 'Webhooks',
      summary: 'Delete a webhook endpoint',
      description: 'Frees its slot on the webhooks meter; pending deliveries to it are not sent.',
      auth: 'bearer',
      params: webhookParams,
      success: { status: 204, description: 'Deleted.' },
      errors: ['not_found'],
      handle: ({ principal, params }) => webhooks.remove(principal, params.wsId, params.whId),
    }),
    defineRoute({
      operationId: 'sendWebhookTestEvent',
      method: 'post',
      path: '/api/v1/workspaces/{wsId}/webhooks/{whId}/test',
      tag: 'Webhooks',
      summary: 'Send a test event to an endpoint',
      description:
        'Queues one signed delivery to this endpoint through the normal path (headers, signature, retries and redeliver as for real events). ' +
        'Spec 6.1 allows no event type of ours, so the body has the shape of `event_type` (default: the endpoint\'s first enabled type) and carries `"test": true` at the top level, with placeholder ids `test_…` that name nothing real. ' +
        'Follow it with the deliveries list (its `test` is true). Nothing is counted on the plan.',
      auth: 'bearer',
      params: webhookParams,
      body: sendTestEventInputSchema.optional(),
      success: { status: 202, description: 'The queued delivery; its first attempt follows at once.', schema: deliverySchema },
      errors: ['not_found'],
      handle: ({ principal, params, body }) => webhooks.sendTest(principal, params.wsId, params.whId, body ?? {}),
    }),
    defineRoute({
      operationId: 'verifyWebhookSignature',
      method: 'post',
      path: '/api/v1/webhooks/verify',
      tag: 'Webhooks',
      summary: 'Check a signature (debugging aid)',
      description: 'No authentication. `payload` is the signed string `{timestamp}.{raw body}`; the timestamp is the part before the first dot and is compared with the service clock.',
      auth: 'none',
      body: verifyInputSchema,
      errors: ['rate_limited'],
      success: { status: 200, description: 'The verdict and each check.', schema: verifyResultSchema },
      handle: async ({ body }) => webhooks.verify(body),
    }),
  ];
}
