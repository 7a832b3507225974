import { expect, it } from 'vitest';
import { brandWithConnections } from '../support/factories.js';
import { startReceiver } from '../support/receiver.js';
import { testDatabaseKinds } from '../support/databases.js';
import { startTestServer } from '../support/server.js';
import { parseConfig } from '../../src/config.js';
import { overrides } from '../support/overrides.js';

/**
 * Real time, on purpose (sockets and timers, no manual clock): a receiver that answers just inside the time
 * limit and one that answers after it must not delay a fast receiver, and the late one must count as a failed
 * attempt. The limit is 30 s in service (checked below); the test runs the same race with a 3 s limit, scaled
 * down tenfold, so it does not hold a test worker idle for half a minute.
 */
it('the default limit is 30 s', () => {
  expect(parseConfig({ SECRET_KEY: '0f'.repeat(32) }).dispatcher.timeoutMs).toBe(30_000);
});

it('a slow (2.5 s) and a timing-out (3.1 s) receiver do not delay a fast one; the limit (3 s here) is a failure', async () => {
  const receiver = await startReceiver((path) => (path === '/slow' ? { delayMs: 2_500, status: 200 } : path === '/timeout' ? { delayMs: 3_100, status: 200 } : 200));
  const server = await startTestServer(testDatabaseKinds()[0]!, {
    ALLOW_LOCAL_URLS: 'true',
    ...overrides({ WORKER_POLL: '20ms', CONFIRM_INTERVAL: '50ms' }),
    WEBHOOK_PER_ENDPOINT: '2',
    WEBHOOK_TIMEOUT: '3s',
  });
  try {
    const { ws, brandId } = await brandWithConnections(server, ['linkedin']);
    const hooks: Record<string, string> = {};
    for (const path of ['/slow', '/timeout', '/fast']) {
      const res = await server.request('POST', `/api/v1/workspaces/${ws.workspace_id}/webhooks`, {
        key: ws.api_key,
        body: { url: `${receiver.url}${path}`, description: path, enabled_events: ['content.published'] },
      });
      hooks[path] = res.body.id as string;
    }
    const started = Date.now();
    for (let i = 0; i < 4; i++) {
      await server.request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
        key: ws.api_key,
        body: { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: `n${i}` },
      });
    }
    const until = async (check: () => boolean, ms: number) => {
      const end = Date.now() + ms;
      while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
      return check();
    };
    expect(await until(() => receiver.received.filter((r) => r.path === '/fast').length === 4, 10_000)).toBe(true);
    const fastDone = Math.max(...receiver.received.filter((r) => r.path === '/fast').map((r) => r.at)) - started;
    expect(fastDone).toBeLessThan(2_000);
    // The slow and timing-out receivers got at most two requests each meanwhile (the per-endpoint cap).
    expect(receiver.received.filter((r) => r.path === '/slow').length).toBeLessThanOrEqual(2);

    const attemptsOf = async (whId: string) => {
      const res = await server.request('GET', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${whId}/deliveries`, { key: ws.api_key });
      return res.body.data as { status: string; attempts: { http_status: number | null; error: string | null; latency_ms: number }[] }[];
    };
    const timeoutSeen = async () => (await attemptsOf(hooks['/timeout']!)).some((d) => d.attempts.length > 0);
    const end = Date.now() + 15_000;
    while (!(await timeoutSeen()) && Date.now() < end) await new Promise((r) => setTimeout(r, 250));
    const timedOut = (await attemptsOf(hooks['/timeout']!)).find((d) => d.attempts.length > 0)!;
    expect(timedOut.status).toBe('pending');
    expect(timedOut.attempts[0]).toMatchObject({ http_status: null, error: 'The endpoint did not answer within 3 seconds.' });
    expect(timedOut.attempts[0]!.latency_ms).toBeGreaterThanOrEqual(2_950);
    const slow = await attemptsOf(hooks['/slow']!);
    expect(slow.filter((d) => d.status === 'delivered').length).toBeGreaterThanOrEqual(2);
  } finally {
    await receiver.close();
    await server.stop();
  }
}, 40_000);
