import { describe, expect, it } from 'vitest';
import { dashboardDestination } from '../../src/dashboard/pages/sign-in.js';
import { DashboardClient } from '../support/dashboard.js';
import { describeEachDb } from '../support/server.js';

/**
 * After sign-in, `next` leads only to dashboard pages. A browser resolves the Location header with
 * the WHATWG URL parser, so every variant below is judged by where a browser would land, not by its spelling.
 */

/** Values that must fall back to /dashboard: each one leaves the dashboard, or is not a plain dashboard path. */
const REFUSED = [
  // dot segments, plain and percent-encoded (RFC 3986 §6.2.2.2 lets clients decode unreserved %2E)
  '/dashboard/../api/oauth/mcp/authorize?client_id=x&prompt=none',
  '/dashboard/..',
  '/dashboard/../',
  '/dashboard/./../api',
  '/dashboard/x/../../api',
  '/dashboard/%2e%2e/api',
  '/dashboard/%2E%2E/api',
  '/dashboard/.%2e/api',
  '/dashboard/%2e./api',
  '/dashboard/%2e/x',
  '/dashboard/x/..',
  '/dashboard/.',
  '/dashboard/..;/api',
  // encoded slashes and backslashes
  '/dashboard%2f..%2fapi',
  '/dashboard/%2F%2Fevil.invalid',
  '/dashboard/%5c..%5capi',
  '/dashboard\\..\\api',
  '/dashboard/..\\api',
  '/\\evil.invalid/dashboard',
  '\\\\evil.invalid\\dashboard',
  // other origins and schemes
  '//evil.invalid/dashboard',
  '///evil.invalid/dashboard',
  'https://evil.invalid/dashboard',
  'http:/dashboard',
  'javascript:alert(1)//dashboard',
  '/dashboard//evil.invalid',
  '/dashboard/x//y',
  // near misses of the prefix
  '/dashboardx',
  '/dashboard.evil',
  '/Dashboard',
  '/api/v1/platforms',
  'dashboard',
  '',
  // whitespace and control characters the URL parser strips or keeps
  ' /dashboard/../api',
  '/dashboard/\t../api',
  '/dashboard/.\n./api',
  '/dashboard?\r\nLocation: https://evil.invalid',
  '/dashboard/\u0000',
  '/dashboard/é',
  // fragments and backslashes in the query
  '/dashboard#//evil.invalid',
  '/dashboard?x=\\\\evil.invalid',
  // overlong
  `/dashboard/${'a'.repeat(3000)}`,
];

/** Values that must be kept exactly (ordinary dashboard addresses, with their query). */
const KEPT = [
  '/dashboard',
  '/dashboard/',
  '/dashboard/api-keys',
  '/dashboard/contents/0b6a5f5e-4b8e-4d8a-9a57-3c8f1f3e2a10',
  '/dashboard/contents?status=failed&cursor=abc%2Fdef',
  '/dashboard/brands?x=/../../api',
  '/dashboard/compose?text=a+b%20c',
];

describe('dashboardDestination', () => {
  it.each(REFUSED.map((v) => [JSON.stringify(v).slice(0, 80), v]))('refuses %s', (_label, value) => {
    expect(dashboardDestination(value)).toBe('/dashboard');
  });

  it.each(KEPT)('keeps %s', (value) => {
    expect(dashboardDestination(value)).toBe(value);
  });

  it('refuses values that are not strings', () => {
    for (const value of [undefined, null, 1, ['/dashboard/brands'], { toString: () => '/dashboard/brands' }]) expect(dashboardDestination(value)).toBe('/dashboard');
  });

  it('whatever it returns, a browser resolving it lands on /dashboard or below on our own origin', () => {
    const base = 'https://service.example';
    for (const value of [...REFUSED, ...KEPT]) {
      const url = new URL(dashboardDestination(value), base);
      expect(url.origin, value).toBe(base);
      expect(url.pathname === '/dashboard' || url.pathname.startsWith('/dashboard/'), value).toBe(true);
    }
  });
});

describeEachDb('sign-in redirect', (server) => {
  it('a dot-segment next after a genuine sign-in lands on the overview, not on the authorization endpoint', async () => {
    const ws = await server().workspace();
    const client = new DashboardClient(server().url);
    await client.get('/dashboard/sign-in?next=%2Fdashboard%2F..%2Fapi%2Foauth%2Fmcp%2Fauthorize%3Fclient_id%3Dx');
    // The form carries the refused value's replacement, and the POST is judged again on its own.
    const res = await client.raw('/dashboard/sign-in', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: client.csrf!, api_key: ws.api_key, next: '/dashboard/../api/oauth/mcp/authorize?client_id=x&prompt=none' }).toString(),
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/dashboard');

    // Signed in already: the GET form redirects at once, through the same check.
    for (const next of ['/dashboard/%2e%2e/api/v1/platforms', '/dashboard/..\\api', '//evil.invalid']) {
      const again = await client.raw(`/dashboard/sign-in?${new URLSearchParams({ next })}`);
      expect(again.status, next).toBe(303);
      expect(again.headers.get('location'), next).toBe('/dashboard');
    }
    const kept = await client.raw(`/dashboard/sign-in?${new URLSearchParams({ next: '/dashboard/contents?status=failed' })}`);
    expect(kept.headers.get('location')).toBe('/dashboard/contents?status=failed');
  });

  it('the sign-in form does not carry a refused next in its hidden field', async () => {
    const client = new DashboardClient(server().url);
    const page = await client.get(`/dashboard/sign-in?${new URLSearchParams({ next: '/dashboard/../api/oauth/mcp/authorize' })}`);
    expect(page.html).toContain('name="next" value="/dashboard"');
    expect(page.html).not.toContain('/api/oauth/mcp/authorize');
  });
});
