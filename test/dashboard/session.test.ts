import { expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { DashboardClient, textOf } from '../support/dashboard.js';
import { testDatabaseKinds } from '../support/databases.js';
import { describeEachDb, startTestServer } from '../support/server.js';

const clock = new ManualClock(Date.UTC(2026, 10, 21, 12));

describeEachDb(
  'dashboard sign-in, sessions and CSRF',
  (server) => {
    it('signs in with an API key, shows the overview and never echoes the key', async () => {
      const ws = await server().workspace();
      const client = new DashboardClient(server().url);
      const page = await client.signIn(ws.api_key);
      expect(textOf(page.html)).toContain('Overview');
      expect(page.html).not.toContain(ws.api_key);
      const cookie = page.headers.get('content-security-policy');
      expect(cookie).toContain("script-src 'self'");
      expect(client.cookie('svc_session')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      // The session is stored as a digest only.
      const rows = await server().container.db.kysely.selectFrom('dashboard_sessions').selectAll().execute();
      expect(rows.map((r) => r.token_digest)).not.toContain(client.cookie('svc_session'));
    });

    it('sets the session cookie HttpOnly, SameSite=Lax, scoped to /dashboard', async () => {
      const ws = await server().workspace();
      const client = new DashboardClient(server().url);
      await client.get('/dashboard/sign-in');
      const res = await client.raw('/dashboard/sign-in', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf: client.csrf!, api_key: ws.api_key, next: '/dashboard' }).toString(),
      });
      expect(res.status).toBe(303);
      const line = res.headers.getSetCookie().find((l) => l.startsWith('svc_session='))!;
      expect(line).toMatch(/HttpOnly/);
      expect(line).toMatch(/SameSite=Lax/);
      expect(line).toMatch(/Path=\/dashboard/);
      expect(line).not.toMatch(/Secure/); // BASE_URL is http here
    });

    it('a wrong key gets a clear page with 401, not a stack trace', async () => {
      const client = new DashboardClient(server().url);
      await client.get('/dashboard/sign-in');
      const page = await client.post('/dashboard/sign-in', { api_key: 'svc_live_00000000000000000000000000000000', next: '/dashboard' });
      expect(page.status).toBe(401);
      expect(textOf(page.html)).toContain('That API key is not valid');
      expect(page.html).not.toContain('svc_live_00000000000000000000000000000000');
      expect(client.cookie('svc_session')).toBeUndefined();
    });

    it('pages need a session: a visitor is sent to sign-in and comes back after', async () => {
      const ws = await server().workspace();
      const client = new DashboardClient(server().url);
      const page = await client.get('/dashboard/api-keys');
      expect(page.url).toMatch(/\/dashboard\/sign-in\?next=%2Fdashboard%2Fapi-keys$/);
      const after = await client.post('/dashboard/sign-in', { api_key: ws.api_key, next: '/dashboard/api-keys' });
      expect(after.url).toMatch(/\/dashboard\/api-keys$/);
      // No open redirect through `next`.
      const other = new DashboardClient(server().url);
      await other.get('/dashboard/sign-in');
      const evil = await other.post('/dashboard/sign-in', { api_key: ws.api_key, next: '//evil.example/x' });
      expect(evil.url).toMatch(/\/dashboard$/);
    });

    it('the bare address leads a visitor to a plain sign-in address', async () => {
      for (const path of ['/', '/dashboard']) {
        const page = await new DashboardClient(server().url).get(path);
        expect(page.status).toBe(200);
        expect(new URL(page.url).pathname + new URL(page.url).search).toBe('/dashboard/sign-in');
      }
    });

    it('an expired session (idle past its deadline on the injected clock) says so on the sign-in page', async () => {
      const ws = await server().workspace();
      const client = new DashboardClient(server().url);
      await client.signIn(ws.api_key);
      clock.advance(59 * 60_000);
      expect((await client.get('/dashboard/api-keys')).url).toMatch(/\/dashboard\/api-keys$/);
      clock.advance(61 * 60_000);
      const page = await client.get('/dashboard/api-keys');
      expect(page.url).toContain('/dashboard/sign-in?reason=expired');
      expect(textOf(page.html)).toContain('Your session expired');
      // A form posted after expiry gets a page that says what happened.
      const posted = await client.post('/dashboard/api-keys', { name: 'late' });
      expect(posted.status).toBe(401);
      expect(textOf(posted.html)).toContain('Your session ended');
    });

    it('a session ends after its maximum length even when active', async () => {
      const ws = await server().workspace();
      const client = new DashboardClient(server().url);
      await client.signIn(ws.api_key);
      for (let i = 0; i < 12; i++) {
        clock.advance(59 * 60_000);
        expect((await client.get('/dashboard')).url).toMatch(/\/dashboard$/);
      }
      clock.advance(59 * 60_000);
      expect((await client.get('/dashboard')).url).toContain('reason=expired');
    });

    it('a form without its CSRF token, or with another session\'s, is refused with a clear page and changes nothing', async () => {
      const ws = await server().workspace();
      const client = new DashboardClient(server().url);
      await client.signIn(ws.api_key);
      const before = await server().container.services.apiKeys.list({ kind: 'api_key', workspaceId: ws.workspace_id, keyId: ws.key_id, role: 'admin', brandIds: null }, ws.workspace_id);
      const missing = await client.post('/dashboard/api-keys', { name: 'forged' }, { csrf: null });
      expect(missing.status).toBe(403);
      expect(textOf(missing.html)).toContain('This form could not be accepted');
      const other = new DashboardClient(server().url);
      await other.signIn((await server().workspace()).api_key);
      const foreign = await client.post('/dashboard/api-keys', { name: 'forged' }, { csrf: other.csrf! });
      expect(foreign.status).toBe(403);
      const after = await server().container.services.apiKeys.list({ kind: 'api_key', workspaceId: ws.workspace_id, keyId: ws.key_id, role: 'admin', brandIds: null }, ws.workspace_id);
      expect(after.data).toHaveLength(before.data.length);
      // The sign-in form is protected too (double-submit cookie).
      const fresh = new DashboardClient(server().url);
      const noCookie = await fresh.post('/dashboard/sign-in', { api_key: ws.api_key, csrf: 'x'.repeat(32) });
      expect(noCookie.status).toBe(403);
      expect(fresh.cookie('svc_session')).toBeUndefined();
    });

    it('signs out: the cookie is cleared and the session is gone on the server', async () => {
      const ws = await server().workspace();
      const client = new DashboardClient(server().url);
      await client.signIn(ws.api_key);
      const stolen = client.cookie('svc_session')!;
      const page = await client.post('/dashboard/sign-out', {});
      expect(textOf(page.html)).toContain('You signed out');
      expect(client.cookie('svc_session')).toBeUndefined();
      const replay = await fetch(`${server().url}/dashboard`, { headers: { cookie: `svc_session=${stolen}` }, redirect: 'manual' });
      expect(replay.status).toBe(303);
      expect(replay.headers.get('location')).toContain('/dashboard/sign-in');
    });

    it('revoking the key of a session ends that session; rotating from the dashboard keeps it on the new key', async () => {
      const ws = await server().workspace();
      const client = new DashboardClient(server().url);
      await client.signIn(ws.api_key);
      await client.get('/dashboard/api-keys');
      const rotated = await client.post('/dashboard/api-keys', { name: 'rotated', revoke_others: 'true' });
      expect(rotated.status).toBe(201);
      const newKey = /value="(svc_live_[0-9a-f]{32})"/.exec(rotated.html)?.[1];
      expect(newKey).toBeDefined();
      expect(textOf(rotated.html)).toContain('this session now uses the new key');
      // The old key is dead for the API; the session carries on.
      const api = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: ws.api_key });
      expect(api.status).toBe(401);
      expect((await client.get('/dashboard/api-keys')).url).toMatch(/\/dashboard\/api-keys$/);
      // The key is shown once: the list never shows it again.
      expect((await client.get('/dashboard/api-keys')).html).not.toContain(newKey!);
      // Revoked elsewhere (through the API), the session ends with a clear reason.
      const other = await server().request<{ api_key: string }>('POST', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: newKey!, body: { name: 'other' } });
      const keys = await server().request<{ data: { id: string; name: string }[] }>('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: other.body.api_key });
      const rotatedId = keys.body.data.find((k) => k.name === 'rotated')!.id;
      await server().request('DELETE', `/api/v1/workspaces/${ws.workspace_id}/api-keys/${rotatedId}`, { key: other.body.api_key });
      const ended = await client.get('/dashboard');
      expect(ended.url).toContain('reason=key_revoked');
      expect(textOf(ended.html)).toContain('was revoked');
    });

    it('unknown dashboard pages and malformed forms get dashboard pages, not JSON', async () => {
      const ws = await server().workspace();
      const client = new DashboardClient(server().url);
      await client.signIn(ws.api_key);
      const missing = await client.get('/dashboard/no-such-page');
      expect(missing.status).toBe(404);
      expect(missing.headers.get('content-type')).toContain('text/html');
      const huge = await client.raw('/dashboard/api-keys', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `csrf=${client.csrf}&name=${'x'.repeat(400_000)}` });
      expect(huge.status).toBe(413);
      expect(huge.headers.get('content-type')).toContain('text/html');
    });
  },
  {},
  () => ({ clock }),
);

it('behind https (BASE_URL https://…) the session cookie is Secure', async () => {
  const server = await startTestServer(testDatabaseKinds()[0]!, { BASE_URL: 'https://publisher.example' });
  try {
    const ws = await server.workspace();
    const client = new DashboardClient(server.url);
    await client.get('/dashboard/sign-in');
    const res = await client.raw('/dashboard/sign-in', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: client.csrf!, api_key: ws.api_key, next: '/dashboard' }).toString(),
    });
    expect(res.status).toBe(303);
    const line = res.headers.getSetCookie().find((l) => l.startsWith('svc_session='))!;
    expect(line).toMatch(/; Secure/);
    expect(line).toMatch(/HttpOnly/);
  } finally {
    await server.stop();
  }
});
