import { expect, it } from 'vitest';
import { mintApiKey } from '../../src/core/api-keys/api-keys.service.js';
import type { AuditEntry, AuditLog } from '../../src/core/audit/audit.schema.js';
import { ManualClock } from '../../src/core/clock.js';
import type { Role } from '../../src/core/permissions/roles.js';
import { brandWithConnections } from '../support/factories.js';
import { DashboardClient, textOf } from '../support/dashboard.js';
import { describeEachDb, type TestServer } from '../support/server.js';
import { call, callFailing, closeClientsAfterEach, connect } from '../mcp/tool-calls.js';

const TINY_PLAN = { brands: 5, connections: 3, media_storage: 1000, webhooks: 1, inspiration_library: 1, criacao_de_conteudos: 5, publicacoes: 3 };
const START = Date.UTC(2026, 10, 2, 9);
const DAY = 86_400_000;

closeClientsAfterEach();

/** Moves the service's clock a second on, so each change below has its own instant and the order is certain. */
function tick(server: TestServer): void {
  (server.container.clock as ManualClock).advance(1_000);
}

async function auditLog(server: TestServer, ws: { workspace_id: string; api_key: string }, query: Record<string, string> = {}) {
  const qs = new URLSearchParams(query).toString();
  const res = await server.request<AuditLog>('GET', `/api/v1/workspaces/${ws.workspace_id}/audit-log${qs ? `?${qs}` : ''}`, { key: ws.api_key });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** A key of `role` on the workspace, minted directly as an owner would through the API. */
async function keyWithRole(server: TestServer, workspaceId: string, role: Role): Promise<string> {
  const db = server.container.db.kysely;
  return db.transaction().execute(async (tx) => (await mintApiKey(tx, workspaceId, `${role} key`, server.container.clock.now(), { role, brandIds: null, createdBy: null })).apiKey);
}

function clock(server: TestServer): ManualClock {
  return server.container.clock as ManualClock;
}

describeEachDb(
  'audit log',
  (server) => {
    it('records a change with its actor, role, address, user agent and the request id of the response', async () => {
      const ws = await server().workspace();
      const created = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, {
        key: ws.api_key,
        body: { name: 'Harbour Café' },
        headers: { 'user-agent': 'audit-test/1.0', 'x-request-id': 'req_audit_test_0001' },
      });
      expect(created.status).toBe(201);
      const brandId = created.body.id as string;
      const createdAt = clock(server()).now();
      tick(server());
      const renamed = await server().request('PATCH', `/api/v1/workspaces/${ws.workspace_id}/brands/${brandId}`, { key: ws.api_key, body: { name: 'Harbour Bakery' } });
      expect(renamed.status).toBe(200);

      const log = await auditLog(server(), ws);
      const [rename, create] = log.data;
      expect(create).toEqual({
        id: expect.stringMatching(/^aud_/),
        occurred_at: new Date(createdAt).toISOString(),
        action: 'brand.created',
        actor: { type: 'api_key', id: ws.key_id, label: expect.stringMatching(/^first key \(svc_live_/), role: 'owner' },
        via: 'rest',
        target: { type: 'brand', id: brandId, label: 'Harbour Café' },
        details: null,
        ip: expect.stringMatching(/127\.0\.0\.1$/),
        user_agent: 'audit-test/1.0',
        request_id: created.headers.get('x-request-id'),
      });
      expect(created.headers.get('x-request-id')).toBe('req_audit_test_0001');
      expect(rename).toMatchObject({ action: 'brand.renamed', target: { id: brandId, label: 'Harbour Bakery' }, details: { from: 'Harbour Café', to: 'Harbour Bakery' }, request_id: renamed.headers.get('x-request-id') });
    });

    it('records connections, contents, webhooks and OAuth clients, and never a secret', async () => {
      const ws = await server().workspace();
      const brand = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name: 'Acme' } });
      const brandId = brand.body.id as string;
      tick(server());
      const conn = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands/${brandId}/connections`, { key: ws.api_key, body: { platform_slug: 'threads', mode: 'sandbox', name: '@acme-threads' } });
      const connections = { threads: conn.body.id as string };
      tick(server());
      const draft = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
        key: ws.api_key,
        body: { brand_id: brandId, target_platforms: ['threads'], content_type: 'text', text: 'Fresh sourdough every morning at the harbour, from seven', draft: true },
      });
      expect(draft.status, draft.text).toBe(201);
      const contentId = draft.body.content_id as string;
      tick(server());
      expect((await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents/${contentId}/cancel`, { key: ws.api_key })).status).toBe(200);
      tick(server());
      const hook = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/webhooks`, { key: ws.api_key, body: { url: 'https://hooks.example.com/audit', enabled_events: ['content.published'] } });
      expect(hook.status, hook.text).toBe(201);
      tick(server());
      const client = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/oauth-clients`, { key: ws.api_key, body: { client_name: 'Audit GPT', redirect_uris: ['https://chat.openai.com/cb'] } });
      expect(client.status, client.text).toBe(201);
      tick(server());
      expect((await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/connections/${connections.threads!}/deactivate`, { key: ws.api_key })).status).toBe(200);

      const log = await auditLog(server(), ws);
      const actions = log.data.map((e) => e.action);
      expect(actions).toEqual(['connection.deactivated', 'oauth_client.created', 'webhook.created', 'content.canceled', 'content.created', 'connection.created', 'brand.created']);
      const byAction = new Map(log.data.map((e) => [e.action, e]));
      expect(byAction.get('content.created')!.target).toEqual({ type: 'content', id: contentId, label: 'Fresh sourdough every morning at the harbour, from seven' });
      expect(byAction.get('content.canceled')!.target?.id).toBe(contentId);
      expect(byAction.get('webhook.created')!.target).toEqual({ type: 'webhook', id: hook.body.id, label: 'https://hooks.example.com/audit' });
      expect(byAction.get('oauth_client.created')!.target).toEqual({ type: 'oauth_client', id: client.body.client_id, label: 'Audit GPT' });
      expect(byAction.get('connection.deactivated')!.target).toEqual({ type: 'connection', id: connections.threads, label: 'threads: @acme-threads' });
      const text = JSON.stringify(log);
      expect(text).not.toContain(hook.body.secret as string);
      expect(text).not.toContain(client.body.client_secret as string);
      expect(text).not.toContain(ws.api_key);
    });

    it('an entry rolls back with its change: a content refused by the plan leaves no content.created', async () => {
      const ws = await server().workspace();
      await server().container.services.workspaces.setPlan(ws.workspace_id, 'tiny');
      const { brandId } = await brandWithConnections(server(), ['threads', 'linkedin'], ws);
      const two = { brand_id: brandId, target_platforms: ['threads', 'linkedin'], content_type: 'text', text: 'Now' };
      expect((await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, { key: ws.api_key, body: two })).status).toBe(201);
      // The content row and its entry are written first; the publications charge then refuses (2 + 2 > 3).
      const over = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, { key: ws.api_key, body: two });
      expect(over.status).toBe(403);
      expect(over.body).toMatchObject({ error: 'limit_reached', meter: 'publicacoes' });

      const created = await auditLog(server(), ws, { action: 'content.created' });
      expect(created.data).toHaveLength(1);
      expect((await auditLog(server(), ws)).data.some((e) => e.request_id === over.headers.get('x-request-id'))).toBe(false);
      // The operator's plan change is recorded too, as the command line's act.
      const plan = await auditLog(server(), ws, { action: 'plan.changed' });
      expect(plan.data[0]).toMatchObject({ actor: { type: 'system', id: null, label: 'operator (command line)', role: null }, via: 'cli', details: { from: 'default', to: 'tiny' } });
    });

    it('parallel cancels of one content and parallel deactivations of one connection record one entry each: only the change that happened', async () => {
      const ws = await server().workspace();
      const { brandId, connections } = await brandWithConnections(server(), ['threads'], ws);
      const draft = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
        key: ws.api_key,
        body: { brand_id: brandId, target_platforms: ['threads'], content_type: 'text', text: 'Raced', draft: true },
      });
      const contentId = draft.body.content_id as string;
      const cancels = await Promise.all(Array.from({ length: 6 }, () => server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents/${contentId}/cancel`, { key: ws.api_key })));
      expect(cancels.map((r) => r.status)).toEqual(Array(6).fill(200));
      const deactivations = await Promise.all(
        Array.from({ length: 6 }, () => server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/connections/${connections.threads!}/deactivate`, { key: ws.api_key })),
      );
      expect(deactivations.map((r) => r.status)).toEqual(Array(6).fill(200));

      expect((await auditLog(server(), ws, { action: 'content.canceled' })).data).toHaveLength(1);
      expect((await auditLog(server(), ws, { action: 'connection.deactivated' })).data).toHaveLength(1);
    });

    it('filters by action, actor, target and time, and pages newest first with a cursor', async () => {
      const ws = await server().workspace();
      const brands: string[] = [];
      const times: number[] = [];
      for (const name of ['One', 'Two', 'Three', 'Four', 'Five']) {
        clock(server()).advance(60_000);
        times.push(clock(server()).now());
        const res = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name } });
        brands.push(res.body.id as string);
      }
      const other = await keyWithRole(server(), ws.workspace_id, 'admin');
      clock(server()).advance(60_000);
      const byOther = await server().request('PATCH', `/api/v1/workspaces/${ws.workspace_id}/brands/${brands[0]!}`, { key: other, body: { name: 'Uno' } });
      expect(byOther.status).toBe(200);

      const pages: AuditEntry[][] = [];
      let cursor: string | null = null;
      do {
        const page: AuditLog = await auditLog(server(), ws, { action: 'brand.created', limit: '2', ...(cursor ? { cursor } : {}) });
        pages.push(page.data);
        cursor = page.next_cursor;
      } while (cursor !== null);
      expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
      expect(pages.flat().map((e) => e.target?.label)).toEqual(['Five', 'Four', 'Three', 'Two', 'One']);

      const mine = await auditLog(server(), ws, { actor_id: ws.key_id });
      expect(mine.data.every((e) => e.actor.id === ws.key_id)).toBe(true);
      expect(mine.data).toHaveLength(5);
      const otherId = (await auditLog(server(), ws, { action: 'brand.renamed' })).data[0]!.actor.id!;
      expect(otherId).not.toBe(ws.key_id);
      const theirs = await auditLog(server(), ws, { actor_id: otherId });
      expect(theirs.data.map((e) => [e.action, e.actor.role, e.actor.label])).toEqual([['brand.renamed', 'admin', expect.stringMatching(/^admin key \(svc_live_/)]]);

      const first = await auditLog(server(), ws, { target_type: 'brand', target_id: brands[0]! });
      expect(first.data.map((e) => e.action)).toEqual(['brand.renamed', 'brand.created']);
      const window = await auditLog(server(), ws, { from: new Date(times[1]!).toISOString(), to: new Date(times[3]!).toISOString() });
      expect(window.data.map((e) => e.target?.label)).toEqual(['Three', 'Two']);

      const bad = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/audit-log?cursor=garbage`, { key: ws.api_key });
      expect(bad.status).toBe(400);
      expect(bad.body).toMatchObject({ error: 'validation_failed' });
    });

    it('only owners and admins read it: editor and viewer keys get 403 naming audit.read; another workspace sees none of it', async () => {
      const ws = await server().workspace();
      for (const role of ['editor', 'viewer', 'contributor', 'client'] as const) {
        const key = await keyWithRole(server(), ws.workspace_id, role);
        const res = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/audit-log`, { key });
        expect(res.status, role).toBe(403);
        expect(res.body).toMatchObject({ error: 'forbidden', permission: 'audit.read' });
      }
      const admin = await keyWithRole(server(), ws.workspace_id, 'admin');
      expect((await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/audit-log`, { key: admin })).status).toBe(200);
      const stranger = await server().workspace();
      expect((await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/audit-log`, { key: stranger.api_key })).status).toBe(403);
    });

    it('the retention sweep deletes entries older than AUDIT_RETENTION, and only those', async () => {
      const ws = await server().workspace();
      tick(server());
      const at = clock(server()).now();
      await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name: 'Old' } });
      clock(server()).advance(20 * DAY);
      await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name: 'Newer' } });
      expect(server().container.config.auditRetentionMs).toBe(45 * DAY);

      const { audit } = server().container.services;
      const labels = async () => (await auditLog(server(), ws)).data.map((e) => e.target?.label);
      const before = await server().container.db.kysely.selectFrom('audit_events').select('id').where('occurred_at', '<', at).execute();

      // Exactly the retention: the oldest entry is kept (older than, not as old as), and earlier tests' entries go.
      clock(server()).set(at + 45 * DAY);
      expect(await audit.sweep(server().container.config.auditRetentionMs, 2)).toBe(before.length);
      expect(await labels()).toEqual(['Newer', 'Old']);
      clock(server()).set(at + 45 * DAY + 1);
      expect(await audit.sweep(server().container.config.auditRetentionMs, 2)).toBe(1);
      expect(await labels()).toEqual(['Newer']);
    });

    it('get_audit_log answers an owner over MCP, with the changes made through MCP marked so', async () => {
      const ws = await server().workspace();
      const client = await connect(server(), ws.api_key);
      const brand = await call<{ id: string }>(client, 'create_brand', { name: 'Via MCP' });
      const log = await call<AuditLog>(client, 'get_audit_log', { action: 'brand.created' });
      expect(log.data).toHaveLength(1);
      expect(log.data[0]).toMatchObject({ action: 'brand.created', via: 'mcp', actor: { type: 'api_key', id: ws.key_id, role: 'owner' }, target: { id: brand.id, label: 'Via MCP' }, request_id: expect.stringMatching(/.+/) });

      const viewer = await connect(server(), await keyWithRole(server(), ws.workspace_id, 'viewer'));
      expect(await callFailing(viewer, 'get_audit_log', {})).toMatchObject({ error: 'forbidden', permission: 'audit.read' });
    });

    it('the dashboard shows the log to an owner, records its own changes as the dashboard, and hides the page from a viewer', async () => {
      const ws = await server().workspace();
      const owner = new DashboardClient(server().url);
      await owner.signIn(ws.api_key);
      await owner.get('/dashboard/brands');
      const made = await owner.post('/dashboard/brands', { name: 'Made in the dashboard' });
      expect(made.status).toBeLessThan(400);
      const page = await owner.get('/dashboard/audit-log?action=brand.created');
      expect(page.status).toBe(200);
      const text = textOf(page.html);
      expect(text).toContain('Made in the dashboard');
      expect(text).toContain('brand.created');
      expect(page.html).toContain('href="/dashboard/audit-log"');
      expect((await auditLog(server(), ws, { action: 'brand.created' })).data[0]).toMatchObject({ via: 'dashboard', target: { label: 'Made in the dashboard' } });

      const viewer = new DashboardClient(server().url);
      await viewer.signIn(await keyWithRole(server(), ws.workspace_id, 'viewer'));
      const overview = await viewer.get('/dashboard');
      expect(overview.html).not.toContain('href="/dashboard/audit-log"');
      expect((await viewer.get('/dashboard/audit-log')).status).toBe(403);
    });
  },
  { PLANS_JSON: JSON.stringify({ tiny: TINY_PLAN }), AUDIT_RETENTION: '45d' },
  () => ({ clock: new ManualClock(START), workers: false }),
);
