import { describe, expect, it } from 'vitest';
import { nextSlots, type QueueDefinition } from '../../src/core/scheduling/queue-slots.js';
import { canonicalTimeZone, instantOf, isTimeZone, localOf } from '../../src/core/scheduling/zoned-time.js';
import { ServiceError } from '../../src/core/errors.js';

/**
 * Zone rules from the platform's time zone database, checked instant by instant against the published 2026
 * transitions (README, Scheduling, "Time zones"): New York 2026-03-08 / 2026-11-01, Berlin 2026-03-29 /
 * 2026-10-25, Lord Howe's 30-minute shift 2026-04-05 / 2026-10-04. A fixed-offset implementation fails every
 * across-the-transition expectation.
 */

const z = (iso: string): number => Date.parse(iso);
const iso = (ms: number): string => new Date(ms).toISOString();
const daily = (time_zone: string, time = '09:00'): QueueDefinition => ({
  time_zone,
  slots: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], time }],
});

describe('instantOf', () => {
  it('maps ordinary local times with the offset in force on that date', () => {
    expect(iso(instantOf('2026-03-07', '09:00', 'America/New_York'))).toBe('2026-03-07T14:00:00.000Z');
    expect(iso(instantOf('2026-03-08', '09:00', 'America/New_York'))).toBe('2026-03-08T13:00:00.000Z');
    expect(iso(instantOf('2026-03-28', '09:00', 'Europe/Berlin'))).toBe('2026-03-28T08:00:00.000Z');
    expect(iso(instantOf('2026-03-29', '09:00', 'Europe/Berlin'))).toBe('2026-03-29T07:00:00.000Z');
  });

  it('a nonexistent local time (spring forward) gives the first instant after the gap', () => {
    expect(iso(instantOf('2026-03-08', '02:30', 'America/New_York'))).toBe('2026-03-08T07:00:00.000Z');
    expect(iso(instantOf('2026-03-08', '02:00', 'America/New_York'))).toBe('2026-03-08T07:00:00.000Z');
    expect(localOf(instantOf('2026-03-08', '02:30', 'America/New_York'), 'America/New_York')).toEqual({ date: '2026-03-08', time: '03:00', offset: '-04:00' });
    expect(iso(instantOf('2026-03-29', '02:30', 'Europe/Berlin'))).toBe('2026-03-29T01:00:00.000Z');
    expect(localOf(z('2026-03-29T01:00:00Z'), 'Europe/Berlin')).toEqual({ date: '2026-03-29', time: '03:00', offset: '+02:00' });
  });

  it('a repeated local time (fall back) gives its first occurrence', () => {
    expect(iso(instantOf('2026-11-01', '01:30', 'America/New_York'))).toBe('2026-11-01T05:30:00.000Z');
    expect(localOf(z('2026-11-01T05:30:00Z'), 'America/New_York')).toEqual({ date: '2026-11-01', time: '01:30', offset: '-04:00' });
    expect(localOf(z('2026-11-01T06:30:00Z'), 'America/New_York')).toEqual({ date: '2026-11-01', time: '01:30', offset: '-05:00' });
    expect(iso(instantOf('2026-10-25', '02:30', 'Europe/Berlin'))).toBe('2026-10-25T00:30:00.000Z');
    expect(iso(instantOf('2026-10-25', '03:00', 'Europe/Berlin'))).toBe('2026-10-25T02:00:00.000Z');
  });

  it('handles 30- and 45-minute offsets', () => {
    expect(iso(instantOf('2026-06-01', '09:00', 'Asia/Kolkata'))).toBe('2026-06-01T03:30:00.000Z');
    expect(iso(instantOf('2026-06-01', '09:00', 'Asia/Kathmandu'))).toBe('2026-06-01T03:15:00.000Z');
    expect(localOf(z('2026-06-01T03:15:00Z'), 'Asia/Kathmandu')).toEqual({ date: '2026-06-01', time: '09:00', offset: '+05:45' });
    expect(localOf(z('2026-06-01T20:00:00Z'), 'Asia/Kolkata')).toEqual({ date: '2026-06-02', time: '01:30', offset: '+05:30' });
  });

  it("handles Lord Howe's 30-minute daylight-saving shift", () => {
    const zone = 'Australia/Lord_Howe';
    // Back from +11:00 to +10:30 at 02:00 on 2026-04-05: 01:30–02:00 happens twice.
    expect(iso(instantOf('2026-04-05', '01:45', zone))).toBe('2026-04-04T14:45:00.000Z');
    expect(localOf(z('2026-04-04T15:15:00Z'), zone)).toEqual({ date: '2026-04-05', time: '01:45', offset: '+10:30' });
    // Forward from +10:30 to +11:00 at 02:00 on 2026-10-04: 02:00–02:30 does not exist.
    expect(iso(instantOf('2026-10-04', '02:15', zone))).toBe('2026-10-03T15:30:00.000Z');
    expect(localOf(z('2026-10-03T15:30:00Z'), zone)).toEqual({ date: '2026-10-04', time: '02:30', offset: '+11:00' });
    expect(iso(instantOf('2026-04-04', '09:00', zone))).toBe('2026-04-03T22:00:00.000Z');
    expect(iso(instantOf('2026-04-05', '09:00', zone))).toBe('2026-04-04T22:30:00.000Z');
  });

  it('refuses unknown zones, fixed offsets, malformed times and impossible dates as validation_failed', () => {
    const refused = (fn: () => unknown, path: string): void => {
      try {
        fn();
      } catch (error) {
        expect(error).toBeInstanceOf(ServiceError);
        expect((error as ServiceError).code).toBe('validation_failed');
        expect((error as ServiceError).extra).toMatchObject({ fields: [{ path }] });
        return;
      }
      throw new Error(`expected a refusal on ${path}`);
    };
    refused(() => instantOf('2026-03-08', '09:00', 'Mars/Olympus_Mons'), 'time_zone');
    refused(() => instantOf('2026-03-08', '09:00', '+05:00'), 'time_zone');
    refused(() => instantOf('2026-03-08', '09:00', ''), 'time_zone');
    refused(() => localOf(0, 'Not/AZone'), 'time_zone');
    for (const time of ['24:00', '9:00', '09:60', '09:00:00', 'nine', ''])
      refused(() => instantOf('2026-03-08', time, 'UTC'), 'time');
    for (const date of ['2026-02-30', '2026-13-01', '26-03-08', '2026-3-8'])
      refused(() => instantOf(date, '09:00', 'UTC'), 'date');
    refused(() => nextSlots({ time_zone: 'Nowhere/City', slots: [] }, 0, 1), 'time_zone');
    refused(() => nextSlots({ time_zone: 'UTC', slots: [{ days: ['mon'], time: '25:00' }] }, 0, 1), 'slots[0].time');
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('Europe/Atlantis')).toBe(false);
    expect(canonicalTimeZone('america/new_york')).toBe('America/New_York');
  });
});

describe('nextSlots', () => {
  it('daily 09:00 in New York across both 2026 transitions, instant by instant', () => {
    const spring = nextSlots(daily('America/New_York'), z('2026-03-06T15:00:00Z'), 4).map(iso);
    expect(spring).toEqual(['2026-03-07T14:00:00.000Z', '2026-03-08T13:00:00.000Z', '2026-03-09T13:00:00.000Z', '2026-03-10T13:00:00.000Z']);
    const fall = nextSlots(daily('America/New_York'), z('2026-10-30T14:00:00Z'), 4).map(iso);
    expect(fall).toEqual(['2026-10-31T13:00:00.000Z', '2026-11-01T14:00:00.000Z', '2026-11-02T14:00:00.000Z', '2026-11-03T14:00:00.000Z']);
  });

  it('daily 09:00 in Berlin across both 2026 transitions, instant by instant', () => {
    const spring = nextSlots(daily('Europe/Berlin'), z('2026-03-27T09:00:00Z'), 3).map(iso);
    expect(spring).toEqual(['2026-03-28T08:00:00.000Z', '2026-03-29T07:00:00.000Z', '2026-03-30T07:00:00.000Z']);
    const fall = nextSlots(daily('Europe/Berlin'), z('2026-10-23T08:00:00Z'), 3).map(iso);
    expect(fall).toEqual(['2026-10-24T07:00:00.000Z', '2026-10-25T08:00:00.000Z', '2026-10-26T08:00:00.000Z']);
  });

  it('a nonexistent slot time yields the instant after the gap, once, even from two definitions', () => {
    const queue: QueueDefinition = { time_zone: 'America/New_York', slots: [{ days: ['sun'], time: '02:15' }, { days: ['sun'], time: '02:45' }] };
    const slots = nextSlots(queue, z('2026-03-07T00:00:00Z'), 2).map(iso);
    // 2026-03-08 collapses to one slot at 03:00 EDT; the next Sunday has both.
    expect(slots).toEqual(['2026-03-08T07:00:00.000Z', '2026-03-15T06:15:00.000Z']);
    expect(nextSlots(daily('Europe/Berlin', '02:30'), z('2026-03-28T12:00:00Z'), 2).map(iso)).toEqual(['2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z']);
  });

  it('a repeated slot time yields one slot, at its first occurrence', () => {
    const ny = nextSlots(daily('America/New_York', '01:30'), z('2026-10-31T12:00:00Z'), 2).map(iso);
    expect(ny).toEqual(['2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z']);
    const berlin = nextSlots(daily('Europe/Berlin', '02:30'), z('2026-10-24T12:00:00Z'), 2).map(iso);
    expect(berlin).toEqual(['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z']);
    // Starting between the two occurrences: the first was the slot, the second is not another one.
    expect(nextSlots(daily('America/New_York', '01:30'), z('2026-11-01T06:00:00Z'), 1).map(iso)).toEqual(['2026-11-02T06:30:00.000Z']);
  });

  it('is strictly after `from`, chronological across definitions, deduplicated and skips taken slots', () => {
    const queue: QueueDefinition = {
      time_zone: 'Europe/Berlin',
      slots: [
        { days: ['mon', 'wed'], time: '18:00' },
        { days: ['mon'], time: '09:00' },
        { days: ['mon'], time: '09:00' },
      ],
    };
    const from = z('2026-06-01T07:00:00Z'); // Monday 09:00 CEST, exactly a slot
    expect(nextSlots(queue, from, 3).map(iso)).toEqual(['2026-06-01T16:00:00.000Z', '2026-06-03T16:00:00.000Z', '2026-06-08T07:00:00.000Z']);
    const taken = new Set([z('2026-06-01T16:00:00Z'), z('2026-06-08T07:00:00Z')]);
    expect(nextSlots(queue, from, 3, taken).map(iso)).toEqual(['2026-06-03T16:00:00.000Z', '2026-06-08T16:00:00.000Z', '2026-06-10T16:00:00.000Z']);
    expect(nextSlots(queue, from, 0)).toEqual([]);
    expect(nextSlots({ time_zone: 'UTC', slots: [{ days: [], time: '09:00' }] }, from, 5)).toEqual([]);
  });

  it('a year of daily slots has no drift: 365 (or 366) slots, each at 09:00 local on consecutive dates', () => {
    for (const [zone, year, days] of [['America/New_York', 2026, 365], ['Europe/Berlin', 2026, 365], ['Europe/Berlin', 2028, 366], ['Asia/Kathmandu', 2026, 365], ['Australia/Lord_Howe', 2026, 365]] as const) {
      const start = instantOf(`${year}-01-01`, '00:00', zone);
      const end = instantOf(`${year + 1}-01-01`, '00:00', zone);
      const slots = nextSlots(daily(zone), start, 400).filter((instant) => instant < end);
      expect(slots, zone).toHaveLength(days);
      const locals = slots.map((instant) => localOf(instant, zone));
      expect(locals.every((local) => local.time === '09:00'), zone).toBe(true);
      expect(new Set(locals.map((local) => local.date)).size, zone).toBe(days);
      expect(locals[0]?.date).toBe(`${year}-01-01`);
      expect(locals.at(-1)?.date).toBe(`${year}-12-31`);
      expect(slots.every((instant, i) => i === 0 || instant > (slots[i - 1] ?? Infinity)), zone).toBe(true);
    }
  });
});
