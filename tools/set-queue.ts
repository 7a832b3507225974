import { queueBrandParamsSchema, queueInputSchema, queueSchema } from '../src/core/scheduling/queue.schema.js';
import { count, dashboardLink, defineTool } from './define-tool.js';

export const setQueueTool = defineTool({
  name: 'set_queue',
  title: 'Set a brand\'s publishing queue',
  description:
    'Replaces a brand\'s whole publishing queue with weekly slots: time_zone is an IANA name (e.g. America/New_York, checked; stored canonical) and each slot ' +
    'is {days: ["mon", …] (sun–sat, at least one, no repeats), time: "HH:MM"}, a local wall-clock time in that zone, not UTC. A time skipped by a ' +
    'daylight-saving change moves to the first instant after the gap; a repeated one is used once. At most 50 slots; an empty list empties the queue. ' +
    'Answers the stored queue with its next 10 free slots, so the model can check the instants. Errors: validation_failed names the field ' +
    '(time_zone, slots[i].time, slots[i].days); not_found for an unknown brand_id (from list_brands). Free: no meter is used.',
  // Destructive: it replaces the whole queue, so slots the call does not repeat are gone (nothing keeps them).
  permission: 'brands.manage',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  inputSchema: queueBrandParamsSchema.extend(queueInputSchema.shape),
  outputSchema: queueSchema,
  summary(q) {
    const next = q.next_slots[0];
    return `Saved the queue of brand ${q.brand_id} in ${q.time_zone}: ${count(q.slots.length, 'weekly slot')}${next ? `; next free slot ${next.local_date} ${next.local_time}` : ''}.`;
  },
  links: (q) => [dashboardLink.queue(q.brand_id)],
  handle: ({ brand_id, ...queue }, { principal, services }) => services.queue.setQueue(principal, principal.workspaceId, brand_id, queue),
});
