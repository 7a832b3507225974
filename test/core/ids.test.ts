import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { newId, newTimeOrderedId, newTimeOrderedUuid } from '../../src/core/ids.js';

describe('time-ordered ids', () => {
  const instants = [0, 1, 31, 32, 1_000, Date.parse('2026-11-23T13:00:00Z'), Date.parse('2026-11-23T13:00:00.001Z'), Date.parse('2099-12-31T23:59:59.999Z')];

  it('job ids keep the shape of the random ones and sort by their millisecond', () => {
    const ids = instants.map((t) => newTimeOrderedId('job_', t));
    for (const id of ids) expect(id).toMatch(/^job_[0-9a-hjkmnp-tv-z]{20}$/);
    expect(newId('job_')).toHaveLength(ids[0]!.length);
    expect([...ids].sort()).toEqual(ids);
    // Within one millisecond they still differ (50 random bits).
    expect(new Set(Array.from({ length: 1000 }, () => newTimeOrderedId('job_', 5))).size).toBe(1000);
  });

  it('content ids are version 7 UUIDs that the API schema accepts and that sort by their millisecond', () => {
    const ids = instants.map((t) => newTimeOrderedUuid(t));
    for (const id of ids) {
      expect(z.uuid().safeParse(id).success).toBe(true);
      expect(id[14]).toBe('7');
      expect('89ab').toContain(id[19]);
    }
    expect([...ids].sort()).toEqual(ids);
    expect(ids[5]!.replace(/-/g, '').slice(0, 12)).toBe(Date.parse('2026-11-23T13:00:00Z').toString(16).padStart(12, '0'));
    expect(new Set(Array.from({ length: 1000 }, () => newTimeOrderedUuid(5))).size).toBe(1000);
  });
});
