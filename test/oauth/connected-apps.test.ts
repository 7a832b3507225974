import { expect, it } from 'vitest';
import type { ConnectedAppsService } from '../../src/core/connected-apps/connected-apps.service.js';
import { ServiceError } from '../../src/core/errors.js';
import type { Principal } from '../../src/core/principal.js';
import { DashboardClient, textOf } from '../support/dashboard.js';
import { Browser, pkcePair } from '../support/oauth-browser.js';
import { describeEachDb, type TestServer } from '../support/server.js';
import { claudeCodeDocument, randomLoopbackPort, useTrustedDocumentHost } from './support/document-host.js';

/**
 * Connected apps: every client holding an approval of a workspace, whichever way it identified itself, and the
 * revocation that disconnects it from that workspace only. Tokens are obtained over real HTTP (consent page,
 * token endpoint) and used on /mcp.
 */

function appsOf(server: TestServer): ConnectedAppsService {
  return server.container.services.connectedApps;
}

/** Approves `clientId` for the workspace of `apiKey` through the consent page and returns the access token. */
async function approve(base: string, clientId: string, apiKey: string): Promise<string> {
  const redirect = `http://127.0.0.1:${randomLoopbackPort()}/callback`;
  const { verifier, challenge } = pkcePair();
  const params = new URLSearchParams({ client_id: clientId, redirect_uri: redirect, response_type: 'code', scope: 'mcp', code_challenge: challenge, code_challenge_method: 'S256', resource: `${base}/mcp` });
  const callback = await new Browser().authorize(`${base}/api/oauth/mcp/authorize?${params}`, base, apiKey);
  const res = await fetch(`${base}/api/oauth/mcp/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: callback.searchParams.get('code')!, redirect_uri: redirect, client_id: clientId, code_verifier: verifier }).toString(),
  });
  const body = (await res.json()) as { access_token?: string };
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.access_token!;
}

async function mcpStatus(base: string, token: string): Promise<number> {
  const res = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });
  await res.body?.cancel();
  return res.status;
}

async function register(base: string, name: string): Promise<string> {
  const res = await fetch(`${base}/api/oauth/mcp/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: name, redirect_uris: ['http://127.0.0.1/callback'] }) });
  return ((await res.json()) as { client_id: string }).client_id;
}

const host = useTrustedDocumentHost();

describeEachDb(
  'connected apps',
  (server, kind) => {
    it("lists each workspace's apps only; revoking one for a workspace refuses its tokens there on the very next /mcp call, and nowhere else", async () => {
      const base = server().service.baseUrl;
      const apps = appsOf(server());
      const [a, b] = [await server().workspace('A'), await server().workspace('B')];
      const principalA: Principal = await server().container.services.apiKeys.authenticate(a.api_key);
      const principalB: Principal = await server().container.services.apiKeys.authenticate(b.api_key);
      const secondKeyA = await server().request('POST', `/api/v1/workspaces/${a.workspace_id}/api-keys`, { key: a.api_key, body: { name: 'second' } });
      const document = host().serve(`/${kind.name}/list/claude-code.json`, claudeCodeDocument);
      const registered = await register(base, 'Cursor');

      const docA1 = await approve(base, document, a.api_key);
      const docA2 = await approve(base, document, secondKeyA.body.api_key as string);
      const regA = await approve(base, registered, a.api_key);
      const docB = await approve(base, document, b.api_key);

      const listA = (await apps.list(principalA, a.workspace_id)).data;
      expect(listA.map((app) => app.client_id).sort()).toEqual([document, registered].sort());
      expect(listA.find((app) => app.client_id === document)).toMatchObject({ client_name: 'Claude Code', host: new URL(host().origin).host, kind: 'metadata_document', active_tokens: 2 });
      expect(listA.find((app) => app.client_id === registered)).toMatchObject({ client_name: 'Cursor', host: '127.0.0.1', kind: 'registered', active_tokens: 1 });
      for (const app of listA) expect(Date.parse(app.last_authorized_at)).toBeGreaterThanOrEqual(Date.parse(app.connected_at));
      expect((await apps.list(principalB, b.workspace_id)).data.map((app) => app.client_id)).toEqual([document]);
      await expect(apps.list(principalA, b.workspace_id)).rejects.toMatchObject({ code: 'forbidden' });
      await expect(apps.revoke(principalA, b.workspace_id, document)).rejects.toMatchObject({ code: 'forbidden' });

      for (const token of [docA1, docA2, regA, docB]) expect(await mcpStatus(base, token)).toBe(200);
      await apps.revoke(principalA, a.workspace_id, document);
      // Both keys' approvals of the app went; the registered app and the other workspace's approval stay.
      expect(await mcpStatus(base, docA1)).toBe(401);
      expect(await mcpStatus(base, docA2)).toBe(401);
      expect(await mcpStatus(base, regA)).toBe(200);
      expect(await mcpStatus(base, docB)).toBe(200);
      expect((await apps.list(principalA, a.workspace_id)).data.map((app) => app.client_id)).toEqual([registered]);
      expect((await apps.list(principalB, b.workspace_id)).data.map((app) => app.client_id)).toEqual([document]);
      const again = await apps.revoke(principalA, a.workspace_id, document).catch((err: unknown) => err);
      expect(again).toBeInstanceOf(ServiceError);
      expect((again as ServiceError).code).toBe('not_found');
    });

    it('parallel revocations of one app: at least one succeeds, the others find nothing, and none of its tokens is left', async () => {
      const base = server().service.baseUrl;
      const apps = appsOf(server());
      const ws = await server().workspace();
      const principal = await server().container.services.apiKeys.authenticate(ws.api_key);
      const document = host().serve(`/${kind.name}/parallel/client.json`, claudeCodeDocument);
      const tokens = [await approve(base, document, ws.api_key), await approve(base, document, ws.api_key)];
      const outcomes = await Promise.allSettled(Array.from({ length: 4 }, () => apps.revoke(principal, ws.workspace_id, document)));
      expect(outcomes.filter((o) => o.status === 'fulfilled').length).toBeGreaterThanOrEqual(1);
      for (const o of outcomes) if (o.status === 'rejected') expect((o.reason as ServiceError).code).toBe('not_found');
      expect((await apps.list(principal, ws.workspace_id)).data).toEqual([]);
      for (const token of tokens) expect(await mcpStatus(base, token)).toBe(401);
    });

    it('the Connected apps page lists the apps and its Revoke button disconnects one, for this workspace only', async () => {
      const base = server().service.baseUrl;
      const a = await server().workspace('Page A');
      const b = await server().workspace('Page B');
      const document = host().serve(`/${kind.name}/page/client.json`, (id) => ({ ...claudeCodeDocument(id), client_name: '<b>Claude</b> Code' }));
      const tokenA = await approve(base, document, a.api_key);
      const tokenB = await approve(base, document, b.api_key);

      {
        const dashboard = new DashboardClient(base);
        await dashboard.signIn(a.api_key);
        const page = await dashboard.get('/dashboard/connected-apps');
        expect(page.status).toBe(200);
        expect(page.html).toContain('&lt;b&gt;Claude&lt;/b&gt; Code');
        expect(textOf(page.html)).toContain(`${new URL(host().origin).host} ${document} Metadata document`);

        // A client id that is not connected here (or is another workspace's) changes nothing.
        const stranger = await dashboard.post('/dashboard/connected-apps/revoke', { client_id: 'mcp_client_notconnected' });
        expect(textOf(stranger.html)).toContain('That app was no longer connected.');
        const revoked = await dashboard.post('/dashboard/connected-apps/revoke', { client_id: document });
        expect(revoked.status).toBe(200);
        expect(textOf(revoked.html)).toContain('“<b>Claude</b> Code” was disconnected');
        expect(textOf(revoked.html)).toContain('No app is connected to this workspace.');
        expect(await mcpStatus(base, tokenA)).toBe(401);
        expect(await mcpStatus(base, tokenB)).toBe(200);

        // Without the form's CSRF token nothing is revoked.
        const other = new DashboardClient(base);
        await other.signIn(b.api_key);
        const forged = await other.post('/dashboard/connected-apps/revoke', { client_id: document }, { csrf: null });
        expect(forged.status).toBe(403);
        expect(await mcpStatus(base, tokenB)).toBe(200);
      }
    });
  },
  { ALLOW_LOCAL_URLS: 'true' },
);
