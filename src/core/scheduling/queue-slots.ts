import { ServiceError } from '../errors.js';
import { addDays, instantOf, localOf, parseLocalTime, requireTimeZone, weekdayOf } from './zoned-time.js';

/** Weekday names as the queue contract spells them (`PUT …/brands/{brandId}/queue`), in `Date#getUTCDay` order. */
export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** A brand's publishing queue: weekly local times in one IANA zone. */
export interface QueueDefinition {
  time_zone: string;
  slots: ReadonlyArray<{ days: readonly Weekday[]; time: string }>;
}

/** Local days looked at past the last needed one, so a slot of a later date that lands earlier is still seen. */
const SETTLE_DAYS = 2;

/**
 * The next `count` free slot instants (epoch ms) of the queue strictly after `from`, in chronological order, each
 * once: a local time that occurs twice yields one slot (its first occurrence), a nonexistent one yields the first
 * instant after the gap, and definitions that land on the same instant yield one slot. Instants in `taken` are
 * skipped. A queue without any day gives no slots.
 * @throws ServiceError validation_failed when the zone (`time_zone`), a time (`slots[i].time`) or a day
 *   (`slots[i].days[j]`) is invalid.
 */
export function nextSlots(queue: QueueDefinition, from: number, count: number, taken: ReadonlySet<number> = new Set()): number[] {
  requireTimeZone(queue.time_zone);
  const byWeekday: string[][] = WEEKDAYS.map(() => []);
  queue.slots.forEach((slot, i) => {
    parseLocalTime(slot.time, `slots[${i}].time`);
    slot.days.forEach((day, j) => {
      const index = WEEKDAYS.indexOf(day);
      if (index < 0) {
        const message = `expected one of ${WEEKDAYS.join(', ')}, got ${JSON.stringify(day)}`;
        throw new ServiceError('validation_failed', `slots[${i}].days[${j}]: ${message}`, { fields: [{ path: `slots[${i}].days[${j}]`, message }] });
      }
      byWeekday[index]?.push(slot.time);
    });
  });
  if (count <= 0 || byWeekday.every((times) => times.length === 0)) return [];

  const found = new Set<number>();
  // Start a day early: the local date of `from` may already hold slots, and a zone's day boundaries do not follow
  // UTC's. Every week with a slot day adds at least one new instant, so the loop ends.
  let date = addDays(localOf(from, queue.time_zone).date, -1);
  let settle = SETTLE_DAYS + 1;
  while (settle > 0) {
    for (const time of byWeekday[weekdayOf(date)] ?? []) {
      const instant = instantOf(date, time, queue.time_zone);
      if (instant > from && !taken.has(instant)) found.add(instant);
    }
    if (found.size >= count) settle -= 1;
    date = addDays(date, 1);
  }
  return [...found].sort((a, b) => a - b).slice(0, count);
}
