import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { brandWithConnections } from '../support/factories.js';
import { describeEachDb } from '../support/server.js';

describeEachDb(
  'media uploads',
  (server) => {
    it('streams an upload to storage, records its size and type, and publishes it by media_id', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['instagram']);
      const bytes = Buffer.from('\xff\xd8\xff fake jpeg bytes '.repeat(100), 'latin1');
      const res = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/media`, {
        key: ws.api_key,
        rawBody: bytes.toString('latin1'),
        headers: { 'content-type': 'image/jpeg' },
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ id: expect.stringMatching(/^media_/), content_type: 'image/jpeg' });
      const row = await server().container.db.kysely.selectFrom('media').selectAll().where('id', '=', res.body.id as string).executeTakeFirstOrThrow();
      expect(Number(row.size_bytes)).toBe(res.body.size_bytes);
      expect(readFileSync(row.storage_path).length).toBe(res.body.size_bytes);

      const usage = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/usage`, { key: ws.api_key });
      expect((usage.body.meters as { meter: string; used: number }[]).find((m) => m.meter === 'media_storage')?.used).toBe(res.body.size_bytes);

      const content = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
        key: ws.api_key,
        body: { brand_id: brandId, target_platforms: ['instagram'], content_type: 'photo', media: [{ media_id: res.body.id }] },
      });
      expect(content.status).toBe(201);
      await server().settle();
      const read = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/contents/${content.body.content_id as string}`, { key: ws.api_key });
      expect(read.body.status).toBe('published');
    });

    it('refuses an unsupported type, and an upload past the media_storage meter with limit_reached', async () => {
      const ws = await server().workspace();
      const wrong = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/media`, {
        key: ws.api_key,
        rawBody: 'MZ',
        headers: { 'content-type': 'application/x-msdownload' },
      });
      expect(wrong.status).toBe(400);
      expect(wrong.body.error).toBe('validation_failed');

      await server().container.services.workspaces.setPlan(ws.workspace_id, 'tiny');
      const big = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/media`, {
        key: ws.api_key,
        rawBody: 'x'.repeat(5000),
        headers: { 'content-type': 'video/mp4' },
      });
      expect(big.status).toBe(403);
      expect(big.body).toEqual({ error: 'limit_reached', message: expect.any(String), request_id: big.headers.get('x-request-id'), meter: 'media_storage', limit: 1000, used: 0, resolve: 'desativar_outra' });
      const stored = await server().container.db.kysely.selectFrom('media').select('id').where('workspace_id', '=', ws.workspace_id).execute();
      expect(stored).toEqual([]);
    });

    it('a media_id of another workspace is not usable', async () => {
      const mine = await brandWithConnections(server(), ['instagram']);
      const theirs = await server().workspace();
      const up = await server().request('POST', `/api/v1/workspaces/${theirs.workspace_id}/media`, { key: theirs.api_key, rawBody: 'abc', headers: { 'content-type': 'image/png' } });
      const res = await server().request('POST', `/api/v1/workspaces/${mine.ws.workspace_id}/contents`, {
        key: mine.ws.api_key,
        body: { brand_id: mine.brandId, target_platforms: ['instagram'], content_type: 'photo', media: [{ media_id: up.body.id }] },
      });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^media\[0\]\.media_id: /);
    });
  },
  { PLANS_JSON: JSON.stringify({ tiny: { brands: 1, connections: 1, media_storage: 1000, webhooks: 1, inspiration_library: 1, criacao_de_conteudos: 1, publicacoes: 1 } }) },
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);
