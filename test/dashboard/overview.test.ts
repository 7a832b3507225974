import { expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { DashboardClient, textOf } from '../support/dashboard.js';
import { brandWithConnections } from '../support/factories.js';
import { describeEachDb, type TestServer } from '../support/server.js';

async function post(s: TestServer, wsId: string, key: string, body: Record<string, unknown>): Promise<string> {
  const res = await s.request('POST', `/api/v1/workspaces/${wsId}/contents`, { key, body });
  expect(res.status, res.text).toBe(201);
  return res.body.content_id as string;
}

describeEachDb(
  'dashboard: overview',
  (server) => {
    it('an empty workspace gets the onboarding checklist, ticked from real state, and no meter of a missing feature', async () => {
      const ws = await server().workspace();
      const client = new DashboardClient(server().url);
      const page = await client.signIn(ws.api_key);
      const text = textOf(page.html);
      expect(text).toContain('Get started');
      expect(page.html).toContain('<a href="/dashboard/brands">Create a brand</a>');
      expect(text).toContain('Add a sandbox connection');
      expect(text).not.toContain('Inspiration library');
      // The plan's meters in English words; the wire's Portuguese codes stay in the API.
      expect(text).toContain('Content creations this cycle');
      expect(text).toContain('Publications this cycle');
      expect(text).not.toMatch(/criacao|publicacoes|inspiration_library/);
      expect(text).toContain('Media storage');
      expect(text).toContain('Nothing needs attention');
      expect(page.html).toContain('Create a brand to start posting');
      // The contradiction of the old overview ("0 active — All connections are healthy") is gone.
      expect(text).not.toContain('All connections are healthy');
      // The API still lists the meter (spec 7.3).
      const usage = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/usage`, { key: ws.api_key });
      expect((usage.body.meters as { meter: string }[]).map((m) => m.meter)).toContain('inspiration_library');

      await brandWithConnections(server(), [], ws);
      const second = textOf((await client.get('/dashboard')).html);
      expect(second).toMatch(/Done: Create a brand/);
      expect((await client.get('/dashboard')).html).toContain('<a href="/dashboard/brands">Add a sandbox connection</a>');
    });

    it('leads with what needs attention (Retry works), then upcoming and recent posts by their first line with thumbnails', async () => {
      const { ws, brandId, connections } = await brandWithConnections(server(), ['threads', 'linkedin', 'instagram']);
      const clock = server().container.clock as ManualClock;
      const upload = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/media`, { key: ws.api_key, rawBody: 'i'.repeat(64), headers: { 'content-type': 'image/jpeg' } });
      const photo = await post(server(), ws.workspace_id, ws.api_key, { brand_id: brandId, target_platforms: ['instagram'], content_type: 'photo', text: 'Fresh croissants\nsecond line', media: [{ media_id: upload.body.id }] });
      const failed = await post(server(), ws.workspace_id, ws.api_key, { brand_id: brandId, target_platforms: ['threads'], content_type: 'text', text: 'This one fails', sandbox_outcomes: { threads: 'quota_exceeded' } });
      const partial = await post(server(), ws.workspace_id, ws.api_key, {
        brand_id: brandId,
        target_platforms: ['threads', 'linkedin'],
        content_type: 'text',
        text: 'Half of this works',
        sandbox_outcomes: { threads: 'quota_exceeded' },
      });
      await server().settle();
      const later = await post(server(), ws.workspace_id, ws.api_key, { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: 'Tomorrow morning', publish_at: new Date(clock.now() + 86_400_000).toISOString() });
      await server().container.db.kysely.updateTable('connections').set({ status: 'expired' }).where('id', '=', connections.linkedin!).execute();
      const hook = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/webhooks`, { key: ws.api_key, body: { url: 'http://127.0.0.1:9/closed', enabled_events: ['content.failed'] } });
      await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/webhooks/${hook.body.id as string}/test`, { key: ws.api_key });
      await server().container.dispatcher.drain();

      const client = new DashboardClient(server().url);
      const page = await client.signIn(ws.api_key);
      const html = page.html;
      const text = textOf(html);
      expect(text).not.toContain('Get started');
      const at = (s: string) => html.indexOf(s);
      expect(at('id="attention-h"')).toBeLessThan(at('id="upcoming-h"'));
      expect(at('id="upcoming-h"')).toBeLessThan(at('id="recent-h"'));
      expect(at('id="recent-h"')).toBeLessThan(at('id="meters-h"'));
      const attention = html.slice(at('id="attention-h"'), at('id="upcoming-h"'));
      expect(attention).toContain(`action="/dashboard/contents/${failed}/retry"`);
      expect(attention).toContain(`action="/dashboard/contents/${partial}/retry"`);
      expect(textOf(attention)).toContain('This one fails');
      expect(textOf(attention)).toContain('Half of this works');
      expect(textOf(attention)).toContain('@acme-linkedin on LinkedIn expired');
      expect(attention).toContain(`href="/dashboard/deliveries/`);
      expect(textOf(attention)).toContain('http://127.0.0.1:9/closed');
      const upcoming = html.slice(at('id="upcoming-h"'), at('id="recent-h"'));
      expect(upcoming).toContain(`href="/dashboard/contents/${later}"`);
      expect(textOf(upcoming)).toContain('Tomorrow morning');
      const recent = html.slice(at('id="recent-h"'), at('id="meters-h"'));
      expect(textOf(recent)).toContain('Fresh croissants');
      expect(textOf(recent)).not.toContain('second line');
      expect(recent).toMatch(new RegExp(`<img class="thumb small" src="[^"]+/media/${upload.body.id as string}\\?[^"]+" width="64" height="64"`));
      expect(recent).toContain(`href="/dashboard/contents/${photo}"`);

      const retried = await client.post(`/dashboard/contents/${failed}/retry`, {});
      expect(retried.url).toContain(`/dashboard/contents/${failed}`);
      expect(textOf(retried.html)).toContain('1 network(s) queued again.');
    });
  },
  { ALLOW_LOCAL_URLS: 'true' },
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);
