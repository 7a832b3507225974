import { expect, it } from 'vitest';
import type { Brand } from '../../src/core/brands/brands.schema.js';
import type { Connection } from '../../src/core/connections/connections.schema.js';
import { describeEachDb } from '../support/server.js';
import { call, callFailing, closeClientsAfterEach, connect, restError, withoutRequestId } from './tool-calls.js';

closeClientsAfterEach();

const TINY_PLAN = { brands: 1, connections: 1, media_storage: 1000, webhooks: 1, inspiration_library: 1, criacao_de_conteudos: 2, publicacoes: 3 };

describeEachDb(
  'MCP brand and connection tools',
  (server) => {
    it('create_brand makes a brand REST and list_brands show; a full brands meter is the REST limit_reached', async () => {
      const ws = await server().workspace();
      const client = await connect(server(), ws.api_key);
      const brand = await call<Brand>(client, 'create_brand', { name: '  Corner Bakery ' });
      expect(brand).toMatchObject({ id: expect.stringMatching(/^brand_/), name: 'Corner Bakery' });
      const rest = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/brands/${brand.id}`, { key: ws.api_key });
      expect(rest.body).toEqual(brand);
      expect(await call<{ data: Brand[] }>(client, 'list_brands', {})).toEqual({ data: [brand] });

      await server().container.services.workspaces.setPlan(ws.workspace_id, 'tiny');
      const refused = await callFailing(client, 'create_brand', { name: 'Second' });
      expect(refused).toMatchObject({ error: 'limit_reached', meter: 'brands', limit: 1, used: 1 });
      const viaRest = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name: 'Second' } });
      expect(viaRest.status).toBe(403);
      expect(withoutRequestId(refused)).toEqual(restError(viaRest));
      expect((await call<{ data: Brand[] }>(client, 'list_brands', {})).data).toHaveLength(1);
    });

    it('create_brand with an empty name is the REST validation_failed, naming the field', async () => {
      const ws = await server().workspace();
      const client = await connect(server(), ws.api_key);
      const body = await callFailing(client, 'create_brand', { name: '   ' });
      expect(body).toMatchObject({ error: 'validation_failed', fields: [{ path: 'name' }] });
      const rest = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name: '   ' } });
      expect(withoutRequestId(body)).toEqual(restError(rest));
    });

    it('update_brand renames a brand; an unknown id is the REST not_found', async () => {
      const ws = await server().workspace();
      const client = await connect(server(), ws.api_key);
      const brand = await call<Brand>(client, 'create_brand', { name: 'Old name' });
      const renamed = await call<Brand>(client, 'update_brand', { brand_id: brand.id, name: 'New name' });
      expect(renamed).toMatchObject({ id: brand.id, name: 'New name', created_at: brand.created_at });
      expect((await call<{ data: Brand[] }>(client, 'list_brands', {})).data.map((b) => b.name)).toEqual(['New name']);

      const missing = await callFailing(client, 'update_brand', { brand_id: 'brand_unknown', name: 'X' });
      expect(missing).toMatchObject({ error: 'not_found' });
      const rest = await server().request('PATCH', `/api/v1/workspaces/${ws.workspace_id}/brands/brand_unknown`, { key: ws.api_key, body: { name: 'X' } });
      expect(withoutRequestId(missing)).toEqual(restError(rest));
      expect(await callFailing(client, 'update_brand', { brand_id: brand.id })).toMatchObject({ error: 'validation_failed', fields: [{ path: 'name' }] });
    });

    it('add_sandbox_connection adds an active sandbox connection that publish_content uses; a live mode is refused', async () => {
      const ws = await server().workspace();
      const client = await connect(server(), ws.api_key);
      const brand = await call<Brand>(client, 'create_brand', { name: 'Acme' });
      const conn = await call<Connection>(client, 'add_sandbox_connection', { brand_id: brand.id, platform_slug: 'threads', mode: 'sandbox', name: '@acme' });
      expect(conn).toMatchObject({ id: expect.stringMatching(/^conn_/), brand_id: brand.id, platform_slug: 'threads', mode: 'sandbox', status: 'active', name: '@acme' });
      expect(await call(client, 'list_connections', { brand_id: brand.id })).toEqual({ data: [conn] });
      const published = await call<{ jobs: { connection_id: string }[] }>(client, 'publish_content', {
        brand_id: brand.id,
        target_platforms: ['threads'],
        content_type: 'text',
        text: 'Through a sandbox connection made by a tool.',
      });
      expect(published.jobs.map((j) => j.connection_id)).toEqual([conn.id]);

      const live = await callFailing(client, 'add_sandbox_connection', { brand_id: brand.id, platform_slug: 'threads', mode: 'live', name: '@acme' });
      expect(live).toMatchObject({ error: 'validation_failed', fields: [{ path: 'mode' }] });
      const rest = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands/${brand.id}/connections`, {
        key: ws.api_key,
        body: { platform_slug: 'threads', mode: 'live', name: '@acme' },
      });
      expect(withoutRequestId(live)).toEqual(restError(rest));
    });

    it('add_sandbox_connection past the connections meter is limit_reached, and nothing is added', async () => {
      const ws = await server().workspace();
      await server().container.services.workspaces.setPlan(ws.workspace_id, 'tiny');
      const client = await connect(server(), ws.api_key);
      const brand = await call<Brand>(client, 'create_brand', { name: 'Acme' });
      await call(client, 'add_sandbox_connection', { brand_id: brand.id, platform_slug: 'threads', mode: 'sandbox', name: 'one' });
      const full = await callFailing(client, 'add_sandbox_connection', { brand_id: brand.id, platform_slug: 'linkedin', mode: 'sandbox', name: 'two' });
      expect(full).toMatchObject({ error: 'limit_reached', meter: 'connections', limit: 1, used: 1 });
      expect((await call<{ data: unknown[] }>(client, 'list_connections', {})).data).toHaveLength(1);
    });

    it("another workspace's brand is not_found for update_brand and add_sandbox_connection, and stays unchanged", async () => {
      const a = await server().workspace('A');
      const b = await server().workspace('B');
      const clientA = await connect(server(), a.api_key);
      const clientB = await connect(server(), b.api_key);
      const brandA = await call<Brand>(clientA, 'create_brand', { name: 'Mine' });
      const unknown = await callFailing(clientB, 'update_brand', { brand_id: 'brand_00000000000000000000', name: 'Taken' });
      const foreign = await callFailing(clientB, 'update_brand', { brand_id: brandA.id, name: 'Taken' });
      expect(foreign).toMatchObject({ error: 'not_found' });
      // Answered exactly as an id that exists nowhere, but for the id it names.
      expect(String(foreign.message).replace(brandA.id, 'ID')).toBe(String(unknown.message).replace('brand_00000000000000000000', 'ID'));
      expect(await callFailing(clientB, 'add_sandbox_connection', { brand_id: brandA.id, platform_slug: 'threads', mode: 'sandbox', name: 'x' })).toMatchObject({
        error: 'not_found',
      });
      expect(await call(clientA, 'list_brands', {})).toEqual({ data: [brandA] });
      expect((await call<{ data: unknown[] }>(clientA, 'list_connections', {})).data).toEqual([]);
      expect((await call<{ data: unknown[] }>(clientB, 'list_connections', {})).data).toEqual([]);
    });

    it('two update_brand calls at once both succeed, and the brand ends with one of the two names', async () => {
      const ws = await server().workspace();
      const client = await connect(server(), ws.api_key);
      const other = await connect(server(), ws.api_key);
      const brand = await call<Brand>(client, 'create_brand', { name: 'Start' });
      for (let round = 0; round < 5; round++) {
        const names = [`Left ${round}`, `Right ${round}`];
        const answers = await Promise.all([
          call<Brand>(client, 'update_brand', { brand_id: brand.id, name: names[0] }),
          call<Brand>(other, 'update_brand', { brand_id: brand.id, name: names[1] }),
        ]);
        for (const answer of answers) expect(names).toContain(answer.name);
        const final = (await call<{ data: Brand[] }>(client, 'list_brands', {})).data;
        expect(final).toHaveLength(1);
        expect(names).toContain(final[0]!.name);
      }
    });
  },
  { PLANS_JSON: JSON.stringify({ tiny: TINY_PLAN }) },
  () => ({ workers: false }),
);
