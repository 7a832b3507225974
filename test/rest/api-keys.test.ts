import { describe, expect, it } from 'vitest';
import { DashboardClient, textOf } from '../support/dashboard.js';
import { describeEachDb } from '../support/server.js';

describeEachDb('API keys', (server) => {
  it('creates a key in the spec format and shows the plaintext only once', async () => {
    const ws = await server().workspace();
    const created = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, {
      key: ws.api_key,
      body: { name: 'zapier' },
    });
    expect(created.status).toBe(201);
    const key = created.body.api_key as string;
    expect(key).toMatch(/^svc_live_[0-9a-f]{32}$/);
    expect(created.body).toMatchObject({ name: 'zapier', prefix: key.slice(0, 8), revoked_other_keys: 0 });
    expect(created.body.id).toMatch(/^key_/);

    const listed = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key });
    expect(listed.status).toBe(200);
    expect(listed.text).not.toContain(key);
    expect(listed.text).not.toContain(ws.api_key);
    const names = (listed.body.data as { name: string; revoked_at: string | null }[]).map((k) => k.name);
    expect(names).toEqual(['zapier', 'first key']);

    // The new key works and belongs to the same workspace.
    const again = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key });
    expect(again.status).toBe(200);
  });

  it('keys are told apart by their first characters after svc_live_, in the API and on the dashboard; an older key says why it cannot be', async () => {
    const ws = await server().workspace();
    const base = `/api/v1/workspaces/${ws.workspace_id}/api-keys`;
    const make = (name: string) => server().request<{ api_key: string; prefix: string; starts_with: string }>('POST', base, { key: ws.api_key, body: { name } });
    const made = [await make('zapier'), await make('ci')];
    for (const m of made) expect(m.body).toMatchObject({ prefix: 'svc_live', starts_with: m.body.api_key.slice(0, 13) });
    // A key made before the longer start was kept: only `svc_live` is known of it.
    await server().container.db.kysely.updateTable('api_keys').set({ prefix: 'svc_live' }).where('name', '=', 'first key').where('workspace_id', '=', ws.workspace_id).execute();
    const listed = await server().request<{ data: { name: string; prefix: string; starts_with: string | null }[] }>('GET', base, { key: ws.api_key });
    expect(listed.body.data.map((k) => [k.name, k.prefix, k.starts_with]).sort()).toEqual([
      ['ci', 'svc_live', made[1]!.body.api_key.slice(0, 13)],
      ['first key', 'svc_live', null],
      ['zapier', 'svc_live', made[0]!.body.api_key.slice(0, 13)],
    ]);
    // The older key still works.
    expect((await server().request('GET', base, { key: ws.api_key })).status).toBe(200);

    const client = new DashboardClient(server().url);
    await client.signIn(ws.api_key);
    const page = textOf((await client.get('/dashboard/api-keys')).html);
    expect(page).toContain(`ci ${made[1]!.body.api_key.slice(0, 13)}…`);
    expect(page).toContain(`zapier ${made[0]!.body.api_key.slice(0, 13)}…`);
    expect(page).toContain('first key (this session) svc_live… (an older key: its name tells it apart)');
  });

  it('stores only a digest of each key', async () => {
    const ws = await server().workspace();
    const rows = await server().container.db.kysely.selectFrom('api_keys').selectAll().where('workspace_id', '=', ws.workspace_id).execute();
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(ws.api_key);
    expect(JSON.stringify(rows)).not.toContain(ws.api_key.slice(9));
  });

  it('revokes a key: 204, then 401 on the very next request, irreversibly', async () => {
    const ws = await server().workspace();
    const second = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: ws.api_key, body: { name: 'ci' } });
    const secondKey = second.body.api_key as string;

    const revoked = await server().request('DELETE', `/api/v1/workspaces/${ws.workspace_id}/api-keys/${second.body.id as string}`, { key: ws.api_key });
    expect(revoked.status).toBe(204);
    expect(revoked.text).toBe('');

    const refused = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: secondKey });
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe('invalid_api_key');

    // Revoking again is a no-op, and the key stays revoked.
    const repeat = await server().request('DELETE', `/api/v1/workspaces/${ws.workspace_id}/api-keys/${second.body.id as string}`, { key: ws.api_key });
    expect(repeat.status).toBe(204);
    const listed = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: ws.api_key });
    const entry = (listed.body.data as { id: string; revoked_at: string | null }[]).find((k) => k.id === second.body.id);
    expect(entry?.revoked_at).toMatch(/Z$/);
  });

  it('a key can revoke itself, and is refused right after', async () => {
    const ws = await server().workspace();
    const self = await server().request('DELETE', `/api/v1/workspaces/${ws.workspace_id}/api-keys/${ws.key_id}`, { key: ws.api_key });
    expect(self.status).toBe(204);
    const after = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: ws.api_key });
    expect(after.status).toBe(401);
  });

  it('rotates atomically with revoke_others: every other key revoked, the new one active', async () => {
    const ws = await server().workspace();
    const extra = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: ws.api_key, body: { name: 'old' } });
    const rotated = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, {
      key: ws.api_key,
      body: { name: 'rotated', revoke_others: true },
    });
    expect(rotated.status).toBe(201);
    expect(rotated.body.revoked_other_keys).toBe(2);
    const newKey = rotated.body.api_key as string;

    for (const old of [ws.api_key, extra.body.api_key as string]) {
      const res = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: old });
      expect(res.status).toBe(401);
    }
    const listed = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: newKey });
    expect(listed.status).toBe(200);
    const keys = listed.body.data as { name: string; revoked_at: string | null; created_at: string }[];
    const active = keys.filter((k) => k.revoked_at === null).map((k) => k.name);
    expect(active).toEqual(['rotated']);
    // One transaction, one instant: the revocations carry the new key's creation time.
    const rotatedAt = keys.find((k) => k.name === 'rotated')?.created_at;
    for (const k of keys.filter((k) => k.revoked_at !== null)) expect(k.revoked_at).toBe(rotatedAt);
  });

  it('rotation that fails validation revokes nothing', async () => {
    const ws = await server().workspace();
    const bad = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, {
      key: ws.api_key,
      body: { name: '', revoke_others: true },
    });
    expect(bad.status).toBe(400);
    const still = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: ws.api_key });
    expect(still.status).toBe(200);
  });

  it('answers 404 not_found for a key of another workspace named on one\'s own path', async () => {
    const mine = await server().workspace('mine');
    const theirs = await server().workspace('theirs');
    const res = await server().request('DELETE', `/api/v1/workspaces/${mine.workspace_id}/api-keys/${theirs.key_id}`, { key: mine.api_key });
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('not_found');
    const theirsStill = await server().request('GET', `/api/v1/workspaces/${theirs.workspace_id}/api-keys`, { key: theirs.api_key });
    expect(theirsStill.status).toBe(200);
  });

  it('records last use to the minute', async () => {
    const ws = await server().workspace();
    await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: ws.api_key });
    const listed = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: ws.api_key });
    const entry = (listed.body.data as { id: string; last_used_at: string | null }[]).find((k) => k.id === ws.key_id);
    expect(entry?.last_used_at).toMatch(/^\d{4}-\d\d-\d\dT/);
  });
});

describe('API key format', () => {
  it('is svc_live_ followed by 32 lowercase hex characters, with a different value each time', async () => {
    const { newApiKey } = await import('../../src/core/ids.js');
    const keys = new Set(Array.from({ length: 200 }, () => newApiKey()));
    expect(keys.size).toBe(200);
    for (const k of keys) expect(k).toMatch(/^svc_live_[0-9a-f]{32}$/);
  });
});
