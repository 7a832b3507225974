import type { z } from 'zod';
import { brandIdSchema } from '../../core/brands/brands.schema.js';
import { queueInputSchema, queueSchema } from '../../core/scheduling/queue.schema.js';
import type { QueueService } from '../../core/scheduling/queue.service.js';
import { defineRoute } from '../route.js';
import { workspaceParams } from './common.js';

const brandParams = workspaceParams.extend({ brandId: brandIdSchema });

const ZONE_NOTE =
  'Slot times are local wall-clock times in the queue\'s IANA time zone (checked; stored in its canonical spelling). ' +
  'A local time skipped by a daylight-saving change yields the first instant after the gap; one that occurs twice yields its first occurrence.';

/** A brand's publishing queue (README, Publishing queues): weekly local times in one IANA zone, and its next free slots. */
const exampleQueue = {
  time_zone: 'America/New_York',
  slots: [
    { days: ['mon', 'wed', 'fri'], time: '09:00' },
    { days: ['sat'], time: '11:30' },
  ],
} satisfies z.input<typeof queueInputSchema>;

const exampleQueueAnswer: z.output<typeof queueSchema> = {
  brand_id: 'brand_4k8xq2m7tv9c1zb3nfa0',
  ...exampleQueue,
  next_slots: [
    { at: '2026-03-02T09:00:00-05:00', local_date: '2026-03-02', local_time: '09:00' },
    { at: '2026-03-04T09:00:00-05:00', local_date: '2026-03-04', local_time: '09:00' },
    { at: '2026-03-06T09:00:00-05:00', local_date: '2026-03-06', local_time: '09:00' },
    { at: '2026-03-07T11:30:00-05:00', local_date: '2026-03-07', local_time: '11:30' },
  ],
};

export function queueRoutes(queue: QueueService) {
  return [
    defineRoute({
      operationId: 'setBrandQueue',
      method: 'put',
      path: '/api/v1/workspaces/{wsId}/brands/{brandId}/queue',
      tag: 'Brands',
      summary: 'Set a brand\'s publishing queue',
      description: `Replaces the whole queue. ${ZONE_NOTE} Answers the stored queue with its next 10 free slots.`,
      auth: 'bearer',
      params: brandParams,
      body: queueInputSchema,
      success: { status: 200, description: 'The queue.', schema: queueSchema },
      example: { request: exampleQueue, response: exampleQueueAnswer },
      errors: ['not_found'],
      handle: ({ principal, params, body }) => queue.setQueue(principal, params.wsId, params.brandId, body),
    }),
    defineRoute({
      operationId: 'getBrandQueue',
      method: 'get',
      path: '/api/v1/workspaces/{wsId}/brands/{brandId}/queue',
      tag: 'Brands',
      summary: 'Get a brand\'s publishing queue',
      description: `${ZONE_NOTE} \`next_slots\` lists the next 10 free slots after now. A brand whose queue was never set answers an empty queue in UTC.`,
      auth: 'bearer',
      params: brandParams,
      success: { status: 200, description: 'The queue.', schema: queueSchema },
      example: { response: exampleQueueAnswer },
      errors: ['not_found'],
      handle: ({ principal, params }) => queue.getQueue(principal, params.wsId, params.brandId),
    }),
  ];
}
