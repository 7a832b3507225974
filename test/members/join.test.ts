import { expect, it } from 'vitest';
import { DashboardClient } from '../support/dashboard.js';
import { describeEachDb } from '../support/server.js';
import { auditActions, brand, keyWithRole, person } from './support.js';

/** The path and query of an invitation link. */
const pathOf = (url: string) => new URL(url).pathname;

describeEachDb('accepting an invitation through the join page, and the Members page', (server) => {
  async function invite(ws: { workspace_id: string; api_key: string }, body: Record<string, unknown>): Promise<string> {
    const res = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/invitations`, { key: ws.api_key, body });
    expect(res.status).toBe(201);
    return pathOf(res.body.accept_url as string);
  }

  it('a person without an account makes one on the page, lands signed in in the workspace, and the link then no longer works', async () => {
    const ws = await server().workspace('Acme');
    const b = await brand(server(), ws.workspace_id, ws.api_key, 'Acme shop');
    const link = await invite(ws, { email: 'rita@example.com', role: 'contributor', brand_ids: [b] });

    const rita = new DashboardClient(server().url);
    const page = await rita.get(link);
    expect(page.status).toBe(200);
    expect(page.html).toContain('Join Acme');
    expect(page.html).toContain('<strong>contributor</strong>');
    expect(page.html).toContain('rita@example.com');

    const short = await rita.post(link, { as: 'new', password: 'short', name: 'Rita' });
    expect(short.status).toBe(400);
    expect(short.html).toContain('join-password-error');

    const refused = await rita.post(link, { as: 'new', password: 'a long enough password' }, { csrf: 'forged' });
    expect(refused.status).toBe(403);

    const joined = await rita.post(link, { as: 'new', password: 'a long enough password', name: 'Rita' });
    expect(joined.status).toBe(200);
    expect(new URL(joined.url).pathname).toBe('/dashboard');
    expect(joined.html).toContain('you joined the workspace');

    const members = await rita.get('/dashboard/members');
    expect(members.status).toBe(200);
    expect(members.html).toContain('Rita (rita@example.com)');
    // A contributor reads members but is offered no way to change them.
    expect(members.html).not.toContain('Invite a person');
    expect(members.html).not.toContain('/remove');

    const listed = await server().request<{ data: { email: string; role: string; brand_ids: string[] | null }[] }>('GET', `/api/v1/workspaces/${ws.workspace_id}/members`, { key: ws.api_key });
    expect(listed.body.data).toEqual([expect.objectContaining({ email: 'rita@example.com', role: 'contributor', brand_ids: [b] })]);
    expect(await auditActions(server(), ws.workspace_id)).toEqual(['member.invited', 'member.joined']);

    const used = await new DashboardClient(server().url).get(link);
    expect(used.status).toBe(410);
    expect(used.html).toContain('already used');
    const again = new DashboardClient(server().url);
    await again.get('/dashboard/sign-in');
    expect((await again.get(`${link.slice(0, -4)}AAAA`)).status).toBe(404);
  });

  it('revoked and expired links say so; an address with an account is sent to sign in; a signed-in person joins with one button', async () => {
    const ws = await server().workspace('Beta');
    const revokedLink = await invite(ws, { email: 'x@example.com', role: 'viewer' });
    const { data } = (await server().request<{ data: { id: string }[] }>('GET', `/api/v1/workspaces/${ws.workspace_id}/invitations`, { key: ws.api_key })).body;
    await server().request('DELETE', `/api/v1/workspaces/${ws.workspace_id}/invitations/${data[0]!.id}`, { key: ws.api_key });
    const revoked = await new DashboardClient(server().url).get(revokedLink);
    expect(revoked.status).toBe(410);
    expect(revoked.html).toContain('withdrawn');

    const expiredLink = await invite(ws, { email: 'y@example.com', role: 'viewer' });
    const late = new DashboardClient(server().url);
    expect((await late.get(expiredLink)).status).toBe(200);
    await server().container.db.kysely.updateTable('invitations').set({ expires_at: Date.now() - 1 }).where('email', '=', 'y@example.com').execute();
    // The form of a page opened before the link expired is refused, and no account is made.
    const lateForm = await late.post(expiredLink, { as: 'new', password: 'a long enough password' });
    expect(lateForm.status).toBe(410);
    expect(await server().container.db.kysely.selectFrom('users').select('id').where('email', '=', 'y@example.com').execute()).toEqual([]);
    expect((await new DashboardClient(server().url).get(expiredLink)).html).toContain('expired');

    // Zoe's account appears between the page and its form: the form is refused, and the page now says to sign in.
    const link = await invite(ws, { email: 'zoe@example.com', role: 'editor' });
    const tried = new DashboardClient(server().url);
    expect((await tried.get(link)).html).toContain('Create your account');
    const existing = await person(server(), 'zoe@example.com');
    const taken = await tried.post(link, { as: 'new', password: 'a long enough password' });
    expect(taken.status).toBe(409);
    const anonymous = await new DashboardClient(server().url).get(link);
    expect(anonymous.html).not.toContain('Create your account');
    expect(anonymous.html).toContain(`/dashboard/sign-in?next=${encodeURIComponent(link)}`);

    // Zoe signed in (her session in another workspace she belongs to) joins with one button.
    const home = await server().workspace('Home');
    await server().request('POST', `/api/v1/workspaces/${home.workspace_id}/members`, { key: home.api_key, body: { email: existing.email, role: 'owner' } });
    const session = await server().container.services.sessions.openForUser(existing.id, 'password', { ip: null, userAgent: null }, home.workspace_id);
    const cookies = `svc_session=${session.token}`;
    const shownRes = await fetch(`${server().url}${link}`, { headers: { cookie: cookies } });
    const joinCsrf = /svc_join_csrf=([^;]+)/.exec(shownRes.headers.get('set-cookie') ?? '')?.[1] ?? '';
    const shown = await shownRes.text();
    expect(shown).toContain('You are signed in as zoe@example.com');
    const csrf = /name="csrf" value="([^"]+)"/.exec(shown)?.[1] ?? '';
    const accepted = await fetch(`${server().url}${link}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: `${cookies}; svc_join_csrf=${joinCsrf}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, as: 'signed_in' }).toString(),
    });
    expect(accepted.status).toBe(303);
    const resolved = await server().container.services.sessions.resolve(session.token);
    expect(resolved.state === 'active' && resolved.principal.workspaceId).toBe(ws.workspace_id);
    expect(resolved.state === 'active' && resolved.principal.role).toBe('editor');
  });

  it('the Members page: an owner invites (link shown once), changes a role, revokes and removes; an admin is offered no owner role', async () => {
    const ws = await server().workspace('Gamma');
    const p = await person(server(), 'lia@example.com');
    await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/members`, { key: ws.api_key, body: { email: p.email, role: 'viewer' } });
    const owner = new DashboardClient(server().url);
    await owner.signIn(ws.api_key);
    const page = await owner.get('/dashboard/members');
    expect(page.html).toContain('lia@example.com');
    expect(page.html).toContain('<option value="owner"');

    const invited = await owner.post('/dashboard/members/invite', { email: 'new@example.com', role: 'client', scope: 'all' });
    expect(invited.status).toBe(201);
    const link = /value="(http[^"]+\/dashboard\/join\/[^"]+)"/.exec(invited.html)?.[1];
    expect(link).toBeDefined();
    expect((await new DashboardClient(server().url).get(pathOf(link!))).status).toBe(200);
    const bad = await owner.post('/dashboard/members/invite', { email: 'nope', role: 'client', scope: 'all' });
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('invite-email-error');

    const members = (await server().request<{ data: { id: string; email: string }[] }>('GET', `/api/v1/workspaces/${ws.workspace_id}/members`, { key: ws.api_key })).body.data;
    const lia = members.find((m) => m.email === 'lia@example.com')!;
    await owner.get('/dashboard/members');
    const changed = await owner.post(`/dashboard/members/${lia.id}`, { role: 'editor', scope: 'all' });
    expect(changed.html).toContain('The member was changed.');
    const pendingId = (await server().request<{ data: { id: string; status: string }[] }>('GET', `/api/v1/workspaces/${ws.workspace_id}/invitations`, { key: ws.api_key })).body.data.find((i) => i.status === 'pending')!.id;
    expect((await owner.post(`/dashboard/invitations/${pendingId}/revoke`, {})).html).toContain('revoked');
    expect((await owner.post(`/dashboard/members/${lia.id}/remove`, {})).html).toContain('was removed');
    expect((await server().request<{ data: unknown[] }>('GET', `/api/v1/workspaces/${ws.workspace_id}/members`, { key: ws.api_key })).body.data).toEqual([]);

    const admin = new DashboardClient(server().url);
    await admin.signIn(await keyWithRole(server(), ws.workspace_id, 'admin'));
    const asAdmin = await admin.get('/dashboard/members');
    expect(asAdmin.html).toContain('Invite a person');
    expect(asAdmin.html).not.toContain('<option value="owner"');
  });
});
