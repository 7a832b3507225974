import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeThreads, threadsEnv, type FakeThreads } from '../fakes/threads.js';
import { DashboardClient, textOf } from '../support/dashboard.js';
import { describeEachDb } from '../support/server.js';
import { addServiceEnv } from '../support/overrides.js';

let fake: FakeThreads;
const env: Record<string, string> = {};
beforeAll(async () => {
  fake = await startFakeThreads();
  addServiceEnv(env, threadsEnv(fake));
});
afterAll(() => fake.close());

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

describeEachDb('a browser back from a network consent screen', (server) => {
  async function started(key: string, wsId: string) {
    const brand = await server().request('POST', `/api/v1/workspaces/${wsId}/brands`, { key, body: { name: 'Live brand' } });
    const start = await server().request('POST', `/api/v1/workspaces/${wsId}/brands/${brand.body.id as string}/connections/oauth`, { key, body: { platform_slug: 'threads' } });
    const redirect = new URL(start.body.authorization_url as string).searchParams.get('redirect_uri')!;
    return `/api/v1/oauth/networks/threads/callback?code=${encodeURIComponent(fake.issueCode(redirect))}&state=${encodeURIComponent(start.body.state as string)}`;
  }

  it('signed in: lands on brands & connections with the new account named', async () => {
    const ws = await server().workspace();
    const client = new DashboardClient(server().url);
    await client.signIn(ws.api_key);
    const callback = await started(ws.api_key, ws.workspace_id);
    const res = await client.raw(callback, { headers: { accept: BROWSER_ACCEPT } });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/dashboard/brands');
    const page = await client.get('/dashboard/brands');
    expect(textOf(page.html)).toMatch(/Connected the Threads account “.+”/);
    const list = await server().request<{ data: { mode: string; status: string }[] }>('GET', `/api/v1/workspaces/${ws.workspace_id}/connections`, { key: ws.api_key });
    expect(list.body.data.map((c) => [c.mode, c.status])).toEqual([['live', 'active']]);
  });

  it('not signed in: a page saying the account is connected; a replayed state: a page saying why not', async () => {
    const ws = await server().workspace();
    const callback = await started(ws.api_key, ws.workspace_id);
    const first = await fetch(`${server().url}${callback}`, { headers: { accept: BROWSER_ACCEPT } });
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toContain('text/html');
    expect(textOf(await first.text())).toContain('Account connected');
    const again = await fetch(`${server().url}${callback}`, { headers: { accept: BROWSER_ACCEPT } });
    expect(again.status).toBe(400);
    const text = textOf(await again.text());
    expect(text).toContain('The account was not connected');
    expect(text).toContain('was already used');
  });

  it('both doors read the query with one schema: a state at its limit is looked up, one past it is refused (REST) or absent (the page)', async () => {
    const callback = (state: string) => `/api/v1/oauth/networks/threads/callback?code=c&state=${state}`;
    const page = async (state: string) => {
      const res = await fetch(`${server().url}${callback(state)}`, { headers: { accept: BROWSER_ACCEPT } });
      return { status: res.status, text: textOf(await res.text()) };
    };
    const atLimit = await page('s'.repeat(200));
    expect(atLimit.status).toBe(400);
    expect(atLimit.text).toContain('is unknown');
    const pastLimit = await page('s'.repeat(201));
    expect(pastLimit.status).toBe(400);
    expect(pastLimit.text).toContain('is required');
    const program = await server().request<{ error: string; fields: { path: string }[] }>('GET', callback('s'.repeat(201)));
    expect(program.status).toBe(400);
    expect(program.body.error).toBe('validation_failed');
    expect(program.body.fields.map((f) => f.path)).toEqual(['state']);
  });

  it('programs asking for JSON still get the REST answer', async () => {
    const ws = await server().workspace();
    const callback = await started(ws.api_key, ws.workspace_id);
    const res = await server().request('GET', callback);
    expect(res.status).toBe(200);
    expect(res.body.mode).toBe('live');
  });
}, env);
