import { expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { brandWithConnections } from '../support/factories.js';
import { describeEachDb } from '../support/server.js';
import { call, callFailing, closeClientsAfterEach, connect, restError, withoutRequestId } from './tool-calls.js';

/** Per-network rules checked at creation, through the tools an assistant calls: the same refusals as REST. */
closeClientsAfterEach();

describeEachDb(
  'MCP: per-network rules at creation',
  (server) => {
    it('publish_content refuses a PNG photo for Instagram with media_unsupported_format naming the item, as REST does; nothing is charged', async () => {
      const { ws, brandId } = await brandWithConnections(server(), ['instagram']);
      const uploaded = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/media`, { key: ws.api_key, rawBody: 'p'.repeat(200), headers: { 'content-type': 'image/png' } });
      expect(uploaded.status).toBe(201);
      const client = await connect(server(), ws.api_key);
      const args = { brand_id: brandId, target_platforms: ['instagram'], content_type: 'photo', media: [{ media_id: uploaded.body.id as string }] };

      const body = await callFailing(client, 'publish_content', args);
      expect(withoutRequestId(body)).toMatchObject({ error: 'media_unsupported_format', platform_slug: 'instagram', accepted: ['image/jpeg'], fields: [{ path: 'media[0].media_id' }] });
      const rest = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, { key: ws.api_key, body: args });
      expect(withoutRequestId(body)).toEqual(restError(rest));
      expect(await call<{ data: unknown[] }>(client, 'list_contents', {})).toMatchObject({ data: [] });
      const usage = await call<{ meters: { meter: string; used: number }[] }>(client, 'get_usage', {});
      expect(usage.meters.filter((m) => m.meter === 'publicacoes' || m.meter === 'criacao_de_conteudos').map((m) => m.used)).toEqual([0, 0]);
    });

    it('list_publish_targets on a sandbox Pinterest connection gives the true reason, as REST does, with no Pinterest app configured', async () => {
      const { ws, connections } = await brandWithConnections(server(), ['pinterest']);
      const client = await connect(server(), ws.api_key);
      const body = await callFailing(client, 'list_publish_targets', { connection_id: connections.pinterest! });
      expect(body).toMatchObject({ error: 'validation_failed', message: 'connection: a sandbox connection has no network places to choose from (Pinterest boards are listed on a live connection)' });
      const rest = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/connections/${connections.pinterest!}/targets`, { key: ws.api_key });
      expect(withoutRequestId(body)).toEqual(restError(rest));
      expect(await callFailing(client, 'choose_publish_target', { connection_id: connections.pinterest!, target_id: '5001' })).toMatchObject({ error: 'validation_failed' });
    });
  },
  {},
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);
