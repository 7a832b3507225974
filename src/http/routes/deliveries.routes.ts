import { deliveryIdSchema, deliveryListQuerySchema, deliveryListSchema, deliverySchema, webhookIdSchema } from '../../core/webhooks/webhooks.schema.js';
import type { WebhooksService } from '../../core/webhooks/webhooks.service.js';
import { defineRoute } from '../route.js';
import { workspaceParams } from './common.js';

const webhookParams = workspaceParams.extend({ whId: webhookIdSchema });
const deliveryParams = workspaceParams.extend({ delId: deliveryIdSchema });

/** The deliveries of webhook events: listed per endpoint, read and redelivered by their own id. */
export function deliveryRoutes(webhooks: WebhooksService) {
  return [
    defineRoute({
      operationId: 'listDeliveries',
      method: 'get',
      path: '/api/v1/workspaces/{wsId}/webhooks/{whId}/deliveries',
      tag: 'Webhooks',
      summary: 'List deliveries of an endpoint',
      description: 'Newest first, with every attempt. `status=failed` returns failed (stopped by a 4xx) and dead (6 attempts) deliveries.',
      auth: 'bearer',
      params: webhookParams,
      query: deliveryListQuerySchema,
      success: { status: 200, description: 'A page of deliveries.', schema: deliveryListSchema },
      errors: ['not_found'],
      handle: ({ principal, params, query }) => webhooks.deliveries(principal, params.wsId, params.whId, query),
    }),
    defineRoute({
      operationId: 'getDelivery',
      method: 'get',
      path: '/api/v1/workspaces/{wsId}/deliveries/{delId}',
      tag: 'Webhooks',
      summary: 'Get a delivery',
      auth: 'bearer',
      params: deliveryParams,
      success: { status: 200, description: 'The delivery and its attempts.', schema: deliverySchema },
      errors: ['not_found'],
      handle: ({ principal, params }) => webhooks.delivery(principal, params.wsId, params.delId),
    }),
    defineRoute({
      operationId: 'redeliver',
      method: 'post',
      path: '/api/v1/workspaces/{wsId}/deliveries/{delId}/redeliver',
      tag: 'Webhooks',
      summary: 'Redeliver now',
      description: 'Queues a new attempt now, whatever the status (dead deliveries above all), with the same delivery id. No body.',
      auth: 'bearer',
      params: deliveryParams,
      success: { status: 202, description: 'The delivery, now pending.', schema: deliverySchema },
      errors: ['not_found'],
      handle: ({ principal, params }) => webhooks.redeliver(principal, params.wsId, params.delId),
    }),
  ];
}
