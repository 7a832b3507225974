import { existsSync } from 'node:fs';
import { expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { brandWithConnections } from '../support/factories.js';
import { describeEachDb, type TestServer } from '../support/server.js';

interface MediaItem {
  id: string;
  content_type: string;
  size_bytes: number;
  created_at: string;
  url: string;
  used_by: { content_id: string; status: string }[];
}

async function upload(s: TestServer, wsId: string, key: string, type = 'image/jpeg', size = 300): Promise<string> {
  const res = await s.request('POST', `/api/v1/workspaces/${wsId}/media`, { key, rawBody: 'j'.repeat(size), headers: { 'content-type': type } });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

async function storageUsed(s: TestServer, wsId: string, key: string): Promise<number> {
  const usage = await s.request('GET', `/api/v1/workspaces/${wsId}/usage`, { key });
  return (usage.body.meters as { meter: string; used: number }[]).find((m) => m.meter === 'media_storage')!.used;
}

describeEachDb(
  'media library',
  (s) => {
    it('lists uploads newest first with size, type, a working signed url and the contents using each, cursor-paginated', async () => {
      const { ws, brandId } = await brandWithConnections(s(), ['instagram']);
      const clock = s().container.clock as ManualClock;
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        ids.push(await upload(s(), ws.workspace_id, ws.api_key, i === 4 ? 'video/mp4' : 'image/jpeg', 100 + i));
        clock.advance(1000);
      }
      const content = await s().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
        key: ws.api_key,
        body: { brand_id: brandId, target_platforms: ['instagram'], content_type: 'photo', media: [{ media_id: ids[1] }], draft: true },
      });
      expect(content.status).toBe(201);

      const seen: MediaItem[] = [];
      let cursor: string | null = null;
      for (let page = 0; page < 5; page++) {
        const res: { status: number; body: { data: MediaItem[]; next_cursor: string | null } } = await s().request<{ data: MediaItem[]; next_cursor: string | null }>('GET', `/api/v1/workspaces/${ws.workspace_id}/media?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { key: ws.api_key });
        expect(res.status).toBe(200);
        seen.push(...res.body.data);
        cursor = res.body.next_cursor;
        if (cursor === null) break;
      }
      expect(seen.map((m) => m.id)).toEqual([...ids].reverse());
      const video = seen[0]!;
      expect(video).toMatchObject({ content_type: 'video/mp4', size_bytes: 104, used_by: [] });
      const used = seen.find((m) => m.id === ids[1])!;
      expect(used.used_by).toEqual([{ content_id: content.body.content_id, status: 'draft' }]);
      // The url opens the file itself.
      const file = await fetch(used.url);
      expect(file.status).toBe(200);
      expect(file.headers.get('content-type')).toContain('image/jpeg');
      expect((await file.arrayBuffer()).byteLength).toBe(101);

      const bad = await s().request('GET', `/api/v1/workspaces/${ws.workspace_id}/media?cursor=garbage`, { key: ws.api_key });
      expect(bad.status).toBe(400);
      const other = await s().workspace();
      const theirs = await s().request<{ data: MediaItem[] }>('GET', `/api/v1/workspaces/${other.workspace_id}/media`, { key: other.api_key });
      expect(theirs.body.data).toEqual([]);
    });

    it('deletes an unused upload, frees media_storage and the file; refuses one a draft or scheduled content needs with 409 media_in_use', async () => {
      const { ws, brandId } = await brandWithConnections(s(), ['instagram']);
      const free = await upload(s(), ws.workspace_id, ws.api_key, 'image/png', 500);
      const kept = await upload(s(), ws.workspace_id, ws.api_key, 'image/jpeg', 700);
      expect(await storageUsed(s(), ws.workspace_id, ws.api_key)).toBe(1200);
      const row = await s().container.db.kysely.selectFrom('media').select('storage_path').where('id', '=', free).executeTakeFirstOrThrow();

      const deleted = await s().request('DELETE', `/api/v1/workspaces/${ws.workspace_id}/media/${free}`, { key: ws.api_key });
      expect(deleted.status).toBe(204);
      expect(existsSync(row.storage_path)).toBe(false);
      expect(await storageUsed(s(), ws.workspace_id, ws.api_key)).toBe(700);
      expect((await s().request('DELETE', `/api/v1/workspaces/${ws.workspace_id}/media/${free}`, { key: ws.api_key })).status).toBe(404);

      const clock = s().container.clock as ManualClock;
      const publishAt = new Date(clock.now() + 3_600_000).toISOString();
      const scheduled = await s().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
        key: ws.api_key,
        body: { brand_id: brandId, target_platforms: ['instagram'], content_type: 'photo', media: [{ media_id: kept }], publish_at: publishAt },
      });
      expect(scheduled.status).toBe(201);
      const refused = await s().request('DELETE', `/api/v1/workspaces/${ws.workspace_id}/media/${kept}`, { key: ws.api_key });
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({ error: 'media_in_use', contents: [{ content_id: scheduled.body.content_id, status: 'scheduled' }] });
      expect(await storageUsed(s(), ws.workspace_id, ws.api_key)).toBe(700);

      // Canceled, the content no longer needs it: the delete goes through.
      const cancel = await s().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents/${scheduled.body.content_id as string}/cancel`, { key: ws.api_key, headers: { 'idempotency-key': 'cancel-media' } });
      expect(cancel.status).toBe(200);
      expect((await s().request('DELETE', `/api/v1/workspaces/${ws.workspace_id}/media/${kept}`, { key: ws.api_key })).status).toBe(204);
      expect(await storageUsed(s(), ws.workspace_id, ws.api_key)).toBe(0);
    });

    it("another workspace's upload is not found, and stays", async () => {
      const mine = await s().workspace();
      const other = await s().workspace();
      const theirs = await upload(s(), other.workspace_id, other.api_key);
      expect((await s().request('DELETE', `/api/v1/workspaces/${mine.workspace_id}/media/${theirs}`, { key: mine.api_key })).status).toBe(404);
      expect((await s().request('DELETE', `/api/v1/workspaces/${other.workspace_id}/media/${theirs}`, { key: mine.api_key })).status).toBe(403);
      const list = await s().request<{ data: MediaItem[] }>('GET', `/api/v1/workspaces/${other.workspace_id}/media`, { key: other.api_key });
      expect(list.body.data.map((m) => m.id)).toEqual([theirs]);
    });
  },
  {},
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);
