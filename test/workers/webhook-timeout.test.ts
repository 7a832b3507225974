import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { describeAttempt, durationWords } from '../../src/core/webhooks/retry-policy.js';
import { brandWithConnections } from '../support/factories.js';
import { startReceiver } from '../support/receiver.js';
import { describeEachDb } from '../support/server.js';

/** An attempt that timed out records the limit it ran under (WEBHOOK_TIMEOUT), not spec 8's default. */

describe('describeAttempt states the configured timeout', () => {
  it('renders the limit it is given, in seconds or milliseconds', () => {
    const timeout = { kind: 'error', error: 'timeout' } as const;
    expect(describeAttempt(timeout, 30_000)).toBe('The endpoint did not answer within 30 seconds.');
    expect(describeAttempt(timeout, 3_000)).toBe('The endpoint did not answer within 3 seconds.');
    expect(describeAttempt(timeout, 1_000)).toBe('The endpoint did not answer within 1 second.');
    expect(describeAttempt(timeout, 2_500)).toBe('The endpoint did not answer within 2.5 seconds.');
    expect(describeAttempt(timeout, 400)).toBe('The endpoint did not answer within 400 milliseconds.');
    expect(describeAttempt({ kind: 'error', error: 'refused' }, 3_000)).toBe('The connection was refused.');
    expect(durationWords(120_000)).toBe('120 seconds');
  });
});

let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  receiver = await startReceiver(() => ({ delayMs: 5_000, status: 200 }));
});
afterAll(() => receiver.close());

describeEachDb(
  'a hanging receiver under WEBHOOK_TIMEOUT=600ms',
  (server) => {
    it('the attempt ends after about 600 ms, is retried at +1 min, and its record says 600 milliseconds', async () => {
      const s = server();
      const { ws, brandId } = await brandWithConnections(s, ['linkedin']);
      const hook = await s.request('POST', `/api/v1/workspaces/${ws.workspace_id}/webhooks`, {
        key: ws.api_key,
        body: { url: `${receiver.url}/hang`, description: 'hangs', enabled_events: ['content.published'] },
      });
      expect(hook.status).toBe(201);
      await s.request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
        key: ws.api_key,
        body: { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: 'hi' },
      });
      await s.settle();
      const started = performance.now();
      await s.container.dispatcher.drain();
      expect(performance.now() - started).toBeLessThan(4_000);
      const res = await s.request('GET', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${hook.body.id as string}/deliveries`, { key: ws.api_key });
      const [delivery] = res.body.data as { status: string; next_attempt_at: string; attempts: { http_status: number | null; error: string | null; at: string }[] }[];
      expect(delivery!.status).toBe('pending');
      expect(Date.parse(delivery!.next_attempt_at) - Date.parse(delivery!.attempts[0]!.at)).toBe(60_000);
      expect(delivery!.attempts[0]).toMatchObject({ http_status: null, error: 'The endpoint did not answer within 600 milliseconds.' });
    });
  },
  { ALLOW_LOCAL_URLS: 'true', WEBHOOK_TIMEOUT: '600ms' },
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);
