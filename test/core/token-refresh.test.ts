import { describe, expect, it } from 'vitest';
import { REFRESH_AHEAD_MS, REFRESH_BEFORE_PUBLISH_MS, refreshDue } from '../../src/core/connections/token-refresh.js';

/** The token refresh windows, as a table (the live suites hold them end to end through the fake networks). */
describe('token refresh windows', () => {
  const NOW = 10_000_000;
  const table: { name: string; expiresAt: number | null; window: number; want: boolean }[] = [
    { name: 'a token that never expires is never refreshed', expiresAt: null, window: REFRESH_BEFORE_PUBLISH_MS, want: false },
    { name: 'publish: expiring in more than 5 minutes: used as is', expiresAt: NOW + 5 * 60_000 + 1, window: REFRESH_BEFORE_PUBLISH_MS, want: false },
    { name: 'publish: expiring in exactly 5 minutes: used as is', expiresAt: NOW + 5 * 60_000, window: REFRESH_BEFORE_PUBLISH_MS, want: false },
    { name: 'publish: expiring in under 5 minutes: refreshed first', expiresAt: NOW + 5 * 60_000 - 1, window: REFRESH_BEFORE_PUBLISH_MS, want: true },
    { name: 'publish: already expired: refreshed first', expiresAt: NOW - 1, window: REFRESH_BEFORE_PUBLISH_MS, want: true },
    { name: 'sweep: expiring within a day: renewed', expiresAt: NOW + 86_400_000 - 1, window: REFRESH_AHEAD_MS, want: true },
    { name: 'sweep: expiring in exactly a day: left', expiresAt: NOW + 86_400_000, window: REFRESH_AHEAD_MS, want: false },
  ];

  it.each(table)('$name', ({ expiresAt, window, want }) => {
    expect(refreshDue(expiresAt, NOW, window)).toBe(want);
  });
});
