import { expect, it } from 'vitest';
import { insertMembership } from '../../db/repositories/memberships.repo.js';
import { deleteOrphanGrantAccess } from '../../db/repositories/oauth-grant-access.repo.js';
import { insertUser } from '../../db/repositories/users.repo.js';
import { newId } from '../../src/core/ids.js';
import type { Role } from '../../src/core/permissions/roles.js';
import { createProvider, mcpResourceOf } from '../../oauth/provider.js';
import { createTokenVerifier } from '../../oauth/token-verifier.js';
import { DashboardClient, textOf } from '../support/dashboard.js';
import { Browser, pkcePair } from '../support/oauth-browser.js';
import { describeEachDb, type TestServer } from '../support/server.js';
import { randomLoopbackPort } from './support/document-host.js';

/**
 * The consent page for people: a person signed in to the dashboard approves an assistant for one of their
 * workspaces with a role up to their own; the token acts with that role narrowed, at every call, to what the
 * person holds then. Everything goes over real HTTP: the dashboard session cookie, the hand-over to the consent
 * page, the form, the token endpoint, then the REST API with the token.
 */

interface Person {
  userId: string;
  email: string;
  /** The dashboard cookie's value. */
  session: string;
  /** Membership ids, in the order given. */
  memberIds: string[];
}

async function person(server: TestServer, memberships: { workspaceId: string; role: Role; brandIds?: string[] | null }[]): Promise<Person> {
  const db = server.container.db.kysely;
  const now = server.container.clock.now();
  const userId = newId('usr_');
  const email = `${userId}@example.test`;
  await insertUser(db, { id: userId, email, name: null, passwordHash: null, emailVerifiedAt: now, createdAt: now, updatedAt: now });
  const memberIds: string[] = [];
  for (const m of memberships) {
    memberIds.push(newId('mem_'));
    await insertMembership(db, { id: memberIds.at(-1)!, workspaceId: m.workspaceId, userId, role: m.role, brandIds: m.brandIds ?? null, createdAt: now, updatedAt: now });
  }
  const { token } = await server.container.services.sessions.openForUser(userId, 'password', { ip: null, userAgent: null }, memberships[0]?.workspaceId);
  return { userId, email, session: token, memberIds };
}

async function register(base: string): Promise<{ clientId: string; redirect: string }> {
  const redirect = `http://127.0.0.1:${randomLoopbackPort()}/callback`;
  const res = await fetch(`${base}/api/oauth/mcp/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'Drafting assistant', redirect_uris: [redirect] }) });
  expect(res.status).toBe(201);
  return { clientId: ((await res.json()) as { client_id: string }).client_id, redirect };
}

/** A consent page as a signed-in person sees it: the authorization, then sign-in's `next` through the hand-over. */
interface ConsentPage {
  browser: Browser;
  uid: string;
  html: string;
  csrf: string;
  verifier: string;
  clientId: string;
  redirect: string;
}

async function openConsent(server: TestServer, who: Person | null, client?: { clientId: string; redirect: string }): Promise<ConsentPage> {
  const base = server.service.baseUrl;
  const { clientId, redirect } = client ?? (await register(base));
  const browser = new Browser();
  if (who) browser.set('svc_session', who.session, '/dashboard');
  const { verifier, challenge } = pkcePair();
  const params = new URLSearchParams({ client_id: clientId, redirect_uri: redirect, response_type: 'code', scope: 'mcp', code_challenge: challenge, code_challenge_method: 'S256', resource: `${base}/mcp` });
  const first = await browser.follow(`${base}/api/oauth/mcp/authorize?${params}`, base);
  expect(first.res.status).toBe(200);
  const firstHtml = await first.res.text();
  const uid = /\/interaction\/([^/"]+)\/confirm/.exec(firstHtml)![1]!;
  // The dashboard cookie is scoped to /dashboard: the consent page cannot tell who is signed in, and offers sign-in.
  expect(firstHtml).not.toContain('Approve as');
  const signIn = /<a href="([^"]+)">Sign in<\/a>/.exec(firstHtml)![1]!.replace(/&amp;/g, '&');
  expect(signIn).toBe(`/dashboard/sign-in?next=${encodeURIComponent(`/dashboard/authorize/${uid}`)}`);
  if (!who) return { browser, uid, html: firstHtml, csrf: csrfOf(firstHtml), verifier, clientId, redirect };
  // Signed in already, sign-in follows `next` at once; the hand-over sends the person back to the consent page.
  const back = await browser.follow(`${base}${signIn}`, base);
  expect(back.url).toBe(`${base}/api/oauth/mcp/interaction/${uid}`);
  const sent = browser.cookieNames(`/api/oauth/mcp/interaction/${uid}`);
  expect(sent).toContain('svc_consent_session');
  expect(sent).not.toContain('svc_session');
  const html = await back.res.text();
  expect(back.res.status, html).toBe(200);
  return { browser, uid, html, csrf: csrfOf(html), verifier, clientId, redirect };
}

function csrfOf(html: string): string {
  return /name="csrf" value="([^"]+)"/.exec(html)![1]!;
}

/** The option values of one select of the page. */
function optionsOf(html: string, selectId: string): { values: string[]; selected: string | undefined } {
  const select = new RegExp(`<select id="${selectId}"[^>]*>([\\s\\S]*?)</select>`).exec(html)?.[1] ?? '';
  const options = [...select.matchAll(/<option value="([^"]*)"( selected)?>/g)];
  return { values: options.map((m) => m[1]!), selected: options.find((m) => m[2])?.[1] };
}

/** Posts the consent form; returns the token on success, or the page answered instead. */
async function approve(server: TestServer, page: ConsentPage, fields: Record<string, string | string[]>): Promise<{ token: string } | { status: number; html: string }> {
  const base = server.service.baseUrl;
  const body = new URLSearchParams({ csrf: page.csrf });
  for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) body.append(k, one);
  const posted = await page.browser.follow(`${base}/api/oauth/mcp/interaction/${page.uid}/confirm`, base, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: body.toString(),
  });
  if (posted.url.startsWith(base)) return { status: posted.res.status, html: await posted.res.text() };
  const code = new URL(posted.url).searchParams.get('code');
  expect(code, posted.url).toBeTruthy();
  const res = await fetch(`${base}/api/oauth/mcp/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: code!, redirect_uri: page.redirect, client_id: page.clientId, code_verifier: page.verifier }).toString(),
  });
  const json = (await res.json()) as { access_token?: string };
  expect(res.status, JSON.stringify(json)).toBe(200);
  return { token: json.access_token! };
}

function tokenOf(result: { token: string } | { status: number; html: string }): string {
  if (!('token' in result)) throw new Error(`approval refused (${result.status}): ${result.html}`);
  return result.token;
}

/** An operation only owners and admins may do: listing the workspace's OAuth clients. */
async function listClients(server: TestServer, workspaceId: string, token: string) {
  return server.request<{ error?: string; permission?: string }>('GET', `/api/v1/workspaces/${workspaceId}/oauth-clients`, { key: token });
}

describeEachDb('the consent page for a signed-in person', (server) => {
  it('a person approves with role contributor: the token acts as a contributor, for that person, and the approval is audited and listed', async () => {
    const ws = await server().workspace('Drafts');
    const alice = await person(server(), [{ workspaceId: ws.workspace_id, role: 'admin' }]);
    const page = await openConsent(server(), alice);
    expect(page.html).toContain(`Approve as ${alice.email}`);
    expect(optionsOf(page.html, 'role')).toEqual({ values: ['admin', 'editor', 'contributor', 'viewer', 'client'], selected: 'contributor' });
    expect(page.html).toContain('Drafts that a person approves (contributor)');
    // One workspace: nothing to choose.
    expect(page.html).not.toContain('id="workspace_choice"');

    const token = tokenOf(await approve(server(), page, { as: 'person', workspace: ws.workspace_id, role: 'contributor' }));
    const me = await server().request<{ workspace: { id: string }; credential: { kind: string; key_id: string | null } }>('GET', '/api/v1/me', { key: token });
    expect(me.status).toBe(200);
    expect(me.body.workspace.id).toBe(ws.workspace_id);
    expect(me.body.credential).toMatchObject({ kind: 'oauth', key_id: null });
    const refused = await listClients(server(), ws.workspace_id, token);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: 'forbidden', permission: 'oauth_clients.manage' });
    // The principal behind the token, as the doors get it: the person who approved, no key, the granted role.
    const { baseUrl } = server().service;
    const provider = await createProvider(server().container.db.kysely, { baseUrl, secretKey: server().container.secretKey, accessTokenTtlSeconds: 3600, trustProxy: false });
    const verify = createTokenVerifier({ provider, resource: mcpResourceOf(baseUrl), grantAccess: server().container.services.grantAccess, metadataDocumentClients: false });
    expect(await verify(token)).toEqual({ kind: 'oauth', workspaceId: ws.workspace_id, clientId: page.clientId, keyId: null, userId: alice.userId, role: 'contributor', brandIds: null });

    const audit = await server().container.db.kysely.selectFrom('audit_events').selectAll().where('workspace_id', '=', ws.workspace_id).where('action', '=', 'oauth_grant.approved').execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor_type: 'user', actor_id: alice.userId, actor_role: 'admin', target_type: 'oauth_client', target_id: page.clientId, target_label: 'Drafting assistant', via: 'dashboard' });
    expect(JSON.parse(audit[0]!.details!)).toMatchObject({ role: 'contributor', brand_ids: null });

    const owner = await server().container.services.apiKeys.authenticate(ws.api_key);
    const apps = (await server().container.services.connectedApps.list(owner, ws.workspace_id)).data;
    expect(apps).toHaveLength(1);
    expect(apps[0]!.approvals).toEqual([expect.objectContaining({ role: 'contributor', brand_ids: null, approved_by: { type: 'user', id: alice.userId, label: alice.email } })]);
    const dashboard = new DashboardClient(server().service.baseUrl);
    await dashboard.signIn(ws.api_key);
    expect(textOf((await dashboard.get('/dashboard/connected-apps')).html)).toContain(`contributor, by ${alice.email}`);
  });

  it('offers no role above the person’s own, and refuses one forged into the form', async () => {
    const ws = await server().workspace();
    const bob = await person(server(), [{ workspaceId: ws.workspace_id, role: 'editor' }]);
    const page = await openConsent(server(), bob);
    expect(optionsOf(page.html, 'role')).toEqual({ values: ['editor', 'contributor', 'viewer', 'client'], selected: 'contributor' });
    const forged = await approve(server(), page, { as: 'person', workspace: ws.workspace_id, role: 'admin' });
    expect(forged).toMatchObject({ status: 400 });
    expect('html' in forged && forged.html).toContain('role admin is above your own role (editor)');
    const unknown = await approve(server(), page, { as: 'person', workspace: ws.workspace_id, role: 'superuser' });
    expect(unknown).toMatchObject({ status: 400 });
    const viewerOnly = await person(server(), [{ workspaceId: ws.workspace_id, role: 'viewer' }]);
    const viewerPage = await openConsent(server(), viewerOnly);
    // Contributor is not within a viewer: the person's own role comes first.
    expect(optionsOf(viewerPage.html, 'role')).toEqual({ values: ['viewer'], selected: 'viewer' });
    const rows = await server().container.db.kysely.selectFrom('oauth_grant_access').select('grant_id').where('workspace_id', '=', ws.workspace_id).execute();
    expect(rows).toEqual([]);
  });

  it('a person in two workspaces chooses one, with the roles they hold there; a workspace they do not belong to is refused', async () => {
    const a = await server().workspace('Agency');
    const b = await server().workspace('Bakery');
    const stranger = await server().workspace('Someone else');
    const carol = await person(server(), [
      { workspaceId: a.workspace_id, role: 'admin' },
      { workspaceId: b.workspace_id, role: 'contributor' },
    ]);
    const page = await openConsent(server(), carol);
    const choice = optionsOf(page.html, 'workspace_choice');
    // Memberships made in the same millisecond come in id order, so the order is not the test's to fix.
    expect([...choice.values].sort()).toEqual([a.workspace_id, b.workspace_id].sort());
    expect(choice.selected).toBe(a.workspace_id);
    expect(optionsOf(page.html, 'role').values).toEqual(['admin', 'editor', 'contributor', 'viewer', 'client']);

    const base = server().service.baseUrl;
    const inB = await page.browser.fetch(`${base}/api/oauth/mcp/interaction/${page.uid}?workspace=${b.workspace_id}`);
    const inBHtml = await inB.text();
    expect(inB.status).toBe(200);
    expect(optionsOf(inBHtml, 'workspace_choice').selected).toBe(b.workspace_id);
    expect(optionsOf(inBHtml, 'role')).toEqual({ values: ['contributor', 'viewer'], selected: 'contributor' });
    expect(inBHtml).toContain(`name="workspace" value="${b.workspace_id}"`);

    const elsewhere = await approve(server(), page, { as: 'person', workspace: stranger.workspace_id, role: 'viewer' });
    expect(elsewhere).toMatchObject({ status: 403 });
    const token = tokenOf(await approve(server(), page, { as: 'person', workspace: b.workspace_id, role: 'contributor' }));
    const me = await server().request<{ workspace: { id: string } }>('GET', '/api/v1/me', { key: token });
    expect(me.body.workspace.id).toBe(b.workspace_id);
  });

  it('demoting the person narrows the token at its next call; removing them ends it; rotating the API keys does not', async () => {
    const ws = await server().workspace();
    const dave = await person(server(), [{ workspaceId: ws.workspace_id, role: 'admin' }]);
    const token = tokenOf(await approve(server(), await openConsent(server(), dave), { as: 'person', workspace: ws.workspace_id, role: 'admin' }));
    expect((await listClients(server(), ws.workspace_id, token)).status).toBe(200);

    // The person's grant depends on no key: a rotation that revokes every other key leaves it.
    const rotated = await server().request<{ api_key: string }>('POST', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: ws.api_key, body: { name: 'rotated', revoke_others: true } });
    expect(rotated.status).toBe(201);
    expect((await listClients(server(), ws.workspace_id, token)).status).toBe(200);

    const db = server().container.db.kysely;
    await db.updateTable('memberships').set({ role: 'editor' }).where('workspace_id', '=', ws.workspace_id).where('user_id', '=', dave.userId).execute();
    const narrowed = await listClients(server(), ws.workspace_id, token);
    expect(narrowed.status).toBe(403);
    expect(narrowed.body).toMatchObject({ error: 'forbidden', permission: 'oauth_clients.manage' });
    expect((await server().request('GET', '/api/v1/me', { key: token })).status).toBe(200);

    // Back to admin: the grant (admin) applies in full again.
    await db.updateTable('memberships').set({ role: 'admin' }).where('workspace_id', '=', ws.workspace_id).where('user_id', '=', dave.userId).execute();
    expect((await listClients(server(), ws.workspace_id, token)).status).toBe(200);

    await db.deleteFrom('memberships').where('workspace_id', '=', ws.workspace_id).where('user_id', '=', dave.userId).execute();
    const ended = await server().request<{ error: string }>('GET', '/api/v1/me', { key: token });
    expect(ended.status).toBe(401);
    expect(ended.body.error).toBe('invalid_token');
  });

  it('limits the grant to brands of the person’s own; a brand beyond theirs is refused', async () => {
    const ws = await server().workspace();
    const brand = async (name: string) => (await server().request<{ id: string }>('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name } })).body.id;
    const [mine, other] = [await brand('Mine'), await brand('Other')];
    const erin = await person(server(), [{ workspaceId: ws.workspace_id, role: 'editor', brandIds: [mine] }]);
    const page = await openConsent(server(), erin);
    expect(page.html).toContain(`value="${mine}"`);
    expect(page.html).not.toContain(`value="${other}"`);
    const beyond = await approve(server(), page, { as: 'person', workspace: ws.workspace_id, role: 'contributor', brand_ids: [mine, other] });
    expect(beyond).toMatchObject({ status: 400 });
    tokenOf(await approve(server(), page, { as: 'person', workspace: ws.workspace_id, role: 'contributor', brand_ids: [mine] }));
    const row = await server().container.db.kysely.selectFrom('oauth_grant_access').select(['role', 'brand_ids', 'approver_id']).where('workspace_id', '=', ws.workspace_id).executeTakeFirstOrThrow();
    expect(row).toEqual({ role: 'contributor', brand_ids: JSON.stringify([mine]), approver_id: erin.userId });
  });

  it('the API-key path: the key’s own role by default, a narrower one on request, never a wider one', async () => {
    const ws = await server().workspace();
    const created = (await server().request<{ id: string; api_key: string }>('POST', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: ws.api_key, body: { name: 'admin key' } })).body;
    // Whatever role a new key gets by default, this one is an admin.
    await server().container.db.kysely.updateTable('api_keys').set({ role: 'admin' }).where('id', '=', created.id).execute();
    const admin = created.api_key;
    const byDefault = tokenOf(await approve(server(), await openConsent(server(), null), { api_key: admin }));
    expect((await listClients(server(), ws.workspace_id, byDefault)).status).toBe(200);
    const page = await openConsent(server(), null);
    expect(optionsOf(page.html, 'key_role')).toEqual({ values: ['', 'owner', 'admin', 'editor', 'contributor', 'viewer', 'client'], selected: undefined });
    const contributor = tokenOf(await approve(server(), page, { api_key: admin, role: 'contributor' }));
    expect((await listClients(server(), ws.workspace_id, contributor)).body).toMatchObject({ error: 'forbidden', permission: 'oauth_clients.manage' });
    const wider = await approve(server(), await openConsent(server(), null), { api_key: admin, role: 'owner' });
    expect(wider).toMatchObject({ status: 400 });
    const audit = await server().container.db.kysely.selectFrom('audit_events').select(['actor_type', 'actor_role']).where('workspace_id', '=', ws.workspace_id).where('action', '=', 'oauth_grant.approved').execute();
    expect(audit).toEqual([
      { actor_type: 'api_key', actor_role: 'admin' },
      { actor_type: 'api_key', actor_role: 'admin' },
    ]);
  });

  it('parallel approvals by one person: each grant gets exactly one row and one audit entry', async () => {
    const ws = await server().workspace();
    const fay = await person(server(), [{ workspaceId: ws.workspace_id, role: 'admin' }]);
    const client = await register(server().service.baseUrl);
    const pages = await Promise.all(Array.from({ length: 4 }, () => openConsent(server(), fay, client)));
    const tokens = await Promise.all(pages.map(async (p, i) => tokenOf(await approve(server(), p, { as: 'person', workspace: ws.workspace_id, role: i % 2 === 0 ? 'contributor' : 'viewer' }))));
    const db = server().container.db.kysely;
    const rows = await db.selectFrom('oauth_grant_access').select(['grant_id', 'role']).where('workspace_id', '=', ws.workspace_id).execute();
    expect(new Set(rows.map((r) => r.grant_id)).size).toBe(4);
    expect(rows.map((r) => r.role).sort()).toEqual(['contributor', 'contributor', 'viewer', 'viewer']);
    expect(await db.selectFrom('audit_events').select('id').where('workspace_id', '=', ws.workspace_id).where('action', '=', 'oauth_grant.approved').execute()).toHaveLength(4);
    for (const token of tokens) expect((await server().request('GET', '/api/v1/me', { key: token })).status).toBe(200);
  });

  it('what a grant carried is swept once the grant is gone, never while it is being approved', async () => {
    const ws = await server().workspace();
    const gus = await person(server(), [{ workspaceId: ws.workspace_id, role: 'admin' }]);
    const revoked = await openConsent(server(), gus);
    tokenOf(await approve(server(), revoked, { as: 'person', workspace: ws.workspace_id, role: 'viewer' }));
    const kept = await openConsent(server(), gus);
    tokenOf(await approve(server(), kept, { as: 'person', workspace: ws.workspace_id, role: 'editor' }));
    const owner = await server().container.services.apiKeys.authenticate(ws.api_key);
    await server().container.services.connectedApps.revoke(owner, ws.workspace_id, revoked.clientId);
    const db = server().container.db.kysely;
    const roles = async () => (await db.selectFrom('oauth_grant_access').select('role').where('workspace_id', '=', ws.workspace_id).execute()).map((r) => r.role).sort();
    const now = server().container.clock.now();
    // Written just now: within the margin the sweep leaves it, as it would a row whose grant is about to be saved.
    await deleteOrphanGrantAccess(db, now - 3_600_000);
    expect(await roles()).toEqual(['editor', 'viewer']);
    await deleteOrphanGrantAccess(db, now + 1);
    expect(await roles()).toEqual(['editor']);
  });

  it('a dashboard session opened with an API key is not handed to the consent page, which keeps asking for the key', async () => {
    const ws = await server().workspace();
    const { token } = await server().container.services.sessions.signIn(ws.api_key);
    const page = await openConsent(server(), null);
    const base = server().service.baseUrl;
    page.browser.set('svc_session', token, '/dashboard');
    const back = await page.browser.follow(`${base}/dashboard/authorize/${page.uid}`, base);
    expect(back.url).toBe(`${base}/api/oauth/mcp/interaction/${page.uid}`);
    expect(page.browser.cookieNames(`/api/oauth/mcp/interaction/${page.uid}`)).not.toContain('svc_consent_session');
    const html = await back.res.text();
    expect(html).not.toContain('Approve as');
    expect(html).toContain('Your API key');
  });

  it('through the members API: an owner demotes the person and the token narrows, removes them and it ends', async () => {
    const ws = await server().workspace();
    const hal = await person(server(), [{ workspaceId: ws.workspace_id, role: 'admin' }]);
    const token = tokenOf(await approve(server(), await openConsent(server(), hal), { as: 'person', workspace: ws.workspace_id, role: 'admin' }));
    expect((await listClients(server(), ws.workspace_id, token)).status).toBe(200);
    const member = `/api/v1/workspaces/${ws.workspace_id}/members/${hal.memberIds[0]}`;
    expect((await server().request('PATCH', member, { key: ws.api_key, body: { role: 'contributor' } })).status).toBe(200);
    expect((await listClients(server(), ws.workspace_id, token)).body).toMatchObject({ error: 'forbidden', permission: 'oauth_clients.manage' });
    expect((await server().request('DELETE', member, { key: ws.api_key })).status).toBe(204);
    expect((await server().request('GET', '/api/v1/me', { key: token })).status).toBe(401);
  });

  it('removing a person through the members API takes the apps they approved in that workspace off Connected apps; their approval elsewhere stays', async () => {
    const ws = await server().workspace('Left');
    const other = await server().workspace('Stays');
    const ida = await person(server(), [
      { workspaceId: ws.workspace_id, role: 'admin' },
      { workspaceId: other.workspace_id, role: 'admin' },
    ]);
    const client = await register(server().service.baseUrl);
    const here = tokenOf(await approve(server(), await openConsent(server(), ida, client), { as: 'person', workspace: ws.workspace_id, role: 'editor' }));
    const there = tokenOf(await approve(server(), await openConsent(server(), ida, client), { as: 'person', workspace: other.workspace_id, role: 'editor' }));
    const appsPage = async (key: string) => {
      const dashboard = new DashboardClient(server().service.baseUrl);
      await dashboard.signIn(key);
      return textOf((await dashboard.get('/dashboard/connected-apps')).html);
    };
    expect(await appsPage(ws.api_key)).toContain(`editor, by ${ida.email}`);

    expect((await server().request('DELETE', `/api/v1/workspaces/${ws.workspace_id}/members/${ida.memberIds[0]}`, { key: ws.api_key })).status).toBe(204);
    const owner = await server().container.services.apiKeys.authenticate(ws.api_key);
    expect((await server().container.services.connectedApps.list(owner, ws.workspace_id)).data).toEqual([]);
    expect(await appsPage(ws.api_key)).not.toContain('Drafting assistant');
    expect((await server().request('GET', '/api/v1/me', { key: here })).status).toBe(401);
    const db = server().container.db.kysely;
    // Grants, codes and tokens go; the provider's sign-in session of the browser may stay (it grants nothing).
    const issued = await db.selectFrom('oauth_store').select('model').where('account_id', '=', `${ws.workspace_id}:${ida.userId}`).where('model', '!=', 'Session').execute();
    expect(issued).toEqual([]);
    expect(await db.selectFrom('oauth_grant_access').select('grant_id').where('workspace_id', '=', ws.workspace_id).execute()).toEqual([]);

    expect((await server().request('GET', '/api/v1/me', { key: there })).status).toBe(200);
    expect(await appsPage(other.api_key)).toContain(`editor, by ${ida.email}`);
  });
});
