import { queueBrandParamsSchema, queueSchema } from '../src/core/scheduling/queue.schema.js';
import { count, dashboardLink, defineTool } from './define-tool.js';

export const getQueueTool = defineTool({
  name: 'get_queue',
  title: 'Get a brand\'s publishing queue',
  description:
    'Returns a brand\'s publishing queue: its IANA time_zone, its weekly slots ({days, time}) and next_slots, the next 10 free slot instants after now ' +
    '(at is RFC 3339 with the zone\'s offset; local_date and local_time are in the queue\'s zone). Slot times are local to the queue\'s IANA zone, not UTC: ' +
    'across a daylight-saving change the offset in at changes. A brand whose queue was never set answers an empty queue in UTC. ' +
    'brand_id comes from list_brands; an unknown one answers not_found. Free: no meter is used.',
  permission: 'brands.read',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: queueBrandParamsSchema,
  outputSchema: queueSchema,
  summary(q) {
    const next = q.next_slots[0];
    return `Queue of brand ${q.brand_id} in ${q.time_zone}: ${count(q.slots.length, 'weekly slot')}${next ? `; next free slot ${next.local_date} ${next.local_time}` : ''}.`;
  },
  links: (q) => [dashboardLink.queue(q.brand_id)],
  handle: (input, { principal, services }) => services.queue.getQueue(principal, principal.workspaceId, input.brand_id),
});
