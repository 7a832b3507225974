import { expect, it } from 'vitest';
import { sha256Hex } from '../../src/core/ids.js';
import type { MailMessage, Mailer } from '../../src/core/mail/mailer.js';
import { describeEachDb } from '../support/server.js';
import { auditActions, brand, keyWithRole, person } from './support.js';

describeEachDb('members and invitations over REST', (server) => {
  const path = (ws: string, rest = '') => `/api/v1/workspaces/${ws}${rest}`;

  it('invites (token and link shown once, digest stored), lists without the token, revokes, and audits each step', async () => {
    const ws = await server().workspace();
    const b = await brand(server(), ws.workspace_id, ws.api_key);
    const created = await server().request('POST', path(ws.workspace_id, '/invitations'), { key: ws.api_key, body: { email: 'Joao@Example.com', role: 'client', brand_ids: [b] } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ email: 'joao@example.com', role: 'client', brand_ids: [b], status: 'pending', mailed: false });
    const token = created.body.token as string;
    expect(created.body.accept_url).toBe(`${server().service.baseUrl}/dashboard/join/${token}`);
    const stored = await server().container.db.kysely.selectFrom('invitations').select('token_digest').where('id', '=', created.body.id as string).executeTakeFirstOrThrow();
    expect(stored.token_digest).toBe(sha256Hex(token));

    const list = await server().request<{ data: Record<string, unknown>[] }>('GET', path(ws.workspace_id, '/invitations'), { key: ws.api_key });
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    expect(list.text).not.toContain(token);
    expect(list.body.data[0]).not.toHaveProperty('token');

    // A new invitation of the same address replaces the pending one.
    const again = await server().request('POST', path(ws.workspace_id, '/invitations'), { key: ws.api_key, body: { email: 'joao@example.com', role: 'viewer' } });
    expect(again.status).toBe(201);
    const statuses = (await server().request<{ data: { id: string; status: string }[] }>('GET', path(ws.workspace_id, '/invitations'), { key: ws.api_key })).body.data.map((i) => [i.id, i.status]);
    expect(statuses).toEqual([
      [again.body.id, 'pending'],
      [created.body.id, 'revoked'],
    ]);

    expect((await server().request('DELETE', path(ws.workspace_id, `/invitations/${again.body.id as string}`), { key: ws.api_key })).status).toBe(204);
    expect((await server().request('DELETE', path(ws.workspace_id, `/invitations/${again.body.id as string}`), { key: ws.api_key })).status).toBe(204);
    const missing = await server().request('DELETE', path(ws.workspace_id, '/invitations/inv_nope'), { key: ws.api_key });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('not_found');
    expect(await auditActions(server(), ws.workspace_id)).toEqual(['member.invited', 'member.invited', 'member.invitation_revoked']);
  });

  it('names the offending field: email, role, brand_ids of another workspace, an unknown field', async () => {
    const ws = await server().workspace();
    const other = await server().workspace('Other');
    const foreign = await brand(server(), other.workspace_id, other.api_key);
    const invite = (body: unknown) => server().request('POST', path(ws.workspace_id, '/invitations'), { key: ws.api_key, body });
    const cases: [unknown, string][] = [
      [{ email: 'not an address', role: 'editor' }, 'email'],
      [{ email: 'a@example.com', role: 'boss' }, 'role'],
      [{ email: 'a@example.com', role: 'client', brand_ids: [foreign] }, 'brand_ids[0]'],
      [{ email: 'a@example.com', role: 'client', brand_ids: [] }, 'brand_ids'],
      [{ email: 'a@example.com', role: 'editor', extra: 1 }, 'extra'],
    ];
    for (const [body, field] of cases) {
      const res = await invite(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toBe('validation_failed');
      expect((res.body.fields as { path: string }[]).map((f) => f.path), JSON.stringify(body)).toContain(field);
    }
    const unknown = await server().request('POST', path(ws.workspace_id, '/members'), { key: ws.api_key, body: { email: 'nobody@example.com', role: 'editor' } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toContain('/invitations');
    const patch = await server().request('PATCH', path(ws.workspace_id, '/members/mem_nope'), { key: ws.api_key, body: { role: 'viewer' } });
    expect(patch.status).toBe(404);
    const empty = await server().request('PATCH', path(ws.workspace_id, '/members/mem_nope'), { key: ws.api_key, body: {} });
    expect(empty.status).toBe(400);
  });

  it('role ceilings: an admin cannot make an owner, an editor cannot invite, a key limited to a brand cannot grant another', async () => {
    const ws = await server().workspace();
    const brandA = await brand(server(), ws.workspace_id, ws.api_key, 'A');
    const brandB = await brand(server(), ws.workspace_id, ws.api_key, 'B');
    const admin = await keyWithRole(server(), ws.workspace_id, 'admin');
    const editor = await keyWithRole(server(), ws.workspace_id, 'editor');
    const limited = await keyWithRole(server(), ws.workspace_id, 'admin', [brandA]);
    const invite = (key: string, body: unknown) => server().request('POST', path(ws.workspace_id, '/invitations'), { key, body });

    const ownerByAdmin = await invite(admin, { email: 'o@example.com', role: 'owner' });
    expect(ownerByAdmin.status).toBe(403);
    expect(ownerByAdmin.body).toMatchObject({ error: 'forbidden', permission: 'members.manage_owners' });
    const byEditor = await invite(editor, { email: 'e@example.com', role: 'viewer' });
    expect(byEditor.status).toBe(403);
    expect(byEditor.body.permission).toBe('members.manage');
    const byLimited = await invite(limited, { email: 'c@example.com', role: 'client', brand_ids: [brandB] });
    expect(byLimited.status).toBe(403);
    expect(byLimited.body.permission).toBe('members.manage');
    // The editor may read who is in the workspace.
    expect((await server().request('GET', path(ws.workspace_id, '/members'), { key: editor })).status).toBe(200);
    expect((await invite(admin, { email: 'a2@example.com', role: 'admin' })).status).toBe(201);

    // An admin cannot demote or remove an owner either.
    const p = await person(server());
    const owner = await server().request('POST', path(ws.workspace_id, '/members'), { key: ws.api_key, body: { email: p.email, role: 'owner' } });
    expect(owner.status).toBe(201);
    const demote = await server().request('PATCH', path(ws.workspace_id, `/members/${owner.body.id as string}`), { key: admin, body: { role: 'viewer' } });
    expect(demote.status).toBe(403);
    expect(demote.body.permission).toBe('members.manage_owners');
    expect((await server().request('DELETE', path(ws.workspace_id, `/members/${owner.body.id as string}`), { key: admin })).status).toBe(403);
    // Another workspace's key is refused outright.
    const other = await server().workspace('Other');
    expect((await server().request('GET', path(ws.workspace_id, '/members'), { key: other.api_key })).status).toBe(403);
  });

  it('adds, changes and removes members; the last owner can be neither demoted nor removed; removal ends their sessions here', async () => {
    const ws = await server().workspace();
    const b = await brand(server(), ws.workspace_id, ws.api_key);
    const [ana, bia] = [await person(server()), await person(server())];
    const add = (email: string, role: string) => server().request('POST', path(ws.workspace_id, '/members'), { key: ws.api_key, body: { email, role } });
    const first = await add(ana.email, 'owner');
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ email: ana.email, role: 'owner', brand_ids: null, user_id: ana.id });
    expect((await add(ana.email, 'viewer')).body.fields).toEqual([{ path: 'email', message: 'is already a member of this workspace' }]);
    const anaId = first.body.id as string;

    const lastDemote = await server().request('PATCH', path(ws.workspace_id, `/members/${anaId}`), { key: ws.api_key, body: { role: 'admin' } });
    expect(lastDemote.status).toBe(409);
    expect(lastDemote.body.error).toBe('last_owner');
    const lastRemove = await server().request('DELETE', path(ws.workspace_id, `/members/${anaId}`), { key: ws.api_key });
    expect(lastRemove.status).toBe(409);

    const second = await add(bia.email, 'client');
    const biaId = second.body.id as string;
    const limited = await server().request('PATCH', path(ws.workspace_id, `/members/${biaId}`), { key: ws.api_key, body: { brand_ids: [b, b] } });
    expect(limited.status).toBe(200);
    expect(limited.body).toMatchObject({ role: 'client', brand_ids: [b] });
    const promoted = await server().request('PATCH', path(ws.workspace_id, `/members/${biaId}`), { key: ws.api_key, body: { role: 'owner', brand_ids: null } });
    expect(promoted.body).toMatchObject({ role: 'owner', brand_ids: null });
    expect((await server().request('PATCH', path(ws.workspace_id, `/members/${anaId}`), { key: ws.api_key, body: { role: 'editor' } })).status).toBe(200);

    // Ana has a session in this workspace and one in another; removal ends only this one.
    const elsewhere = await server().workspace('Elsewhere');
    await server().request('POST', path(elsewhere.workspace_id, '/members'), { key: elsewhere.api_key, body: { email: ana.email, role: 'viewer' } });
    const sessions = server().container.services.sessions;
    const here = await sessions.openForUser(ana.id, 'password', { ip: null, userAgent: null }, ws.workspace_id);
    const there = await sessions.openForUser(ana.id, 'password', { ip: null, userAgent: null }, elsewhere.workspace_id);
    expect((await sessions.resolve(here.token)).state).toBe('active');
    expect((await server().request('DELETE', path(ws.workspace_id, `/members/${anaId}`), { key: ws.api_key })).status).toBe(204);
    expect((await sessions.resolve(here.token)).state).toBe('none');
    expect((await sessions.resolve(there.token)).state).toBe('active');

    const list = await server().request<{ data: { email: string; role: string }[] }>('GET', path(ws.workspace_id, '/members'), { key: ws.api_key });
    expect(list.body.data.map((m) => [m.email, m.role])).toEqual([[bia.email, 'owner']]);
    expect(await auditActions(server(), ws.workspace_id)).toEqual(['member.added', 'member.added', 'member.role_changed', 'member.role_changed', 'member.role_changed', 'member.removed']);
  });
});

const mailed: MailMessage[] = [];
const capture: Mailer = {
  send: async (message) => {
    mailed.push(message);
  },
};

describeEachDb(
  'invitations with a mailer',
  (server) => {
    it('mails the link to the invited address and says so; the answer still carries the link', async () => {
      const ws = await server().workspace('Mailing');
      const res = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/invitations`, { key: ws.api_key, body: { email: 'mail@example.com', role: 'viewer' } });
      expect(res.status).toBe(201);
      expect(res.body.mailed).toBe(true);
      const message = [...mailed].reverse().find((m) => m.to === 'mail@example.com');
      expect(message?.subject).toContain('Mailing');
      expect(message?.text).toContain(res.body.accept_url as string);
    });
  },
  {},
  () => ({ mailer: capture }),
);
