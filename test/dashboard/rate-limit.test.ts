import { expect, it } from 'vitest';
import { DashboardClient, textOf } from '../support/dashboard.js';
import { describeEachDb } from '../support/server.js';

/**
 * The dashboard counts on the signed-in workspace's rate limit (spec 8), the same limiter the REST API and
 * MCP use, so a script holding a dashboard sign-in cannot escape the budget of the key it signed in with.
 */
const LIMIT = 10;

describeEachDb(
  'dashboard rate limit',
  (server) => {
    it('parallel signed-in pages past the limit get a 429 page in words with Retry-After; REST then shares the refusal', async () => {
      const ws = await server().workspace();
      const bystander = await server().workspace('bystander');
      const client = new DashboardClient(server().url);
      await client.signIn(ws.api_key); // the overview after sign-in counts once

      const answers = await Promise.all(Array.from({ length: 20 }, () => client.raw('/dashboard')));
      const statuses = answers.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(LIMIT - 1);
      expect(statuses.filter((s) => s === 429)).toHaveLength(20 - (LIMIT - 1));

      const refused = answers.find((r) => r.status === 429)!;
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60).toBe(true);
      expect(refused.headers.get('x-ratelimit-limit')).toBe(String(LIMIT));
      expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(refused.headers.get('content-type')).toMatch(/^text\/html/);
      expect(refused.headers.get('cache-control')).toBe('no-store');
      const text = textOf(await refused.text());
      expect(text).toContain('Too many requests');
      expect(text).toContain(`more than ${LIMIT} requests in the last minute`);
      expect(text).toMatch(/Wait \d+ seconds?/);
      expect(text).toContain('Nothing was changed');

      // One budget: the key the session was opened with is refused on the REST API too.
      const rest = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: ws.api_key });
      expect(rest.status).toBe(429);
      expect(rest.body.error).toBe('rate_limited');

      // Another workspace keeps its own budget.
      const other = new DashboardClient(server().url);
      expect((await other.signIn(bystander.api_key)).status).toBe(200);
    });

    it('once the REST API spent the budget, a dashboard form is refused before it runs and changes nothing', async () => {
      const ws = await server().workspace();
      const client = new DashboardClient(server().url);
      await client.signIn(ws.api_key); // 1
      const form = await client.get('/dashboard/brands'); // 2
      expect(form.status).toBe(200);
      for (let i = 0; i < LIMIT - 2; i++) {
        const res = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key });
        expect(res.status).toBe(200);
      }
      const page = await client.post('/dashboard/brands', { name: 'Over the limit' });
      expect(page.status).toBe(429);
      expect(page.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(textOf(page.html)).toContain('Too many requests');
      const brands = await server().container.db.kysely.selectFrom('brands').select('name').where('workspace_id', '=', ws.workspace_id).execute();
      expect(brands.map((b) => b.name)).not.toContain('Over the limit');
    });

    it('signed-in answers carry the workspace rate-limit headers, counted with the REST API', async () => {
      const ws = await server().workspace();
      const client = new DashboardClient(server().url);
      await client.signIn(ws.api_key); // 1
      const rest = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key }); // 2
      expect(rest.headers.get('x-ratelimit-remaining')).toBe(String(LIMIT - 2));
      const page = await client.raw('/dashboard/brands'); // 3
      expect(page.status).toBe(200);
      expect(page.headers.get('x-ratelimit-remaining')).toBe(String(LIMIT - 3));
    });
  },
  { RATE_LIMIT_PER_MINUTE: String(LIMIT) },
);
