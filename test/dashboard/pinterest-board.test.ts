import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { startFakePinterest } from '../fakes/pinterest.js';
import { DashboardClient, textOf } from '../support/dashboard.js';
import { describeEachDb, type TestServer } from '../support/server.js';
import { addServiceEnv } from '../support/overrides.js';

/**
 * The board a live Pinterest connection pins to, chosen in the dashboard: the same core service as
 * GET …/targets and PUT …/target, against the local fake of Pinterest, read back through REST.
 */
let pinterest: Awaited<ReturnType<typeof startFakePinterest>>;
const env: Record<string, string> = {};

beforeAll(async () => {
  pinterest = await startFakePinterest();
  pinterest.boards.push(
    { id: '5001', name: 'Recipes', privacy: 'PUBLIC', is_ads_only: false, owner: pinterest.user.username },
    { id: '5002', name: 'Travel', privacy: 'PUBLIC', is_ads_only: false, owner: pinterest.user.username },
    // Listed by Pinterest, but public pins cannot go there.
    { id: '5003', name: 'Drafts', privacy: 'PROTECTED', is_ads_only: false, owner: pinterest.user.username },
  );
  addServiceEnv(env, pinterest.serviceEnv);
});
afterAll(async () => {
  await pinterest.close();
});

/** Signs in, makes a brand and connects Pinterest live through the dashboard, as a browser does. */
async function connectedPinterest(server: TestServer) {
  const ws = await server.workspace();
  const client = new DashboardClient(server.url);
  await client.signIn(ws.api_key);
  await client.get('/dashboard/brands');
  const brands = await client.post('/dashboard/brands', { name: 'Pins' });
  const brandId = /<h2 id="brand-(brand_[^"]+)-h">Pins<\/h2>/.exec(brands.html)![1]!;

  const start = await client.raw(`/dashboard/brands/${brandId}/connections/live`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf: client.csrf!, platform_slug: 'pinterest' }).toString(),
  });
  expect(start.status).toBe(303);
  // The person approves on Pinterest, which sends the browser back to our callback.
  const consent = await fetch(start.headers.get('location')!, { redirect: 'manual' });
  expect(consent.status).toBe(302);
  const back = await client.raw(consent.headers.get('location')!, { headers: { accept: 'text/html' } });
  expect(back.headers.get('location')).toBe('/dashboard/brands');

  const page = await client.get('/dashboard/brands');
  const connId = /href="\/dashboard\/connections\/(conn_[^"/]+)\/board"/.exec(page.html)?.[1];
  expect(connId, 'the connection offers a board choice').toBeDefined();
  const rest = async () => {
    const base = `/api/v1/workspaces/${ws.workspace_id}/connections/${connId!}`;
    const [conn, targets] = await Promise.all([
      server.request<{ name: string; status: string }>('GET', base, { key: ws.api_key }),
      server.request<{ data: { id: string; current: boolean }[] }>('GET', `${base}/targets`, { key: ws.api_key }),
    ]);
    return { name: conn.body.name, current: targets.body.data.find((t) => t.current)?.id };
  };
  return { client, page, connId: connId!, rest };
}

const checkedBoard = (html: string) => /<input type="radio" id="board-\d+" name="target_id" value="([^"]+)" checked/.exec(html)?.[1];

describeEachDb(
  'dashboard: the board of a Pinterest connection',
  (server) => {
    it('the Brands page shows the current board; choosing another moves the connection there, as REST reads it', async () => {
      const { client, page, connId, rest } = await connectedPinterest(server());
      const user = pinterest.user.username;
      expect(textOf(page.html)).toContain(`Connected the Pinterest account “${user} · Recipes”.`);
      expect(textOf(page.html)).toContain('Board: Recipes');

      const chooser = await client.get(`/dashboard/connections/${connId}/board`);
      expect(chooser.status).toBe(200);
      expect(textOf(chooser.html)).toContain('Current board: Recipes');
      expect([...chooser.html.matchAll(/name="target_id" value="([^"]+)"/g)].map((m) => m[1])).toEqual(['5001', '5002']);
      expect(checkedBoard(chooser.html)).toBe('5001');
      expect(chooser.html).toMatch(new RegExp(`<form method="post" action="/dashboard/connections/${connId}/board">\\s*<input type="hidden" name="csrf"`));

      const moved = await client.post(`/dashboard/connections/${connId}/board`, { target_id: '5002' });
      expect(moved.url).toMatch(/\/dashboard\/brands$/);
      expect(textOf(moved.html)).toContain(`“${user} · Travel” now pins to the board “Travel”.`);
      expect(textOf(moved.html)).toContain('Board: Travel');
      expect(await rest()).toEqual({ name: `${user} · Travel`, current: '5002' });

      // Without the form's token nothing moves.
      const forged = await client.post(`/dashboard/connections/${connId}/board`, { target_id: '5001' }, { csrf: null });
      expect(forged.status).toBe(403);
      expect(await rest()).toEqual({ name: `${user} · Travel`, current: '5002' });
    });

    it('a board the account cannot pin to, and Pinterest failing to list boards, are refused in words and nothing moves', async () => {
      const { client, connId, rest } = await connectedPinterest(server());
      const user = pinterest.user.username;
      await client.get(`/dashboard/connections/${connId}/board`);

      const refused = await client.post(`/dashboard/connections/${connId}/board`, { target_id: '5003' });
      expect(refused.status).toBe(400);
      expect(textOf(/<p class="field-error" id="board-error">([\s\S]*?)<\/p>/.exec(refused.html)?.[1] ?? '')).toBe('That board is not one this account can publish public pins to.');
      expect(refused.html).toContain('aria-describedby="board-hint board-error"');
      expect(await rest()).toEqual({ name: `${user} · Recipes`, current: '5001' });

      pinterest.failNext({ method: 'GET', path: '/v5/boards', status: 503, body: { code: 1, message: 'Service unavailable' } });
      const unlisted = await client.get(`/dashboard/connections/${connId}/board`);
      expect(unlisted.status).toBe(400);
      const banner = textOf(/<div class="error-banner" role="alert">([\s\S]*?)<\/div>/.exec(unlisted.html)?.[1] ?? '');
      expect(banner).toMatch(/^connection: Pinterest did not list the places it can publish to: /);
      expect(banner).not.toContain('Service unavailable');
      expect(unlisted.html).not.toContain('name="target_id"');
      expect(unlisted.html).toContain(`<a href="/dashboard/connections/${connId}/board">Try again</a>`);
      expect(await rest()).toEqual({ name: `${user} · Recipes`, current: '5001' });
    });
  },
  env,
  () => ({ clock: new ManualClock(Date.now()), workers: false }),
);
