import { describe, expect, it } from 'vitest';
import { testDatabaseKinds } from '../support/databases.js';
import { startServiceProcess } from '../support/process.js';
import { describeEachDb, TEST_SECRET_KEY } from '../support/server.js';

/** Sends `count` authenticated GETs, `parallel` at a time, and returns the statuses in completion order. */
async function burst(url: string, key: string, count: number, parallel = 16): Promise<Response[]> {
  const responses: Response[] = [];
  let sent = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (sent < count) {
        sent += 1;
        const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
        await res.arrayBuffer();
        responses.push(res);
      }
    }),
  );
  return responses;
}

describeEachDb('rate limit', (server) => {
  it('sends the three headers on authenticated responses', async () => {
    const ws = await server().workspace();
    const res = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: ws.api_key });
    expect(res.headers.get('x-ratelimit-limit')).toBe('600');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('599');
    const reset = Date.parse(res.headers.get('x-ratelimit-reset') ?? '');
    expect(res.headers.get('x-ratelimit-reset')).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(reset - Date.now()).toBeGreaterThan(50_000);
    expect(reset - Date.now()).toBeLessThanOrEqual(60_000);
  });

  it('answers the 601st request of a minute with 429 rate_limited and Retry-After, across all keys of the workspace', async () => {
    const ws = await server().workspace();
    const other = await server().workspace('bystander');
    const second = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: ws.api_key, body: { name: 'second' } });
    const path = `${server().url}/api/v1/workspaces/${ws.workspace_id}/api-keys`;
    // 1 request above + 299 with the first key + 300 with the second = 600.
    const first = await burst(path, ws.api_key, 299);
    const secondBurst = await burst(path, second.body.api_key as string, 300);
    expect([...first, ...secondBurst].every((r) => r.status === 200)).toBe(true);

    const over = await server().request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key: ws.api_key });
    expect(over.status).toBe(429);
    expect(Object.keys(over.body).sort()).toEqual(['error', 'message', 'request_id']);
    expect(over.body).toMatchObject({ error: 'rate_limited', request_id: over.headers.get('x-request-id') });
    const retryAfter = Number(over.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(over.headers.get('x-ratelimit-remaining')).toBe('0');

    // Another workspace has its own budget.
    const bystander = await server().request('GET', `/api/v1/workspaces/${other.workspace_id}/api-keys`, { key: other.api_key });
    expect(bystander.status).toBe(200);
  });
});

describe('rate limit shared by two server processes', () => {
  for (const kind of testDatabaseKinds()) {
    it(`two processes on one ${kind.name} database share one budget`, async () => {
      const db = await kind.create();
      const env = { DATABASE_URL: db.url, SECRET_KEY: TEST_SECRET_KEY };
      const a = await startServiceProcess(env);
      const b = await startServiceProcess(env);
      try {
        const ws = /(ws_[0-9a-z]{20})/.exec(a.stdout() + b.stdout())?.[1];
        const key = /(svc_live_[0-9a-f]{32})/.exec(a.stdout() + b.stdout())?.[1];
        expect(ws && key).toBeTruthy();
        const path = `/api/v1/workspaces/${ws}/api-keys`;
        const [fromA, fromB] = await Promise.all([burst(a.url + path, key!, 300, 8), burst(b.url + path, key!, 300, 8)]);
        expect([...fromA, ...fromB].filter((r) => r.status !== 200)).toHaveLength(0);
        const overA = await fetch(a.url + path, { headers: { authorization: `Bearer ${key}` } });
        const overB = await fetch(b.url + path, { headers: { authorization: `Bearer ${key}` } });
        expect([overA.status, overB.status]).toEqual([429, 429]);
      } finally {
        await Promise.all([a.stop(), b.stop()]);
        await db.drop();
      }
    }, 90_000);
  }
});

describe('rate limit across a process that counted in memory and one started beside it', () => {
  for (const kind of testDatabaseKinds()) {
    it(`the second process counts on from the first's count (${kind.name})`, async () => {
      const db = await kind.create();
      const env = { DATABASE_URL: db.url, SECRET_KEY: TEST_SECRET_KEY };
      const a = await startServiceProcess(env);
      let b: Awaited<ReturnType<typeof startServiceProcess>> | undefined;
      try {
        const ws = /(ws_[0-9a-z]{20})/.exec(a.stdout())?.[1];
        const key = /(svc_live_[0-9a-f]{32})/.exec(a.stdout())?.[1];
        expect(ws && key).toBeTruthy();
        const path = `/api/v1/workspaces/${ws}/api-keys`;
        // Alone on a SQLite file, the first process counts these in memory.
        expect((await burst(a.url + path, key!, 400, 8)).filter((r) => r.status !== 200)).toHaveLength(0);
        b = await startServiceProcess(env);
        const fromB = await burst(b.url + path, key!, 300, 8);
        expect(fromB.filter((r) => r.status === 200)).toHaveLength(200);
        expect(fromB.filter((r) => r.status === 429)).toHaveLength(100);
        const overA = await fetch(a.url + path, { headers: { authorization: `Bearer ${key}` } });
        expect(overA.status).toBe(429);
      } finally {
        await Promise.all([a.stop(), b?.stop()]);
        await db.drop();
      }
    }, 90_000);
  }
});
