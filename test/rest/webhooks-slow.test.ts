import { expect, it } from 'vitest';
import { brandWithConnections } from '../support/factories.js';
import { startReceiver } from '../support/receiver.js';
import { testDatabaseKinds } from '../support/databases.js';
import { startTestServer } from '../support/server.js';

/**
 * Real time, on purpose: a receiver that takes 25 s per answer and one that takes longer than the 30 s limit
 * must not delay a fast receiver, and the late one must count as a failed attempt.
 */
it('a slow (25 s) and a timing-out (31 s) receiver do not delay a fast one; the 30 s limit is a failure', async () => {
  const receiver = await startReceiver((path) => (path === '/slow' ? { delayMs: 25_000, status: 200 } : path === '/timeout' ? { delayMs: 31_000, status: 200 } : 200));
  const server = await startTestServer(testDatabaseKinds()[0]!, { ALLOW_LOCAL_URLS: 'true', WORKER_POLL_MS: '20', CONFIRM_INTERVAL_MS: '50', WEBHOOK_PER_ENDPOINT: '2' });
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
    expect(fastDone).toBeLessThan(5_000);
    // The slow and timing-out receivers got at most two requests each meanwhile (the per-endpoint cap).
    expect(receiver.received.filter((r) => r.path === '/slow').length).toBeLessThanOrEqual(2);

    const attemptsOf = async (whId: string) => {
      const res = await server.request('GET', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${whId}/deliveries`, { key: ws.api_key });
      return res.body.data as { status: string; attempts: { http_status: number | null; error: string | null; latency_ms: number }[] }[];
    };
    const timeoutSeen = async () => (await attemptsOf(hooks['/timeout']!)).some((d) => d.attempts.length > 0);
    const end = Date.now() + 40_000;
    while (!(await timeoutSeen()) && Date.now() < end) await new Promise((r) => setTimeout(r, 250));
    const timedOut = (await attemptsOf(hooks['/timeout']!)).find((d) => d.attempts.length > 0)!;
    expect(timedOut.status).toBe('pending');
    expect(timedOut.attempts[0]).toMatchObject({ http_status: null, error: 'The endpoint did not answer within 30 seconds.' });
    expect(timedOut.attempts[0]!.latency_ms).toBeGreaterThanOrEqual(29_500);
    const slow = await attemptsOf(hooks['/slow']!);
    expect(slow.filter((d) => d.status === 'delivered').length).toBeGreaterThanOrEqual(2);
  } finally {
    await receiver.close();
    await server.stop();
  }
}, 90_000);
