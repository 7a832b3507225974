import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { linkedinVersionAgeMonths, linkedinVersionWarning } from '../../src/networks/linkedin/version.js';

const at = (iso: string) => Date.parse(iso);

describe('LinkedIn API version age', () => {
  it('counts whole months between the version and the clock, in UTC', () => {
    expect(linkedinVersionAgeMonths('202610', at('2026-11-28T02:00:00Z'))).toBe(1);
    expect(linkedinVersionAgeMonths('202510', at('2026-11-01T00:00:00Z'))).toBe(13);
    expect(linkedinVersionAgeMonths('202512', at('2026-01-01T00:00:00Z'))).toBe(1);
    expect(linkedinVersionAgeMonths('2025-10', at('2026-11-01T00:00:00Z'))).toBeNull();
    expect(linkedinVersionAgeMonths('202513', at('2026-11-01T00:00:00Z'))).toBeNull();
  });

  it('is quiet up to 11 months and warns from 12, naming the variable and the age', () => {
    const now = at('2026-11-15T12:00:00Z');
    expect(linkedinVersionWarning('202612', now)).toBeNull();
    expect(linkedinVersionWarning('202512', now)).toBeNull();
    expect(linkedinVersionWarning('202511', now)).toMatch(/^LINKEDIN_API_VERSION 202511 is 12 months old; .*426/);
    expect(linkedinVersionWarning('202510', now)).toContain('13 months old');
    expect(linkedinVersionWarning('latest', now)).toMatch(/not a LinkedIn version \(YYYYMM/);
  });

  it('the default version is within LinkedIn\'s window in November 2026', () => {
    const version = parseConfig({}).networks.linkedin.apiVersion ?? '';
    expect(linkedinVersionWarning(version, at('2026-11-30T23:59:59Z'))).toBeNull();
  });
});
