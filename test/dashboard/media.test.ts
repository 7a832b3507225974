import { expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { DashboardClient, textOf } from '../support/dashboard.js';
import { brandWithConnections } from '../support/factories.js';
import { describeEachDb } from '../support/server.js';

function decode(attr: string): string {
  return attr.replace(/&amp;/g, '&');
}

describeEachDb(
  'dashboard: media library',
  (server) => {
    it('uploads through the page, shows a grid with thumbnails, size, type and users; Use in Compose; delete frees the space', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['instagram']);
      const client = new DashboardClient(server().url);
      await client.signIn(ws.api_key);
      const empty = await client.get('/dashboard/media');
      expect(empty.status).toBe(200);
      expect(textOf(empty.html)).toContain('No uploads yet.');
      expect(empty.html).toContain('href="/dashboard/media" aria-current="page"');

      const form = new FormData();
      form.append('csrf', client.csrf!);
      // A JPEG: the draft below is an Instagram photo, and Instagram takes JPEG only.
      form.append('file', new Blob([Buffer.alloc(2048, 7)], { type: 'image/jpeg' }), 'cake.jpg');
      const posted = await client.raw('/dashboard/media', { method: 'POST', body: form });
      expect(posted.status).toBe(303);
      const id = /#(media_\w+)$/.exec(posted.headers.get('location')!)?.[1];
      expect(id).toBeDefined();
      const page = await client.get(posted.headers.get('location')!);
      const text = textOf(page.html);
      expect(text).toContain('Uploaded cake.jpg: it is listed as “Image (JPEG), 2.0 KB, uploaded 21 Nov 2026, 12:00 UTC”.');
      expect(text).toMatch(/Image \(JPEG\)\s*, 2\.0 KB/);
      const src = decode(/<img class="thumb" src="([^"]+)" width="160" height="160" loading="lazy" alt="Image \(JPEG\), 2\.0 KB, uploaded 21 Nov 2026, 12:00 UTC">/.exec(page.html)![1]!);
      const file = await fetch(src);
      expect(file.status).toBe(200);
      expect((await file.arrayBuffer()).byteLength).toBe(2048);
      expect(page.html).toContain(`href="/dashboard/compose?media_id=${id!}"`);

      const video = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/media`, { key: ws.api_key, rawBody: 'v'.repeat(100), headers: { 'content-type': 'video/mp4' } });
      const draft = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
        key: ws.api_key,
        body: { brand_id: brandId, target_platforms: ['instagram'], content_type: 'photo', media: [{ media_id: id }], draft: true },
      });
      expect(draft.status).toBe(201);
      // The content page shows the photo it will publish.
      const contentPage = await client.get(`/dashboard/contents/${draft.body.content_id as string}`);
      expect(contentPage.html).toMatch(new RegExp(`<a href="/dashboard/media#${id!}"><img class="thumb" src="[^"]+/media/${id!}\\?`));
      const grid = await client.get('/dashboard/media');
      const videoName = 'Video (MP4), 100 B, uploaded 21 Nov 2026, 12:00 UTC';
      expect(grid.html).toContain(`aria-label="${videoName}"`);
      // A video's poster is its own first frame, read by the browser from our origin (media-src 'self').
      expect(grid.html).toMatch(new RegExp(`<video class="thumb thumb-video" src="[^"]+/${video.body.id as string}[^"]*#t=0\\.1" preload="metadata"`));
      expect(grid.headers.get('content-security-policy')).toContain("media-src 'self'");
      expect(grid.html).toContain(`href="/dashboard/contents/${draft.body.content_id as string}"`);
      expect(textOf(grid.html)).toContain('Kept while a draft content needs it.');
      // The delete button is not offered for it; a forged delete is refused and says why.
      expect(grid.html).not.toContain(`action="/dashboard/media/${id!}/delete"`);
      const refused = await client.post(`/dashboard/media/${id!}/delete`, {});
      expect(textOf(refused.html)).toContain('“Image (JPEG), 2.0 KB, uploaded 21 Nov 2026, 12:00 UTC” was not deleted: a draft content still needs it.');

      expect(grid.html).toContain(`aria-label="Delete ${videoName}"`);
      const deleted = await client.post(`/dashboard/media/${video.body.id as string}/delete`, {});
      expect(textOf(deleted.html)).toContain(`“${videoName}” was deleted and its space freed.`);
      expect(deleted.html).not.toContain(`aria-label="${videoName}"`);
    });

    it('names uploads by what they are and the contents using them by their first line, never by id alone', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['instagram']);
      const photo = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/media`, { key: ws.api_key, rawBody: 'p'.repeat(3000), headers: { 'content-type': 'image/jpeg' } });
      const mediaId = photo.body.id as string;
      const made = [];
      for (const text of ['Birthday cake, fresh from the oven\nSecond line stays out', 'Weekend brunch menu']) {
        const draft = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
          key: ws.api_key,
          body: { brand_id: brandId, target_platforms: ['instagram'], content_type: 'photo', text, media: [{ media_id: mediaId }], draft: true },
        });
        expect(draft.status).toBe(201);
        made.push(draft.body.content_id as string);
      }
      const client = new DashboardClient(server().url);
      await client.signIn(ws.api_key);
      const page = await client.get('/dashboard/media');
      const card = new RegExp(`<li class="media-card" id="${mediaId}">[\\s\\S]*?</li>\\s*</ul>`).exec(page.html)?.[0] ?? '';
      expect(card).toContain(`<a href="/dashboard/contents/${made[0]!}">Birthday cake, fresh from the oven</a>`);
      expect(card).toContain(`<a href="/dashboard/contents/${made[1]!}">Weekend brunch menu</a>`);
      expect(textOf(card)).not.toMatch(/content [0-9a-f]{8}/);
      expect(page.html).toContain('alt="Image (JPEG), 2.9 KB, uploaded 21 Nov 2026, 12:00 UTC"');
      expect(page.html).toContain('aria-label="Use in Compose: Image (JPEG), 2.9 KB, uploaded 21 Nov 2026, 12:00 UTC"');
      expect(page.html).not.toContain(`Uploaded image ${mediaId}`);
    });

    it('a wrong type is refused next to the form; another workspace cannot delete; a bad cursor falls back', async () => {
      const ws = await server().workspace();
      const other = await server().workspace();
      const theirs = await server().request('POST', `/api/v1/workspaces/${other.workspace_id}/media`, { key: other.api_key, rawBody: 'x'.repeat(10), headers: { 'content-type': 'image/gif' } });
      const client = new DashboardClient(server().url);
      await client.signIn(ws.api_key);
      await client.get('/dashboard/media');
      const form = new FormData();
      form.append('csrf', client.csrf!);
      form.append('file', new Blob(['MZ'], { type: 'application/x-msdownload' }), 'setup.exe');
      const res = await client.raw('/dashboard/media', { method: 'POST', body: form });
      expect(res.status).toBe(400);
      expect(textOf(await res.text())).toContain('This kind of file is not accepted.');
      const forged = new FormData();
      forged.append('csrf', 'nope');
      forged.append('file', new Blob(['x'], { type: 'image/png' }), 'x.png');
      expect((await client.raw('/dashboard/media', { method: 'POST', body: forged })).status).toBe(403);
      expect((await client.post(`/dashboard/media/${theirs.body.id as string}/delete`, {})).status).toBe(404);
      const stale = await client.get('/dashboard/media?cursor=garbage');
      expect(stale.status).toBe(200);
      expect(textOf(stale.html)).toContain('That page link is not valid any more');
    });
  },
  {},
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);
