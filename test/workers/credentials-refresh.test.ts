import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { REFRESH_BEFORE_PUBLISH_MS } from '../../src/core/connections/token-refresh.js';
import { startFakeThreads, threadsEnv, type FakeThreads } from '../fakes/threads.js';
import { describeEachDb, type TestServer } from '../support/server.js';
import { addServiceEnv } from '../support/overrides.js';

/**
 * A publish on a live connection refreshes its token first when the token expires within
 * REFRESH_BEFORE_PUBLISH_MS (the rule lives in the core: networkConnect.credentialsFor), and uses it as is
 * otherwise. Through the fake Threads API, the real adapter, the worker and the container's wiring.
 */

let fake: FakeThreads;
const env: Record<string, string> = { ALLOW_LOCAL_URLS: 'true' };

beforeAll(async () => {
  fake = await startFakeThreads();
  addServiceEnv(env, threadsEnv(fake));
});
afterAll(async () => {
  await fake.close();
});

/** A live Threads connection made through the fake network's consent; returns its id. */
async function connectLive(server: TestServer, key: string, wsId: string, brandId: string): Promise<string> {
  const started = await server.request('POST', `/api/v1/workspaces/${wsId}/brands/${brandId}/connections/oauth`, { key, body: { platform_slug: 'threads' } });
  expect(started.status).toBe(200);
  const redirectUri = new URL(started.body.authorization_url as string).searchParams.get('redirect_uri')!;
  const code = fake.issueCode(redirectUri);
  const done = await server.request('GET', `/api/v1/oauth/networks/threads/callback?code=${encodeURIComponent(code)}&state=${encodeURIComponent(started.body.state as string)}`);
  expect(done.status).toBe(200);
  return done.body.id as string;
}

const refreshes = () => fake.requests.filter((r) => r.path === '/refresh_access_token').length;

describeEachDb(
  'token refresh before a publish',
  (server) => {
    async function publishAt(offsetBeforeExpiry: number) {
      const ws = await server().workspace();
      const brand = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name: 'Refresh' } });
      const connId = await connectLive(server(), ws.api_key, ws.workspace_id, brand.body.id as string);
      const before = await server().container.services.networkConnect.tokensOf(connId);
      (server().container.clock as ManualClock).set(before!.expiresAt! - offsetBeforeExpiry);
      const refreshesBefore = refreshes();
      const created = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
        key: ws.api_key,
        body: { brand_id: brand.body.id, target_platforms: ['threads'], content_type: 'text', text: 'Published with a fresh token.' },
      });
      expect(created.status).toBe(201);
      await server().settle();
      const content = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/contents/${created.body.content_id as string}`, { key: ws.api_key });
      const after = await server().container.services.networkConnect.tokensOf(connId);
      return { status: content.body.status as string, refreshed: refreshes() - refreshesBefore, before: before!, after: after! };
    }

    it('a token expiring just outside the window is used as is', async () => {
      const run = await publishAt(REFRESH_BEFORE_PUBLISH_MS + 60_000);
      expect(run.status).toBe('published');
      expect(run.refreshed).toBe(0);
      expect(run.after.accessToken).toBe(run.before.accessToken);
    });

    it('a token expiring inside the window is refreshed once before the publish, and the renewed token is stored', async () => {
      const run = await publishAt(REFRESH_BEFORE_PUBLISH_MS - 60_000);
      expect(run.status).toBe('published');
      expect(run.refreshed).toBe(1);
      expect(run.after.accessToken).not.toBe(run.before.accessToken);
      expect(run.after.expiresAt!).toBeGreaterThan(run.before.expiresAt!);
    });
  },
  env,
  () => ({ clock: new ManualClock(Date.now()), workers: false }),
);
