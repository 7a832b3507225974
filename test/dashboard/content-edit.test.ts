import { expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { Content } from '../../src/core/contents/contents.schema.js';
import type { Principal } from '../../src/core/principal.js';
import { byId, DashboardClient, formAsSent, textOf } from '../support/dashboard.js';
import { brandWithConnections } from '../support/factories.js';
import { describeEachDb, type TestServer } from '../support/server.js';

/** Monday 23 November 2026, 12:00 UTC. */
const NOW = Date.UTC(2026, 10, 23, 12);

/**
 * The content page of a waiting post: it shows each network's own text, and its edit form changes everything an
 * edit through the API may (type, networks, media, per-network texts, text, title and time), as form posts a
 * browser sends.
 */
async function editor(server: TestServer) {
  const { ws, brandId } = await brandWithConnections(server, ['facebook', 'linkedin', 'instagram']);
  const principal: Principal = { kind: 'api_key', workspaceId: ws.workspace_id, keyId: ws.key_id, role: 'admin', brandIds: null };
  const client = new DashboardClient(server.url);
  await client.signIn(ws.api_key);
  const base = `/api/v1/workspaces/${ws.workspace_id}`;
  const create = async (input: Record<string, unknown>) => {
    const res = await server.request<Content>('POST', `${base}/contents`, { key: ws.api_key, body: { brand_id: brandId, content_type: 'text', ...input } });
    expect(res.status, res.text).toBe(201);
    return res.body.content_id;
  };
  const upload = async () => {
    const res = await fetch(`${server.url}${base}/media`, { method: 'POST', headers: { authorization: `Bearer ${ws.api_key}`, 'content-type': 'image/jpeg' }, body: new Uint8Array(512).fill(7) });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  };
  const get = (id: string) => server.container.services.contents.get(principal, ws.workspace_id, id);
  /** Opens the content page and sends its edit form as the browser would, with `changes` typed over it. */
  const edit = async (id: string, changes: Record<string, string | string[]>) => {
    const page = await client.get(`/dashboard/contents/${id}`);
    return client.post(`/dashboard/contents/${id}/edit`, { ...formAsSent(page.html, `/dashboard/contents/${id}/edit`), ...changes });
  };
  return { client, create, upload, get, edit };
}

describeEachDb(
  'dashboard: editing a waiting post',
  (server) => {
    it('shows each network’s own text; an edit of the shared text keeps it and says so; the own text is edited and cleared in the form', async () => {
      const { client, create, get, edit } = await editor(server());
      const id = await create({ target_platforms: ['facebook', 'linkedin'], text: 'Dowtown lunch', overrides: { linkedin: { text: 'Dowtown lunch for teams' } }, publish_at: '2026-11-25T09:00:00Z' });

      const page = await client.get(`/dashboard/contents/${id}`);
      expect(textOf(page.html)).toContain('Text per network These networks publish their own text instead of the shared one; editing the shared text leaves them as they are. LinkedIn Dowtown lunch for teams');
      expect(page.html).toMatch(/<textarea id="edit-override-text-linkedin" name="override_text_linkedin"[^>]*>\nDowtown lunch for teams<\/textarea>/);
      expect(textOf(page.html)).toContain('Text per network (LinkedIn has its own)');

      const saved = await edit(id, { text: 'Downtown lunch' });
      expect(saved.status).toBe(200);
      expect(textOf(saved.html)).toContain('Changes saved. Scheduled for');
      expect(textOf(saved.html)).toContain('LinkedIn keeps its own text. Change it under Text per network.');
      expect((await get(id)).targets.map((t) => [t.platform_slug, t.text])).toEqual([
        ['facebook', 'Downtown lunch'],
        ['linkedin', 'Dowtown lunch for teams'],
      ]);

      const fixed = await edit(id, { override_text_linkedin: 'Downtown lunch for teams' });
      expect(textOf(fixed.html)).toContain('Changes saved.');
      expect(textOf(fixed.html)).not.toContain('keeps its own');
      expect((await get(id)).overrides).toEqual({ linkedin: { text: 'Downtown lunch for teams' } });

      const cleared = await edit(id, { override_text_linkedin: '' });
      expect(textOf(cleared.html)).toContain('Changes saved.');
      expect(await get(id)).toMatchObject({ overrides: null, targets: [{ text: 'Downtown lunch' }, { text: 'Downtown lunch', own_text: false }] });
      expect(textOf(cleared.html)).not.toContain('These networks publish their own text');

      // Saving the form untouched changes nothing.
      expect(textOf((await edit(id, {})).html)).toContain('Nothing was changed.');
    });

    it('a draft that needs photos gets a file from the library, another network and the photo type; refusals are placed next to their fields', async () => {
      const { create, upload, get, edit } = await editor(server());
      const id = await create({ target_platforms: ['facebook'], text: 'New menu, photos to come', draft: true });
      const photo = await upload();

      const none = await edit(id, { target_platforms: [] });
      expect(none.status).toBe(400);
      expect(byId(none.html, 'edit-networks-error')).toBeTruthy();
      expect(none.html).toContain('<input type="hidden" name="content_fields" value="shown">');

      const noFile = await edit(id, { content_type: 'photo' });
      expect(noFile.status).toBe(400);
      expect(byId(noFile.html, 'edit-media-error')).toBeTruthy();
      expect((await get(id)).content_type).toBe('text');

      const saved = await edit(id, { content_type: 'photo', media_upload: photo, target_platforms: ['facebook', 'instagram'] });
      expect(textOf(saved.html)).toContain('Changes saved. It is a draft.');
      expect(await get(id)).toMatchObject({ content_type: 'photo', target_platforms: ['instagram', 'facebook'], media: [{ media_id: photo }], status: 'draft' });

      // The kept file is ticked on the page; unticking it for a photo is refused and keeps it.
      const page = await edit(id, { media: [] });
      expect(page.status).toBe(400);
      expect((await get(id)).media).toEqual([{ media_id: photo }]);
    });
  },
  {},
  () => ({ clock: new ManualClock(NOW), workers: false }),
);
