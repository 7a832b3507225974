import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Db } from '../../db/connect.js';
import { testDatabaseKinds } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/server.js';

const sqliteKind = testDatabaseKinds().find((k) => k.name === 'sqlite')!;

/**
 * On SQLite a process remembers the API keys it has looked up (db/repositories/api-keys.repo.ts, `apiKeyFinder`),
 * and must still refuse a revoked key on the very next request. Two processes on one file are proved by
 * test/rest/revocation-across-processes.test.ts; here a second connection to the file stands for the other process,
 * so each case can be set up exactly.
 */
describe('API keys remembered on SQLite', () => {
  let server: TestServer;
  let other: Db;
  let lookups = 0;

  beforeAll(async () => {
    server = await startTestServer(sqliteKind);
    const { db } = server.container;
    if (db.dialect !== 'sqlite') throw new Error('sqlite expected');
    const prepare = db.sqlite.prepare.bind(db.sqlite);
    db.sqlite.prepare = (sql) => {
      if (sql.includes('from "api_keys" where "key_digest"')) lookups++;
      return prepare(sql);
    };
    other = connect({ dialect: 'sqlite', file: server.database.url.slice('sqlite:'.length) });
  });
  afterAll(async () => {
    await other.close();
    await server.stop();
  });

  const lookupsDuring = async (run: () => Promise<unknown>) => {
    const before = lookups;
    await run();
    return lookups - before;
  };

  it('answers a key from memory while nothing could have ended it', async () => {
    const ws = await server.workspace();
    const path = `/api/v1/workspaces/${ws.workspace_id}/api-keys`;
    expect(await lookupsDuring(() => server.request('GET', path, { key: ws.api_key }))).toBe(1);
    expect(await lookupsDuring(() => Promise.all(Array.from({ length: 10 }, () => server.request('GET', path, { key: ws.api_key }))))).toBe(0);
    // Unknown keys are never remembered: each is looked up, and refused.
    const unknown = `svc_live_${'7'.repeat(32)}`;
    expect(await lookupsDuring(() => server.request('GET', path, { key: unknown }))).toBe(1);
    expect(await lookupsDuring(() => server.request('GET', path, { key: unknown }))).toBe(1);
  });

  it('refuses a key revoked through this process on the next request, with requests in flight around the revocation', async () => {
    const ws = await server.workspace();
    const path = `/api/v1/workspaces/${ws.workspace_id}/api-keys`;
    const doomed = await server.request('POST', path, { key: ws.api_key, body: { name: 'doomed' } });
    const key = doomed.body.api_key as string;
    expect((await server.request('GET', path, { key })).status).toBe(200);

    const around = Array.from({ length: 20 }, () => server.request('GET', path, { key, unchecked: true }));
    const revoked = await server.request('DELETE', `${path}/${doomed.body.id as string}`, { key: ws.api_key });
    expect(revoked.status).toBe(204);
    const after = await Promise.all(Array.from({ length: 20 }, () => server.request('GET', path, { key })));
    expect(after.map((r) => r.status)).toEqual(Array(20).fill(401));
    await Promise.all(around);

    // A rotation (`revoke_others`) ends the rotating key the same way.
    const rotated = await server.request('POST', path, { key: ws.api_key, body: { name: 'next', revoke_others: true } });
    expect(rotated.status).toBe(201);
    expect((await server.request('GET', path, { key: ws.api_key })).status).toBe(401);
    expect((await server.request('GET', path, { key: rotated.body.api_key as string })).status).toBe(200);
  });

  it("looks every key up again after another connection's commit, and refuses one it revoked at once", async () => {
    const ws = await server.workspace();
    const path = `/api/v1/workspaces/${ws.workspace_id}/api-keys`;
    const spare = await server.request('POST', path, { key: ws.api_key, body: { name: 'spare' } });
    expect((await server.request('GET', path, { key: ws.api_key })).status).toBe(200);
    expect(await lookupsDuring(() => server.request('GET', path, { key: ws.api_key }))).toBe(0);

    // Any commit by another connection, even to an unrelated table, makes the next request look its key up again.
    await other.kysely.updateTable('workspaces').set({ name: 'renamed elsewhere' }).where('id', '=', ws.workspace_id).execute();
    expect(await lookupsDuring(() => server.request('GET', path, { key: ws.api_key }))).toBe(1);
    expect(await lookupsDuring(() => server.request('GET', path, { key: ws.api_key }))).toBe(0);

    await other.kysely.updateTable('api_keys').set({ revoked_at: Date.now() }).where('workspace_id', '=', ws.workspace_id).where('id', '!=', spare.body.id as string).execute();
    const next = await server.request('GET', path, { key: ws.api_key });
    expect(next.status).toBe(401);
    expect(next.body.error).toBe('invalid_api_key');
    expect((await server.request('GET', path, { key: spare.body.api_key as string })).status).toBe(200);
  });
});
