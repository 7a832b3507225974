import { expect, it } from 'vitest';
import { findApiKeyByDigestCounting } from '../../db/repositories/api-keys.repo.js';
import { sha256Hex } from '../../src/core/ids.js';
import { statementsDuring } from '../support/pg-statements.js';
import { describeEachDb } from '../support/server.js';

describeEachDb('an API key request counted on its workspace budget', (server, kind) => {
  /** The workspace's count: in the table on PostgreSQL; on SQLite in memory, this process being alone on its file. */
  const points = async (workspaceId: string): Promise<number> => {
    const key = `ws:${workspaceId}`;
    const row = await server().container.db.kysely.selectFrom('rate_limits').select('points').where('key', '=', key).executeTakeFirst();
    if (kind.name === 'postgres') return row === undefined ? 0 : Number(row.points);
    expect(row).toBeUndefined();
    return [...server().container.rateCounting.windows.running(Date.now())].find(([k]) => k === key)?.[1].points ?? 0;
  };

  it('counts each request once, and nothing for a revoked or unknown key', async () => {
    const ws = await server().workspace();
    const path = `/api/v1/workspaces/${ws.workspace_id}/api-keys`;
    for (let i = 0; i < 3; i++) expect((await server().request('GET', path, { key: ws.api_key })).status).toBe(200);
    expect(await points(ws.workspace_id)).toBe(3);

    const second = await server().request('POST', path, { key: ws.api_key, body: { name: 'to revoke' } });
    await server().request('DELETE', `${path}/${second.body.id as string}`, { key: ws.api_key });
    expect(await points(ws.workspace_id)).toBe(5);
    expect((await server().request('GET', path, { key: second.body.api_key as string })).status).toBe(401);
    expect((await server().request('GET', path, { key: `svc_live_${'0'.repeat(32)}` })).status).toBe(401);
    expect(await points(ws.workspace_id)).toBe(5);
    // The headers describe the window the lookup counted into.
    const next = await server().request('GET', path, { key: ws.api_key });
    expect(next.headers.get('x-ratelimit-remaining')).toBe(String(600 - 6));
  });

  it.runIf(kind.name === 'postgres')('finds the key and counts its request in one statement', async () => {
    const ws = await server().workspace();
    const path = `/api/v1/workspaces/${ws.workspace_id}/api-keys`;
    // The key's last use is written once a minute: the first request writes it, the measured one does not.
    await server().request('GET', path, { key: ws.api_key });
    const sent = await statementsDuring(() => server().request('GET', path, { key: ws.api_key, unchecked: true }));
    const touching = (table: string) => sent.filter((text) => text.includes(table));
    expect(touching('api_keys')).toHaveLength(2); // the lookup, and the listing the route answers with
    expect(touching('rate_limits')).toHaveLength(1);
    expect(touching('rate_limits')[0]).toMatch(/^WITH key AS/);
    expect(sent).toHaveLength(2);
  });

  it.runIf(kind.name === 'postgres')('counts parallel lookups exactly: every request one point, each window count once', async () => {
    const ws = await server().workspace();
    const digest = sha256Hex(ws.api_key);
    const hit = () => ({ keyPrefix: 'parallel:', points: 1, windowMs: 60_000, now: Date.now() });
    const found = await Promise.all(Array.from({ length: 120 }, () => findApiKeyByDigestCounting(server().container.db.kysely, digest, hit())));
    const counts = found.map((f) => f?.window?.points);
    expect(new Set(counts).size).toBe(120);
    expect(Math.max(...counts.map(Number))).toBe(120);
    expect(found.every((f) => f?.row.workspaceId === ws.workspace_id)).toBe(true);
    expect(await findApiKeyByDigestCounting(server().container.db.kysely, sha256Hex('svc_live_unknown'), hit())).toBeUndefined();
  });
});
