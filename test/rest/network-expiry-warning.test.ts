import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { startFakeLinkedin, type FakeLinkedin } from '../fakes/linkedin.js';
import { startReceiver } from '../support/receiver.js';
import { describeEachDb } from '../support/server.js';
import { addServiceEnv, overrides } from '../support/overrides.js';

let fake: FakeLinkedin;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const env: Record<string, string> = { ALLOW_LOCAL_URLS: 'true', TOKEN_EXPIRY_WARNING: '7d' };

beforeAll(async () => {
  fake = await startFakeLinkedin();
  receiver = await startReceiver();
  addServiceEnv(
    env,
    { LINKEDIN_CLIENT_ID: fake.clientId, LINKEDIN_CLIENT_SECRET: fake.clientSecret },
    overrides({ LINKEDIN_API_URL: fake.baseUrl, LINKEDIN_AUTHORIZE_URL: fake.authorizeUrl, LINKEDIN_TOKEN_URL: fake.tokenUrl }),
  );
});
afterAll(async () => {
  await fake.close();
  await receiver.close();
});

describeEachDb(
  'tokens without a refresh path (LinkedIn)',
  (server) => {
    it('a connection made through the network authorize page warns with connection.expired "expiring_soon" once, ahead of expiry', async () => {
      const ws = await server().workspace();
      await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/webhooks`, {
        key: ws.api_key,
        body: { url: `${receiver.url}/soon-${ws.workspace_id}`, description: '', enabled_events: ['connection.expired'] },
      });
      const brand = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name: 'Pro' } });
      const started = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands/${brand.body.id as string}/connections/oauth`, {
        key: ws.api_key,
        body: { platform_slug: 'linkedin' },
      });
      // The fake's consent page approves at once and redirects to our callback.
      const approved = await fetch(started.body.authorization_url as string, { redirect: 'manual' });
      const callback = new URL(approved.headers.get('location')!);
      const connected = await server().request('GET', `${callback.pathname}${callback.search}`);
      expect(connected.body).toMatchObject({ mode: 'live', status: 'active', platform_slug: 'linkedin', name: fake.member.name });
      const connId = connected.body.id as string;

      const tokens = await server().container.services.networkConnect.tokensOf(connId);
      expect(tokens?.accountId).toBe(fake.member.urn);
      const clock = server().container.clock as ManualClock;
      clock.set(tokens!.expiresAt! - 10 * 86_400_000);
      await server().container.services.networkConnect.sweepExpiring(server().container.config.tokenExpiryWarningMs);
      clock.set(tokens!.expiresAt! - 6 * 86_400_000);
      await server().container.services.networkConnect.sweepExpiring(server().container.config.tokenExpiryWarningMs);
      await server().container.services.networkConnect.sweepExpiring(server().container.config.tokenExpiryWarningMs);
      await server().container.dispatcher.drain();
      const events = receiver.received.filter((r) => r.path === `/soon-${ws.workspace_id}`).map((r) => JSON.parse(r.rawBody) as { data: { reason: string; connection_id: string } });
      expect(events.map((e) => e.data)).toEqual([expect.objectContaining({ connection_id: connId, reason: 'expiring_soon' })]);
      // The connection still works until the token really expires.
      const conn = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/connections/${connId}`, { key: ws.api_key });
      expect(conn.body.status).toBe('active');
    });
  },
  env,
  () => ({ clock: new ManualClock(Date.now()), workers: false }),
);
