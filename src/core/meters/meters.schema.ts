import { z } from 'zod';
import { METERS } from './plans.js';

export const meterUsageSchema = z
  .object({
    meter: z.enum(METERS as [string, ...string[]]).describe('Meter name (spec 7.3).'),
    kind: z.enum(['stock', 'cycle']).describe('stock: counts what exists; cycle: counts what was done this plan cycle.'),
    limit: z.number().int().describe('Ceiling of the workspace plan (media_storage in bytes).'),
    used: z.number().int(),
    cycle_end: z.iso.datetime().nullable().describe('For cycle meters: when the count resets (ISO 8601 UTC).'),
  })
  .meta({ id: 'MeterUsage' });

export const usageSchema = z
  .object({ plan: z.string(), cycle_end: z.iso.datetime(), meters: z.array(meterUsageSchema) })
  .meta({ id: 'Usage' });

export type Usage = z.infer<typeof usageSchema>;
