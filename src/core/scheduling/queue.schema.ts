import { z } from 'zod';
import { WEEKDAYS } from './queue-slots.js';
import { isTimeZone } from './zoned-time.js';

/** Most slots one queue holds: enough for several posts a day, small enough to compute on every read. */
export const MAX_QUEUE_SLOTS = 50;

/** How many upcoming slots a queue answer lists. */
export const NEXT_SLOTS_SHOWN = 10;

const timeZoneSchema = z
  .string()
  .max(64)
  .refine(isTimeZone, { message: 'unknown time zone; use an IANA name such as "America/New_York"' })
  .describe('IANA time zone name (e.g. America/New_York); slot times are local to it. Stored in its canonical spelling.');

const slotSchema = z
  .strictObject({
    days: z
      .array(z.enum(WEEKDAYS))
      .min(1)
      .max(7)
      .refine((days) => new Set(days).size === days.length, { message: 'days must not repeat' })
      .describe('Weekdays of the slot (sun … sat), at least one, each once.'),
    time: z
      .string()
      .regex(/^([01]\d|2[0-3]):[0-5]\d$/, { message: 'expected a local time HH:MM between 00:00 and 23:59' })
      .describe('Local wall-clock time HH:MM in the queue\'s zone. A time skipped by a DST change moves to the first instant after the gap; a repeated one is used once.'),
  })
  .meta({ id: 'QueueSlot' });

/** The body of setting a queue: the whole queue, replacing the previous one. */
export const queueInputSchema = z
  .strictObject({
    time_zone: timeZoneSchema,
    slots: z.array(slotSchema).max(MAX_QUEUE_SLOTS).describe(`Weekly slots, at most ${MAX_QUEUE_SLOTS}; an empty list empties the queue.`),
  })
  .meta({ id: 'QueueInput' });

export const nextSlotSchema = z
  .object({
    at: z.iso.datetime({ offset: true }).describe('The slot instant, RFC 3339 with the zone\'s offset at that instant.'),
    local_date: z.string().describe('Local calendar date YYYY-MM-DD in the queue\'s zone.'),
    local_time: z.string().describe('Local wall-clock time HH:MM in the queue\'s zone.'),
  })
  .meta({ id: 'NextSlot' });

export const queueSchema = z
  .object({
    brand_id: z.string().describe('Brand id (brand_…).'),
    time_zone: z.string().describe('IANA time zone name, canonical spelling.'),
    slots: z.array(z.object({ days: z.array(z.enum(WEEKDAYS)), time: z.string() })),
    next_slots: z.array(nextSlotSchema).describe(`The next ${NEXT_SLOTS_SHOWN} free slots after now, in order.`),
  })
  .meta({ id: 'Queue', description: 'A brand\'s publishing queue: weekly local times in one IANA time zone, and its next free slots.' });

export const queueBrandParamsSchema = z.strictObject({ brand_id: z.string().describe('Brand id (brand_…), from list_brands.') });

export type QueueInput = z.infer<typeof queueInputSchema>;
export type Queue = z.infer<typeof queueSchema>;
