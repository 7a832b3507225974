import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CreatedWebhook, Delivery, Webhook } from '../../src/core/webhooks/webhooks.schema.js';
import { startReceiver } from '../support/receiver.js';
import { describeEachDb } from '../support/server.js';
import { call, callFailing, closeClientsAfterEach, connect, restError, withoutRequestId } from './tool-calls.js';

closeClientsAfterEach();

let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  receiver = await startReceiver((path) => (path.endsWith('/fail') ? 500 : 204));
});
afterAll(() => receiver.close());

describeEachDb(
  'MCP webhook tools',
  (server, kind) => {
    const at = (path: string) => `${receiver.url}/${kind.name}${path}`;

    it('update_webhook changes only what it is sent, keeps the secret, and pauses with active: false', async () => {
      const ws = await server().workspace();
      const client = await connect(server(), ws.api_key);
      const hook = await call<CreatedWebhook>(client, 'create_webhook', { url: at('/update'), enabled_events: ['content.published'], description: 'Team chat' });
      const changed = await call<Webhook>(client, 'update_webhook', { webhook_id: hook.id, enabled_events: ['content.failed', 'content.partial'], active: false });
      expect(changed).toMatchObject({ id: hook.id, url: hook.url, description: 'Team chat', enabled_events: ['content.failed', 'content.partial'], active: false });
      const rest = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${hook.id}`, { key: ws.api_key });
      expect(rest.body).toEqual(changed);

      // The secret is unchanged: a test event is still signed with the one create_webhook gave.
      await call(client, 'update_webhook', { webhook_id: hook.id, active: true });
      const before = receiver.received.length;
      await call<Delivery>(client, 'send_webhook_test', { webhook_id: hook.id });
      await server().container.dispatcher.drain();
      const hit = receiver.received.slice(before).find((r) => r.path === `/${kind.name}/update`)!;
      const signed = `${String(hit.headers['service-timestamp'])}.${hit.rawBody}`;
      expect(hit.headers['service-signature']).toBe(`sha256=${createHmac('sha256', hook.secret).update(signed).digest('hex')}`);
    });

    it('update_webhook refuses a url the endpoint rule refuses with the REST validation_failed; an unknown id is not_found', async () => {
      const ws = await server().workspace();
      const client = await connect(server(), ws.api_key);
      const hook = await call<CreatedWebhook>(client, 'create_webhook', { url: 'https://hooks.example.com/a', enabled_events: ['content.published'] });
      // Credentials in the address are refused even where local addresses are allowed (this server allows them).
      const bad = await callFailing(client, 'update_webhook', { webhook_id: hook.id, url: 'https://user:pw@hooks.example.com/hook' });
      expect(bad).toMatchObject({ error: 'validation_failed', fields: [{ path: 'url' }] });
      const rest = await server().request('PATCH', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${hook.id}`, { key: ws.api_key, body: { url: 'https://user:pw@hooks.example.com/hook' } });
      expect(withoutRequestId(bad)).toEqual(restError(rest));
      expect((await call<{ data: Webhook[] }>(client, 'list_webhooks', {})).data[0]!.url).toBe('https://hooks.example.com/a');

      const missing = await callFailing(client, 'update_webhook', { webhook_id: 'wh_unknown', active: false });
      const restMissing = await server().request('PATCH', `/api/v1/workspaces/${ws.workspace_id}/webhooks/wh_unknown`, { key: ws.api_key, body: { active: false } });
      expect(missing).toMatchObject({ error: 'not_found' });
      expect(withoutRequestId(missing)).toEqual(restError(restMissing));
    });

    it('send_webhook_test queues a signed test delivery the dispatcher brings to the receiver; list_deliveries shows it', async () => {
      const ws = await server().workspace();
      const client = await connect(server(), ws.api_key);
      const hook = await call<CreatedWebhook>(client, 'create_webhook', { url: at('/test-event'), enabled_events: ['content.failed', 'content.published'] });
      const queued = await call<Delivery>(client, 'send_webhook_test', { webhook_id: hook.id, event_type: 'content.published' });
      expect(queued).toMatchObject({ id: expect.stringMatching(/^del_/), webhook_id: hook.id, event_type: 'content.published', status: 'pending', test: true, attempts: [] });
      // The call answered before any attempt: the delivery is made by the dispatcher.
      expect(receiver.received.filter((r) => r.path === `/${kind.name}/test-event`)).toHaveLength(0);

      await server().container.dispatcher.drain();
      const hits = receiver.received.filter((r) => r.path === `/${kind.name}/test-event`);
      expect(hits).toHaveLength(1);
      expect(hits[0]!.headers['service-delivery-id']).toBe(queued.id);
      expect(JSON.parse(hits[0]!.rawBody)).toMatchObject({ type: 'content.published', test: true });
      const page = await call<{ data: Delivery[] }>(client, 'list_deliveries', { webhook_id: hook.id });
      expect(page.data).toEqual([expect.objectContaining({ id: queued.id, status: 'delivered', test: true, attempts: [expect.objectContaining({ http_status: 204 })] })]);

      const unknownType = await callFailing(client, 'send_webhook_test', { webhook_id: hook.id, event_type: 'content.exploded' });
      expect(unknownType).toMatchObject({ error: 'validation_failed', fields: [{ path: 'event_type' }] });
      const missing = await callFailing(client, 'send_webhook_test', { webhook_id: 'wh_unknown' });
      const rest = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/webhooks/wh_unknown/test`, { key: ws.api_key, body: {} });
      expect(missing).toMatchObject({ error: 'not_found' });
      expect(withoutRequestId(missing)).toEqual(restError(rest));
    });

    it('delete_webhook removes the endpoint and frees its meter slot; a second delete is not_found', async () => {
      const ws = await server().workspace();
      const client = await connect(server(), ws.api_key);
      const used = async () => (await call<{ meters: { meter: string; used: number }[] }>(client, 'get_usage', {})).meters.find((m) => m.meter === 'webhooks')!.used;
      const hook = await call<CreatedWebhook>(client, 'create_webhook', { url: 'https://hooks.example.com/gone', enabled_events: ['content.published'] });
      expect(await used()).toBe(1);
      expect(await call(client, 'delete_webhook', { webhook_id: hook.id })).toEqual({ webhook_id: hook.id, deleted: true });
      expect(await used()).toBe(0);
      expect(await call(client, 'list_webhooks', {})).toEqual({ data: [] });

      const again = await callFailing(client, 'delete_webhook', { webhook_id: hook.id });
      const rest = await server().request('DELETE', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${hook.id}`, { key: ws.api_key });
      expect(again).toMatchObject({ error: 'not_found' });
      expect(withoutRequestId(again)).toEqual(restError(rest));
    });

    it("another workspace's webhook is not_found for update, test and delete, and stays as it was", async () => {
      const a = await server().workspace('A');
      const b = await server().workspace('B');
      const clientA = await connect(server(), a.api_key);
      const clientB = await connect(server(), b.api_key);
      const hook = await call<CreatedWebhook>(clientA, 'create_webhook', { url: at('/isolated'), enabled_events: ['content.published'] });
      for (const [name, args] of [
        ['update_webhook', { webhook_id: hook.id, active: false, url: 'https://attacker.example/steal' }],
        ['send_webhook_test', { webhook_id: hook.id }],
        ['delete_webhook', { webhook_id: hook.id }],
      ] as const) {
        const foreign = await callFailing(clientB, name, args);
        const unknown = await callFailing(clientB, name, { ...args, webhook_id: 'wh_00000000000000000000' });
        expect(foreign, name).toMatchObject({ error: 'not_found' });
        expect(String(foreign.message).replace(hook.id, 'ID'), name).toBe(String(unknown.message).replace('wh_00000000000000000000', 'ID'));
      }
      expect(await call(clientA, 'list_webhooks', {})).toEqual({ data: [Object.fromEntries(Object.entries(hook).filter(([k]) => k !== 'secret'))] });
      await server().container.dispatcher.drain();
      expect(receiver.received.filter((r) => r.path === `/${kind.name}/isolated`)).toEqual([]);
      expect(await call(clientA, 'list_deliveries', { webhook_id: hook.id })).toEqual({ data: [], next_cursor: null });
    });

    it('two delete_webhook calls at once: one deletes, the other answers not_found, and the slot is freed once', async () => {
      const ws = await server().workspace();
      const client = await connect(server(), ws.api_key);
      const other = await connect(server(), ws.api_key);
      for (let round = 0; round < 5; round++) {
        const hook = await call<CreatedWebhook>(client, 'create_webhook', { url: `https://hooks.example.com/race-${round}`, enabled_events: ['content.published'] });
        const results = await Promise.all(
          [client, other].map(async (c) => {
            const result = (await c.callTool({ name: 'delete_webhook', arguments: { webhook_id: hook.id } })) as { isError?: boolean; content: { type: string; text?: string }[] };
            return { isError: result.isError ?? false, body: JSON.parse(result.content[0]?.text ?? 'null') as Record<string, unknown> };
          }),
        );
        expect(results.filter((r) => !r.isError).map((r) => r.body)).toEqual([{ webhook_id: hook.id, deleted: true }]);
        expect(results.filter((r) => r.isError).map((r) => r.body.error)).toEqual(['not_found']);
        const usage = await call<{ meters: { meter: string; used: number }[] }>(client, 'get_usage', {});
        expect(usage.meters.find((m) => m.meter === 'webhooks')!.used).toBe(0);
      }
    });
  },
  { ALLOW_LOCAL_URLS: 'true' },
  () => ({ workers: false }),
);
