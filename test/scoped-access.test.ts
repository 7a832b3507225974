import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../src/core/clock.js';
import { roleCan } from '../src/core/permissions/roles.js';
import type { NewWorkspace } from '../src/core/workspaces/workspaces.service.js';
import { tools } from '../tools/index.js';
import { brandWithConnections } from './support/factories.js';
import { oauthAccessToken } from './support/matrix.js';
import { describeEachDb, type TestServer } from './support/server.js';

/**
 * Scoped credentials through the doors a caller uses: keys limited to a role and to some brands (REST), what
 * they may create, what `/me` says of them, and an assistant's token of a narrow role over MCP (the SDK client).
 */

const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

async function mcpClient(server: TestServer, bearer: string): Promise<Client> {
  const client = new Client({ name: 'scoped-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${bearer}` } } }));
  open.push(client);
  return client;
}

describeEachDb(
  'scoped API keys, brand scoping and MCP by role',
  (server) => {
    let ws: NewWorkspace;
    let base = '';
    let brandA = '';
    let brandB = '';
    let connA = '';
    let connB = '';
    let contentA = '';
    let contentB = '';

    const make = async (key: string, body: Record<string, unknown>) => server().request('POST', `${base}/api-keys`, { key, body });
    const draft = async (brandId: string) => {
      const res = await server().request('POST', `${base}/contents`, { key: ws.api_key, body: { brand_id: brandId, target_platforms: ['linkedin'], content_type: 'text', text: 'Scoped', draft: true } });
      if (res.status !== 201) throw new Error(`draft: ${res.text}`);
      return res.body.content_id as string;
    };

    beforeAll(async () => {
      ws = await server().workspace('scoped');
      base = `/api/v1/workspaces/${ws.workspace_id}`;
      const a = await brandWithConnections(server(), ['linkedin'], ws);
      const b = await brandWithConnections(server(), ['linkedin'], ws);
      [brandA, brandB, connA, connB] = [a.brandId, b.brandId, a.connections.linkedin!, b.connections.linkedin!];
      contentA = await draft(brandA);
      contentB = await draft(brandB);
    });

    it("a key limited to brand A answers 404 for brand B's brand, connection and content, and lists only A's", async () => {
      const made = await make(ws.api_key, { name: 'brand A only', role: 'editor', brand_ids: [brandA] });
      expect(made.status).toBe(201);
      const key = made.body.api_key as string;
      const get = (path: string) => server().request('GET', `${base}${path}`, { key });

      for (const path of [`/brands/${brandB}`, `/connections/${connB}`, `/contents/${contentB}`, `/brands/${brandB}/queue`]) {
        const res = await get(path);
        expect(res.status, path).toBe(404);
        expect(res.body.error).toBe('not_found');
      }
      for (const path of [`/brands/${brandA}`, `/connections/${connA}`, `/contents/${contentA}`]) expect((await get(path)).status, path).toBe(200);

      const ids = (res: { body: Record<string, unknown> }, field: string) => (res.body.data as Record<string, string>[]).map((x) => x[field]);
      expect(ids(await get('/brands'), 'id')).toEqual([brandA]);
      expect(ids(await get('/connections'), 'brand_id')).toEqual([brandA]);
      expect(ids(await get('/contents'), 'content_id')).toEqual([contentA]);
      // The owner's key still sees both: the narrowing is the credential's, not the data's.
      expect(ids(await server().request('GET', `${base}/contents`, { key: ws.api_key }), 'content_id').sort()).toEqual([contentA, contentB].sort());

      // Writing on brand B is as for a brand that does not exist.
      const onB = await server().request('POST', `${base}/contents`, { key, body: { brand_id: brandB, target_platforms: ['linkedin'], content_type: 'text', text: 'No', draft: true } });
      expect(onB.status).toBe(404);
      const cancelB = await server().request('POST', `${base}/contents/${contentB}/cancel`, { key, body: {} });
      expect(cancelB.status).toBe(404);
      // Workspace-wide resources need every brand.
      const hooks = await get('/webhooks');
      expect(hooks.status).toBe(403);
      expect(hooks.body).toMatchObject({ error: 'forbidden', permission: 'webhooks.read' });
    });

    it('a contributor drafts, and what it would send out waits for approval: nothing runs, nothing is charged', async () => {
      const made = await make(ws.api_key, { name: 'contributor', role: 'contributor' });
      const key = made.body.api_key as string;
      const body = { brand_id: brandA, target_platforms: ['linkedin'], content_type: 'text', text: 'From a contributor' };
      const usage = async () => (await server().request<{ meters: { meter: string; used: number }[] }>('GET', `${base}/usage`, { key: ws.api_key })).body.meters;
      const before = await usage();
      const drafted = await server().request('POST', `${base}/contents`, { key, body: { ...body, draft: true } });
      expect(drafted.status).toBe(201);
      expect(drafted.body).toMatchObject({ status: 'draft' });
      const now = await server().request('POST', `${base}/contents`, { key, body });
      expect(now.status, now.text).toBe(201);
      expect(now.body).toMatchObject({ status: 'pending_approval', jobs: [] });
      // Its own draft given a time waits too, with that time.
      const later = await server().request('PATCH', `${base}/contents/${drafted.body.content_id as string}`, { key, body: { publish_at: '2026-12-01T09:00:00Z' } });
      expect(later.status, later.text).toBe(200);
      expect(later.body).toMatchObject({ status: 'pending_approval', publish_at: '2026-12-01T09:00:00.000Z', jobs: [] });
      const jobs = await server()
        .container.db.kysely.selectFrom('jobs')
        .select('id')
        .where('content_id', 'in', [now.body.content_id as string, drafted.body.content_id as string])
        .execute();
      expect(jobs).toEqual([]);
      expect(await usage()).toEqual(before);
    });

    it('a key is never made above its maker: role and brands are capped, unknown brands named, the maker and the audit recorded', async () => {
      const admin = await make(ws.api_key, { name: 'admin' });
      expect(admin.status).toBe(201);
      // The REST default stays admin over every brand, as before roles.
      expect(admin.body).toMatchObject({ role: 'admin', brand_ids: null, created_by: ws.key_id });
      const adminKey = admin.body.api_key as string;

      const owner = await make(adminKey, { name: 'above', role: 'owner' });
      expect(owner.status).toBe(403);
      expect(owner.body).toMatchObject({ error: 'forbidden', permission: 'api_keys.manage' });
      expect(String(owner.body.message)).toContain('owner');

      const unknown = await make(adminKey, { name: 'ghost brand', brand_ids: [brandA, 'brand_nope'] });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error).toBe('validation_failed');
      expect((unknown.body.fields as { path: string }[]).map((f) => f.path)).toEqual(['brand_ids']);

      const badRole = await make(adminKey, { name: 'bad', role: 'superuser' });
      expect(badRole.status).toBe(400);
      expect((badRole.body.fields as { path: string }[]).map((f) => f.path)).toEqual(['role']);

      const viewer = await make(adminKey, { name: 'viewer A', role: 'viewer', brand_ids: [brandA] });
      expect(viewer.status).toBe(201);
      expect(viewer.body).toMatchObject({ role: 'viewer', brand_ids: [brandA], created_by: admin.body.id });
      // A viewer cannot make keys at all, not even viewers.
      const byViewer = await make(viewer.body.api_key as string, { name: 'nope', role: 'viewer' });
      expect(byViewer.status).toBe(403);
      expect(byViewer.body).toMatchObject({ permission: 'api_keys.manage' });

      const listed = await server().request('GET', `${base}/api-keys`, { key: ws.api_key });
      const row = (listed.body.data as Record<string, unknown>[]).find((k) => k.id === viewer.body.id);
      expect(row).toMatchObject({ role: 'viewer', brand_ids: [brandA], created_by: admin.body.id, last_used_at: expect.any(String) as unknown });

      expect((await server().request('DELETE', `${base}/api-keys/${String(viewer.body.id)}`, { key: adminKey })).status).toBe(204);
      const audit = await server()
        .container.db.kysely.selectFrom('audit_events')
        .select(['action', 'actor_type', 'actor_id', 'actor_role', 'target_id'])
        .where('workspace_id', '=', ws.workspace_id)
        .where('target_id', '=', String(viewer.body.id))
        // Both in the same instant of the test's clock: ordered by name.
        .orderBy('action')
        .execute();
      expect(audit).toEqual([
        { action: 'api_key.created', actor_type: 'api_key', actor_id: admin.body.id, actor_role: 'admin', target_id: viewer.body.id },
        { action: 'api_key.revoked', actor_type: 'api_key', actor_id: admin.body.id, actor_role: 'admin', target_id: viewer.body.id },
      ]);
    });

    it('parallel revocations of one key record one api_key.revoked; parallel creations one api_key.created each', async () => {
      const target = await make(ws.api_key, { name: 'revoked in parallel', role: 'viewer' });
      const id = String(target.body.id);
      const revokes = await Promise.all(Array.from({ length: 8 }, () => server().request('DELETE', `${base}/api-keys/${id}`, { key: ws.api_key })));
      expect(revokes.map((r) => r.status)).toEqual(Array.from({ length: 8 }, () => 204));
      const made = await Promise.all(Array.from({ length: 6 }, (_, i) => make(ws.api_key, { name: `parallel ${i}`, role: 'editor' })));
      expect(made.map((r) => r.status)).toEqual(Array.from({ length: 6 }, () => 201));
      const entries = await server()
        .container.db.kysely.selectFrom('audit_events')
        .select(['action', 'target_id'])
        .where('workspace_id', '=', ws.workspace_id)
        .where('target_id', 'in', [id, ...made.map((r) => String(r.body.id))])
        .execute();
      expect(entries.filter((e) => e.action === 'api_key.revoked').map((e) => e.target_id)).toEqual([id]);
      expect(entries.filter((e) => e.action === 'api_key.created').map((e) => e.target_id).sort()).toEqual([id, ...made.map((r) => String(r.body.id))].sort());
    });

    it('/me shows the role and brands behind a key and behind an OAuth token, and the approving key', async () => {
      const made = await make(ws.api_key, { name: 'me', role: 'client', brand_ids: [brandB] });
      const key = made.body.api_key as string;
      const me = await server().request('GET', '/api/v1/me', { key });
      expect(me.status).toBe(200);
      expect(me.body.credential).toMatchObject({ kind: 'api_key', key_id: made.body.id });
      expect(me.body.actor).toEqual({ role: 'client', brand_ids: [brandB], key_id: made.body.id, user_id: null, email: null });
      const { token } = await oauthAccessToken(server(), key);
      const viaToken = await server().request('GET', '/api/v1/me', { key: token });
      expect(viaToken.body.credential).toMatchObject({ kind: 'oauth', key_id: made.body.id });
      expect(viaToken.body.actor).toMatchObject({ role: 'client', brand_ids: [brandB], key_id: made.body.id });
    });

    it("MCP: a viewer's token lists no write tool, and a refused call is a tool error naming the permission", async () => {
      const viewer = await make(ws.api_key, { name: 'assistant (viewer)', role: 'viewer' });
      const { token } = await oauthAccessToken(server(), viewer.body.api_key as string);
      const client = await mcpClient(server(), token);
      const listed = (await client.listTools()).tools.map((t) => t.name).sort();
      const expected = tools.filter((t) => roleCan('viewer', t.permission)).map((t) => t.name).sort();
      expect(listed).toEqual(expected);
      for (const write of ['publish_content', 'cancel_content', 'create_webhook', 'create_brand', 'import_media_from_url']) expect(listed).not.toContain(write);
      expect(listed).toContain('list_contents');

      // Calling a hidden tool anyway is refused by the core's decision, not by the list.
      const refused = (await client.callTool({ name: 'publish_content', arguments: { brand_id: brandA, target_platforms: ['linkedin'], content_type: 'text', text: 'No' } })) as CallToolResult;
      expect(refused.isError).toBe(true);
      const text = refused.content[0];
      expect(JSON.parse(text?.type === 'text' ? text.text : '{}')).toMatchObject({ error: 'forbidden', permission: 'contents.draft' });

      // A contributor's token sees publish_content; what it asks to publish now waits for a person's approval,
      // and publishing it now anyway is refused, naming what it lacks.
      const contributor = await make(ws.api_key, { name: 'assistant (contributor)', role: 'contributor' });
      const contributorClient = await mcpClient(server(), (await oauthAccessToken(server(), contributor.body.api_key as string)).token);
      const contributorTools = (await contributorClient.listTools()).tools.map((t) => t.name);
      expect(contributorTools).toContain('publish_content');
      expect(contributorTools).not.toContain('publish_content_now');
      const publish = (await contributorClient.callTool({ name: 'publish_content', arguments: { brand_id: brandA, target_platforms: ['linkedin'], content_type: 'text', text: 'Now' } })) as CallToolResult;
      expect(publish.isError ?? false).toBe(false);
      const created = publish.structuredContent as { content_id: string; status: string; jobs: unknown[] };
      expect(created).toMatchObject({ status: 'pending_approval', jobs: [] });
      const now = (await contributorClient.callTool({ name: 'publish_content_now', arguments: { content_id: created.content_id } })) as CallToolResult;
      expect(now.isError).toBe(true);
      const body = now.content[0];
      expect(JSON.parse(body?.type === 'text' ? body.text : '{}')).toMatchObject({ error: 'forbidden', permission: 'contents.publish' });
    });
  },
  {},
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);
