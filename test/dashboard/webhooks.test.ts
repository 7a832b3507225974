import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { EVENT_TYPES } from '../../src/core/events/events.js';
import { DashboardClient, textOf } from '../support/dashboard.js';
import { brandWithConnections } from '../support/factories.js';
import { startReceiver } from '../support/receiver.js';
import { describeEachDb, type TestServer } from '../support/server.js';

type Receiver = Awaited<ReturnType<typeof startReceiver>>;
interface DeliveryBody {
  id: string;
  status: string;
  attempt_count: number;
}

const mode: Record<string, number> = {};
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver((path) => mode[path] ?? 200);
});
afterAll(() => receiver.close());

async function signedIn(server: TestServer) {
  const ws = await server.workspace();
  const client = new DashboardClient(server.url);
  await client.signIn(ws.api_key);
  return { ws, client };
}

async function restWebhook(server: TestServer, key: string, wsId: string, path: string, events: string[] = ['content.published']) {
  const res = await server.request('POST', `/api/v1/workspaces/${wsId}/webhooks`, { key, body: { url: `${receiver.url}${path}`, description: 'test', enabled_events: events } });
  expect(res.status).toBe(201);
  return res.body as { id: string; secret: string };
}

/** Publishes a text content to the sandbox and runs the publisher and the dispatcher until they are idle. */
async function publishAndDeliver(server: TestServer, key: string, wsId: string, brandId: string) {
  const res = await server.request('POST', `/api/v1/workspaces/${wsId}/contents`, { key, body: { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: 'hi' } });
  expect(res.status).toBe(201);
  await server.settle();
  await server.container.dispatcher.drain();
}

async function deliveriesOf(server: TestServer, key: string, wsId: string, whId: string) {
  const res = await server.request('GET', `/api/v1/workspaces/${wsId}/webhooks/${whId}/deliveries`, { key });
  expect(res.status).toBe(200);
  return res.body.data as DeliveryBody[];
}

describeEachDb(
  'dashboard webhooks',
  (server, kind) => {
    const P = (path: string) => `/dash-${kind.name}${path}`;

    it('creating an endpoint through the form shows its whsec_ secret exactly once', async () => {
      const { ws, client } = await signedIn(server());
      const form = await client.get('/dashboard/webhooks');
      expect(form.status).toBe(200);
      expect(textOf(form.html)).toContain('Answer with a 2xx status within 20 seconds.');
      for (const type of EVENT_TYPES) expect(form.html).toMatch(new RegExp(`name="enabled_events" value="${type.replace('.', '\\.')}" checked`));
      const url = `${receiver.url}${P('/created')}`;
      const page = await client.post('/dashboard/webhooks', { url, description: 'From the form', enabled_events: [...EVENT_TYPES] });
      expect(page.status).toBe(201);
      const secret = /value="(whsec_[0-9a-f]+)"/.exec(page.html)?.[1];
      expect(secret).toMatch(/^whsec_[0-9a-f]{48}$/);
      expect(page.html.split(secret!)).toHaveLength(2);
      expect(textOf(page.html)).toContain('Signing secret');

      const listed = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/webhooks`, { key: ws.api_key });
      const hooks = listed.body.data as { id: string; url: string; description: string; enabled_events: string[] }[];
      expect(hooks).toEqual([expect.objectContaining({ url, description: 'From the form', enabled_events: [...EVENT_TYPES] })]);
      const id = hooks[0]!.id;
      expect(page.html).toContain(`href="/dashboard/webhooks/${id}">Open the endpoint</a>`);

      const list = await client.get('/dashboard/webhooks');
      const endpoint = await client.get(`/dashboard/webhooks/${id}`);
      for (const later of [list, endpoint]) {
        expect(later.status).toBe(200);
        expect(later.html).not.toContain(secret);
        expect(later.html).not.toContain('whsec_');
      }
      expect(textOf(list.html)).toContain(url);
      expect(list.html).toContain(`aria-label="Deliveries and settings of ${url}"`);
      expect(textOf(endpoint.html)).toContain('Webhook endpoint');
    });

    it('shows a refused URL and a missing event next to their fields, with status 400', async () => {
      const { ws, client } = await signedIn(server());
      await client.get('/dashboard/webhooks');
      const invalid = await client.post('/dashboard/webhooks', { url: 'not a url', description: '', enabled_events: ['content.published'] });
      expect(invalid.status).toBe(400);
      expect(invalid.html).toMatch(/<p class="field-error" id="new-webhook-url-error">[^<]+<\/p>/);
      expect(invalid.html).toContain('aria-describedby="new-webhook-url-hint new-webhook-url-error" aria-invalid="true"');
      expect(invalid.html).toContain('value="not a url"');

      // Refused by the core's address rule rather than by the schema: still shown under URL.
      const refused = await client.post('/dashboard/webhooks', { url: 'ftp://example.com/hook', description: '', enabled_events: ['content.published'] });
      expect(refused.status).toBe(400);
      expect(refused.html).toContain('<p class="field-error" id="new-webhook-url-error">The URL must be an http(s) URL.</p>');

      const noEvents = await client.post('/dashboard/webhooks', { url: `${receiver.url}/x`, description: '' });
      expect(noEvents.status).toBe(400);
      expect(noEvents.html).toContain('<p class="field-error" id="new-webhook-events-error">Choose at least one event from the list.</p>');
      expect(noEvents.html).not.toMatch(/name="enabled_events" value="[^"]+" checked/);

      const listed = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/webhooks`, { key: ws.api_key });
      expect(listed.body.data).toEqual([]);
    });

    it('editing the events and pausing through the form changes the endpoint', async () => {
      const { ws, client } = await signedIn(server());
      const hook = await restWebhook(server(), ws.api_key, ws.workspace_id, P('/edit'), ['content.published', 'content.failed']);
      const page = await client.get(`/dashboard/webhooks/${hook.id}`);
      expect(page.html).toContain('id="webhook-active" name="active" type="checkbox" value="true" checked');
      const url = `${receiver.url}${P('/edited')}`;
      const saved = await client.post(`/dashboard/webhooks/${hook.id}`, { url, description: 'Edited', enabled_events: ['content.failed', 'connection.expired'] });
      expect(saved.status).toBe(200);
      expect(saved.url).toMatch(new RegExp(`/dashboard/webhooks/${hook.id}$`));
      expect(textOf(saved.html)).toContain('Deliveries to this endpoint are paused.');
      expect(textOf(saved.html)).toContain('paused');
      const got = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${hook.id}`, { key: ws.api_key });
      expect(got.body).toMatchObject({ url, description: 'Edited', enabled_events: ['content.failed', 'connection.expired'], active: false });

      const resumed = await client.post(`/dashboard/webhooks/${hook.id}`, { url, description: 'Edited', enabled_events: ['content.failed'], active: 'true' });
      expect(textOf(resumed.html)).toContain('Changes saved.');
      const again = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${hook.id}`, { key: ws.api_key });
      expect(again.body).toMatchObject({ enabled_events: ['content.failed'], active: true });

      const empty = await client.post(`/dashboard/webhooks/${hook.id}`, { url, description: 'Edited', active: 'true' });
      expect(empty.status).toBe(400);
      expect(empty.html).toContain('<p class="field-error" id="webhook-events-error">Choose at least one event from the list.</p>');
    });

    it('lists a delivered event with its attempt, and the failed filter hides it', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['linkedin']);
      const client = new DashboardClient(server().url);
      await client.signIn(ws.api_key);
      const hook = await restWebhook(server(), ws.api_key, ws.workspace_id, P('/delivered'));
      await publishAndDeliver(server(), ws.api_key, ws.workspace_id, brandId);
      const [delivery] = await deliveriesOf(server(), ws.api_key, ws.workspace_id, hook.id);
      expect(delivery).toMatchObject({ status: 'delivered', attempt_count: 1 });

      const page = await client.get(`/dashboard/webhooks/${hook.id}`);
      const text = textOf(page.html);
      expect(page.html).toContain(`<code>${delivery!.id}</code>`);
      expect(page.html).toContain('<span class="badge badge-delivered">delivered</span>');
      // The last attempt is read inline: its status, then when and how long.
      expect(text).toMatch(/HTTP 200 \S+ \S+ UTC\s*, \d+ ms/);
      expect(page.html).toContain(`href="/dashboard/deliveries/${delivery!.id}"`);
      expect(text).toContain('content.published');
      expect(page.html).toContain(`aria-label="Redeliver ${delivery!.id}"`);
      expect(page.html).not.toContain('data-refresh-while');

      const failed = await client.get(`/dashboard/webhooks/${hook.id}?status=failed`);
      expect(failed.html).not.toContain(delivery!.id);
      expect(textOf(failed.html)).toContain('No deliveries match.');
      expect(failed.html).toContain('<option value="failed" selected>');
      const delivered = await client.get(`/dashboard/webhooks/${hook.id}?status=delivered`);
      expect(delivered.html).toContain(delivery!.id);
      // An edited address falls back to the newest deliveries instead of an error page.
      const bogus = await client.get(`/dashboard/webhooks/${hook.id}?status=exploded&cursor=zz`);
      expect(bogus.status).toBe(200);
      expect(bogus.html).toContain(delivery!.id);
    });

    it('a delivery refused with 410 is failed, and Redeliver queues it again until it is delivered', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['linkedin']);
      const client = new DashboardClient(server().url);
      await client.signIn(ws.api_key);
      const path = P('/gone');
      mode[path] = 410;
      const hook = await restWebhook(server(), ws.api_key, ws.workspace_id, path);
      await publishAndDeliver(server(), ws.api_key, ws.workspace_id, brandId);
      const [delivery] = await deliveriesOf(server(), ws.api_key, ws.workspace_id, hook.id);
      expect(delivery).toMatchObject({ status: 'failed', attempt_count: 1 });

      const page = await client.get(`/dashboard/webhooks/${hook.id}?status=failed`);
      expect(page.html).toContain('<span class="badge badge-failed">failed</span>');
      expect(textOf(page.html)).toContain('HTTP 410');

      const queued = await client.post(`/dashboard/deliveries/${delivery!.id}/redeliver`, {});
      expect(queued.status).toBe(200);
      expect(queued.url).toMatch(new RegExp(`/dashboard/webhooks/${hook.id}$`));
      expect(textOf(queued.html)).toContain(`Delivery ${delivery!.id} queued again.`);
      expect(queued.html).toMatch(/id="deliveries" data-refresh-while/);
      const pending = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/deliveries/${delivery!.id}`, { key: ws.api_key });
      expect(pending.body).toMatchObject({ status: 'pending' });

      mode[path] = 200;
      await server().container.dispatcher.drain();
      const done = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/deliveries/${delivery!.id}`, { key: ws.api_key });
      expect(done.body).toMatchObject({ status: 'delivered', attempt_count: 2 });
      const after = await client.get(`/dashboard/webhooks/${hook.id}`);
      expect(after.html).not.toContain('data-refresh-while');
      expect(textOf(after.html)).toMatch(/HTTP 200 \S+ \S+ UTC\s*, \d+ ms \(redelivery\)/);
    });

    it('sends a test event, then shows the request body, each response status, its body and the reason inline', async () => {
      const { ws, client } = await signedIn(server());
      const path = P('/test-event');
      mode[path] = 500;
      const hook = await restWebhook(server(), ws.api_key, ws.workspace_id, path, ['content.partial', 'content.failed']);
      const page = await client.get(`/dashboard/webhooks/${hook.id}`);
      // Delete sits below the deliveries, the test button above them.
      const at = (s: string) => page.html.indexOf(s);
      expect(at('id="test-h"')).toBeGreaterThan(0);
      expect(at('id="test-h"')).toBeLessThan(at('id="deliveries-h"'));
      expect(at('id="deliveries-h"')).toBeLessThan(at('id="delete-h"'));
      expect(page.html).toContain('<option value="content.partial">content.partial</option>');

      const sent = await client.post(`/dashboard/webhooks/${hook.id}/test`, { event_type: 'content.failed' });
      expect(sent.status).toBe(200);
      expect(sent.url).toMatch(/\/dashboard\/deliveries\/del_/);
      expect(textOf(sent.html)).toMatch(/Test event content\.failed queued as del_\w+/);
      expect(sent.html).toContain('data-refresh-while');
      expect(textOf(sent.html)).toContain('No attempt yet');

      await server().container.dispatcher.drain();
      const got = receiver.received.filter((r) => r.path === path);
      expect(got).toHaveLength(1);
      expect(JSON.parse(got[0]!.rawBody)).toMatchObject({ type: 'content.failed', test: true });

      const detail = await client.get(new URL(sent.url).pathname);
      const text = textOf(detail.html);
      expect(text).toContain('Response status: HTTP 500');
      expect(text).toContain('Why it failed: The endpoint answered HTTP 500.');
      // The receiver's own words, escaped, for the person who owns it.
      expect(text).toContain('receiver says: ignore previous instructions');
      expect(detail.html).toContain('&quot;test&quot;: true');
      expect(detail.html).toContain(`Service-Webhook-Id: ${hook.id}`);
      expect(text).toContain('content.failed test');

      const list = await client.get(`/dashboard/webhooks/${hook.id}`);
      expect(textOf(list.html)).toContain('The endpoint answered HTTP 500.');
      expect(list.html).toContain('<span class="tag">test</span>');
      const again = await client.post(`/dashboard/deliveries/${new URL(sent.url).pathname.split('/').pop()!}/redeliver`, { from: 'delivery' });
      expect(again.url).toBe(sent.url);

      const foreign = await server().workspace('Stranger');
      const stranger = new DashboardClient(server().url);
      await stranger.signIn(foreign.api_key);
      expect((await stranger.get(new URL(sent.url).pathname)).status).toBe(404);
      expect((await stranger.post(`/dashboard/webhooks/${hook.id}/test`, {})).status).toBe(404);
    });

    it('deletes an endpoint after confirmation and says so', async () => {
      const { ws, client } = await signedIn(server());
      const hook = await restWebhook(server(), ws.api_key, ws.workspace_id, P('/delete'));
      const page = await client.get(`/dashboard/webhooks/${hook.id}`);
      expect(page.html).toMatch(new RegExp(`action="/dashboard/webhooks/${hook.id}/delete" class="inline" data-confirm="Delete the endpoint`));
      const deleted = await client.post(`/dashboard/webhooks/${hook.id}/delete`, {});
      expect(deleted.url).toMatch(/\/dashboard\/webhooks$/);
      expect(textOf(deleted.html)).toContain(`The endpoint ${receiver.url}${P('/delete')} was deleted.`);
      expect(textOf(deleted.html)).toContain('No endpoints yet.');
      const gone = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${hook.id}`, { key: ws.api_key });
      expect(gone.status).toBe(404);
    });

    it("another workspace's endpoint, or an unknown id, is a not-found page", async () => {
      const { client } = await signedIn(server());
      const other = await server().workspace('Other');
      const foreign = await restWebhook(server(), other.api_key, other.workspace_id, P('/foreign'));
      await client.get('/dashboard/webhooks');
      for (const path of [`/dashboard/webhooks/${foreign.id}`, '/dashboard/webhooks/wh_unknown']) {
        const page = await client.get(path);
        expect(page.status).toBe(404);
        expect(textOf(page.html)).toContain('Not found');
        expect(page.html).not.toContain(receiver.url);
      }
      const edit = await client.post(`/dashboard/webhooks/${foreign.id}`, { url: `${receiver.url}/stolen`, enabled_events: ['content.failed'] });
      expect(edit.status).toBe(404);
      const del = await client.post(`/dashboard/webhooks/${foreign.id}/delete`, {});
      expect(del.status).toBe(404);
      expect(await server().request('GET', `/api/v1/workspaces/${other.workspace_id}/webhooks/${foreign.id}`, { key: other.api_key })).toMatchObject({ status: 200 });
      expect((await client.post('/dashboard/deliveries/del_unknown/redeliver', {})).status).toBe(404);
    });
  },
  // A receiver's time limit other than the 30 s default, so the signing help is seen to state the configured one.
  { ALLOW_LOCAL_URLS: 'true', WEBHOOK_TIMEOUT: '20s' },
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);
