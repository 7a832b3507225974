import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { tools } from '../../tools/index.js';
import type { ToolLink } from '../../tools/define-tool.js';
import { ManualClock } from '../../src/core/clock.js';
import { DashboardClient } from '../support/dashboard.js';
import { startReceiver } from '../support/receiver.js';
import { describeEachDb } from '../support/server.js';
import { call, closeClientsAfterEach, connect, mediaOnLoopback } from './tool-calls.js';

closeClientsAfterEach();

let receiver: Awaited<ReturnType<typeof startReceiver>>;
let host: Server;
let hostUrl = '';
beforeAll(async () => {
  receiver = await startReceiver(() => 204);
  host = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': '64' }).end(req.method === 'HEAD' ? undefined : Buffer.alloc(64, 3));
  });
  await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
  hostUrl = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await receiver.close();
  await new Promise<void>((r) => {
    host.closeAllConnections();
    host.close(() => r());
  });
});

interface Ids {
  brandId: string;
  contentId: string;
  draftId: string;
  otherDraftId: string;
  whId: string;
  delId: string;
  /** A draft to submit, and two contents already waiting on their approval. */
  toSubmitId: string;
  pendingId: string;
  otherPendingId: string;
}

/** Arguments, for the objects made below, of every tool whose results link to dashboard pages. */
const LINKED: Record<string, (ids: Ids) => Record<string, unknown>> = {
  publish_content: (ids) => ({ brand_id: ids.brandId, target_platforms: ['threads'], content_type: 'text', text: 'Linked.', publish_at: '2026-12-01T09:00', time_zone: 'America/New_York' }),
  update_content: (ids) => ({ content_id: ids.draftId, text: 'Edited draft.' }),
  cancel_content: (ids) => ({ content_id: ids.otherDraftId }),
  publish_content_now: (ids) => ({ content_id: ids.draftId }),
  retry_failed_targets: (ids) => ({ content_id: ids.contentId }),
  get_content: (ids) => ({ content_id: ids.contentId }),
  list_contents: () => ({}),
  list_brands: () => ({}),
  create_brand: () => ({ name: 'Second brand' }),
  update_brand: (ids) => ({ brand_id: ids.brandId, name: 'Bakery & Café' }),
  get_queue: (ids) => ({ brand_id: ids.brandId }),
  set_queue: (ids) => ({ brand_id: ids.brandId, time_zone: 'America/New_York', slots: [{ days: ['mon'], time: '09:00' }] }),
  list_connections: () => ({}),
  add_sandbox_connection: (ids) => ({ brand_id: ids.brandId, platform_slug: 'linkedin', mode: 'sandbox', name: '@bakery-in' }),
  create_webhook: () => ({ url: `${receiver.url}/second`, enabled_events: ['content.failed'] }),
  list_webhooks: () => ({}),
  update_webhook: (ids) => ({ webhook_id: ids.whId, description: 'Team chat' }),
  send_webhook_test: (ids) => ({ webhook_id: ids.whId }),
  list_deliveries: (ids) => ({ webhook_id: ids.whId }),
  redeliver_delivery: (ids) => ({ delivery_id: ids.delId }),
  list_media: () => ({}),
  import_media_from_url: () => ({ url: `${hostUrl}/bread.png` }),
  get_wallet: () => ({}),
  submit_for_approval: (ids) => ({ content_id: ids.toSubmitId }),
  list_pending_approvals: () => ({}),
  approve_content: (ids) => ({ content_id: ids.pendingId }),
  request_changes: (ids) => ({ content_id: ids.otherPendingId, comment: 'Warmer, please.' }),
};

describeEachDb(
  'MCP result links open the dashboard pages that show their objects',
  (server) => {
    it('every tool with links is exercised here', () => {
      expect(Object.keys(LINKED).sort()).toEqual(tools.filter((t) => t.links !== undefined).map((t) => t.name).sort());
    });

    it('each link of each result opens, signed in, a page that shows the object it names', async () => {
      mediaOnLoopback(server());
      const ws = await server().workspace();
      const client = await connect(server(), ws.api_key);
      const brand = await call<{ id: string }>(client, 'create_brand', { name: 'Bakery' });
      await call(client, 'add_sandbox_connection', { brand_id: brand.id, platform_slug: 'threads', mode: 'sandbox', name: '@bakery' });
      const hook = await call<{ id: string }>(client, 'create_webhook', { url: `${receiver.url}/first`, enabled_events: ['content.published'] });
      const text = { brand_id: brand.id, target_platforms: ['threads'], content_type: 'text' };
      const published = await call<{ content_id: string }>(client, 'publish_content', { ...text, text: 'Out now.' });
      const draft = await call<{ content_id: string }>(client, 'publish_content', { ...text, text: 'Draft.', draft: true });
      const otherDraft = await call<{ content_id: string }>(client, 'publish_content', { ...text, text: 'Another draft.', draft: true });
      const review = async (words: string, submit: boolean) => {
        const made = await call<{ content_id: string }>(client, 'publish_content', { ...text, text: words, draft: true });
        if (submit) await call(client, 'submit_for_approval', { content_id: made.content_id });
        return made.content_id;
      };
      const [toSubmitId, pendingId, otherPendingId] = [await review('To review.', false), await review('Approve me.', true), await review('Change me.', true)];
      await server().settle();
      await server().container.dispatcher.drain();
      const deliveries = await call<{ data: { id: string }[] }>(client, 'list_deliveries', { webhook_id: hook.id });
      const ids: Ids = { brandId: brand.id, contentId: published.content_id, draftId: draft.content_id, otherDraftId: otherDraft.content_id, whId: hook.id, delId: deliveries.data[0]!.id, toSubmitId, pendingId, otherPendingId };

      const dashboard = new DashboardClient(server().url);
      await dashboard.signIn(ws.api_key);
      const opened = new Set<string>();
      for (const [name, args] of Object.entries(LINKED)) {
        const tool = tools.find((t) => t.name === name)!;
        const value = tool.outputSchema.parse(await call(client, name, args(ids)));
        const links: ToolLink[] = tool.links?.(value) ?? [];
        expect(links.length, `${name} names something to open`).toBeGreaterThan(0);
        for (const link of links) {
          const [path, fragment] = link.path.split('#') as [string, string | undefined];
          const page = await dashboard.get(path);
          expect(page.status, `${name} → ${link.path}`).toBe(200);
          // Not a sign-in page or another page reached by a redirect.
          expect(new URL(page.url).pathname, `${name} → ${link.path}`).toBe(path);
          if (fragment !== undefined) expect(page.html, `${name} → ${link.path}`).toContain(`id="${fragment}"`);
          opened.add(path.split('/').map((part) => (/_|^[0-9a-f-]{36}$/.test(part) ? '{id}' : part)).join('/'));
        }
      }
      // Object pages answer 404 for an id they do not know, so each 200 above was that object's page.
      for (const path of ['/dashboard/contents/00000000-0000-4000-8000-000000000000', '/dashboard/webhooks/wh_00000000000000000000', '/dashboard/deliveries/del_00000000000000000000', '/dashboard/brands/brand_00000000000000000000/queue']) {
        expect((await dashboard.get(path)).status, path).toBe(404);
      }
      expect([...opened].sort()).toEqual(
        ['/dashboard/approvals', '/dashboard/brands', '/dashboard/brands/{id}/queue', '/dashboard/contents/{id}', '/dashboard/deliveries/{id}', '/dashboard/media', '/dashboard/wallet', '/dashboard/webhooks/{id}'].sort(),
      );
    });
  },
  { ALLOW_LOCAL_URLS: 'true' },
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);
