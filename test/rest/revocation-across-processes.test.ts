import { describe, expect, it } from 'vitest';
import { testDatabaseKinds } from '../support/databases.js';
import { startServiceProcess } from '../support/process.js';
import { TEST_SECRET_KEY } from '../support/server.js';

/**
 * API keys are looked up on every request (no cache: a lookup by its hash is one indexed read), so a key revoked
 * through one process is refused by another on the very next request. This guards that promise against a cache added later. Two serving processes share a database on PostgreSQL only
 * (SQLite has one serving process; test/rest/rate-limit.test.ts checks that a second one is refused).
 */
describe('API key revocation across two server processes', () => {
  const kinds = testDatabaseKinds().filter((k) => k.name === 'postgres');
  if (kinds.length === 0) it.skip('needs TEST_DATABASE_URL', () => undefined);
  for (const kind of kinds) {
    it(`a key revoked through one process is refused by the other on the next request (${kind.name})`, async () => {
      const db = await kind.create();
      const env = { DATABASE_URL: db.url, SECRET_KEY: TEST_SECRET_KEY };
      const a = await startServiceProcess(env);
      const b = await startServiceProcess(env);
      try {
        const ws = /(ws_[0-9a-z]{20})/.exec(a.stdout() + b.stdout())?.[1];
        const admin = /(svc_live_[0-9a-f]{32})/.exec(a.stdout() + b.stdout())?.[1];
        expect(ws && admin).toBeTruthy();
        const keys = `/api/v1/workspaces/${ws}/api-keys`;
        const call = (base: string, key: string, method = 'GET', body?: unknown) =>
          fetch(`${base}${keys}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });

        const created = (await (await call(a.url, admin!, 'POST', { name: 'doomed' })).json()) as { id: string; api_key: string };
        // Both processes have served the key (any cache would now hold it), many times and in parallel.
        const warm = await Promise.all(Array.from({ length: 20 }, (_, i) => call(i % 2 === 0 ? a.url : b.url, created.api_key)));
        expect(warm.map((r) => r.status)).toEqual(Array(20).fill(200));

        const revoked = await fetch(`${a.url}${keys}/${created.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${admin}` } });
        expect(revoked.status).toBe(204);
        const next = await call(b.url, created.api_key);
        expect(next.status).toBe(401);
        expect(((await next.json()) as { error: string }).error).toBe('invalid_api_key');
        expect((await call(a.url, created.api_key)).status).toBe(401);
        // The other key still works on both.
        expect([(await call(a.url, admin!)).status, (await call(b.url, admin!)).status]).toEqual([200, 200]);
      } finally {
        await Promise.all([a.stop(), b.stop()]);
        await db.drop();
      }
    }, 90_000);
  }
});
