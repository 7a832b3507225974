import { expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { DashboardClient, textOf } from '../support/dashboard.js';
import { brandWithConnections } from '../support/factories.js';
import { describeEachDb } from '../support/server.js';

/** The dashboard by role: what a role cannot use is not shown, and a form posted anyway is refused politely. */

function navLinks(html: string): string[] {
  const nav = /<nav aria-label="Dashboard">([\s\S]*?)<\/nav>/.exec(html)?.[1] ?? '';
  return [...nav.matchAll(/href="([^"]+)"/g)].map((m) => m[1]!);
}

describeEachDb(
  'dashboard by role',
  (server) => {
    it('a viewer sees no page or button it cannot use, and a form posted anyway is refused with the permission named', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['linkedin']);
      const made = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: ws.api_key, body: { name: 'viewer', role: 'viewer' } });
      const viewer = new DashboardClient(server().url);
      const overview = await viewer.signIn(made.body.api_key as string);
      expect(overview.status).toBe(200);
      const links = navLinks(overview.html);
      expect(links).toContain('/dashboard/contents');
      for (const hidden of ['/dashboard/compose', '/dashboard/api-keys', '/dashboard/webhooks', '/dashboard/wallet', '/dashboard/oauth-clients', '/dashboard/connected-apps']) expect(links).not.toContain(hidden);
      // No wallet card, no compose button on the overview.
      expect(overview.html).not.toContain('id="wallet-h"');
      expect(overview.html).not.toContain('href="/dashboard/compose"');

      const brands = await viewer.get('/dashboard/brands');
      expect(brands.status).toBe(200);
      expect(brands.html).toContain('Acme');
      for (const form of ['id="create-brand-h"', 'Add a sandbox connection', `/dashboard/brands/${brandId}/rename`, 'Deactivate']) expect(brands.html).not.toContain(form);
      const media = await viewer.get('/dashboard/media');
      expect(media.status).toBe(200);
      expect(media.html).not.toContain('id="upload-h"');

      const keys = await viewer.get('/dashboard/api-keys');
      expect(keys.status).toBe(403);
      expect(textOf(keys.html)).toContain('Not allowed');
      expect(textOf(keys.html)).toContain('api_keys.manage');

      const rename = await viewer.post(`/dashboard/brands/${brandId}/rename`, { name: 'Taken over' });
      expect(rename.status).toBe(403);
      expect(textOf(rename.html)).toContain('brands.manage');
      expect((await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/brands/${brandId}`, { key: ws.api_key })).body.name).toBe('Acme');
    });

    it('the API keys page creates a key with a role and brands, and lists role, brands and maker', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['linkedin']);
      const made = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: ws.api_key, body: { name: 'the admin', role: 'admin' } });
      const admin = new DashboardClient(server().url);
      await admin.signIn(made.body.api_key as string);
      const page = await admin.get('/dashboard/api-keys');
      // An admin is not offered owner.
      expect(page.html).toContain('<option value="editor"');
      expect(page.html).not.toContain('<option value="owner"');

      const created = await admin.post('/dashboard/api-keys', { name: 'brand editor', role: 'editor', brand_ids: [brandId] });
      expect(created.status).toBe(201);
      const listed = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: ws.api_key });
      const key = (listed.body.data as Record<string, unknown>[]).find((k) => k.name === 'brand editor');
      expect(key).toMatchObject({ role: 'editor', brand_ids: [brandId], created_by: made.body.id });
      const row = /<tr>(?:(?!<tr>)[\s\S])*?brand editor[\s\S]*?<\/tr>/.exec(created.html)?.[0] ?? '';
      expect(textOf(row)).toContain('editor');
      expect(textOf(row)).toContain('Acme');
      expect(textOf(row)).toContain('key the admin');

      // Owner, posted anyway, is refused by the core.
      const above = await admin.post('/dashboard/api-keys', { name: 'sneaky', role: 'owner' });
      expect(above.status).toBe(403);
      expect(textOf(above.html)).toContain('Not allowed');
    });
  },
  {},
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);
