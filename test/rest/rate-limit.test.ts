import { describe, expect, it } from 'vitest';
import { testDatabaseKinds } from '../support/databases.js';
import { runToEnd, startServiceProcess } from '../support/process.js';
import { testRedisUrl } from '../support/redis.js';
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

/**
 * Several serving processes share one budget where they share a store: PostgreSQL, or Redis when REDIS_URL is set
 * (here beside PostgreSQL, the database several processes need). Each process's share of the requests races the
 * other's; exactly the limit is allowed in all.
 */
describe('rate limit shared by two server processes', () => {
  const postgres = testDatabaseKinds().find((k) => k.name === 'postgres');
  const redisUrl = testRedisUrl();
  const stores: { name: string; kind: NonNullable<typeof postgres>; env: Record<string, string> }[] = [
    ...(postgres ? [{ name: 'postgres', kind: postgres, env: {} }] : []),
    ...(postgres && redisUrl ? [{ name: 'redis', kind: postgres, env: { REDIS_URL: redisUrl } }] : []),
  ];
  // Without TEST_DATABASE_URL there is no database several processes may share.
  if (stores.length === 0) it.skip('needs TEST_DATABASE_URL', () => undefined);
  for (const store of stores) {
    it(`two processes counting in ${store.name} allow exactly 600 of 700 parallel requests, then refuse on both`, async () => {
      const db = await store.kind.create();
      const env = { DATABASE_URL: db.url, SECRET_KEY: TEST_SECRET_KEY, ...store.env };
      const a = await startServiceProcess(env);
      const b = await startServiceProcess(env);
      try {
        const ws = /(ws_[0-9a-z]{20})/.exec(a.stdout() + b.stdout())?.[1];
        const key = /(svc_live_[0-9a-f]{32})/.exec(a.stdout() + b.stdout())?.[1];
        expect(ws && key).toBeTruthy();
        const path = `/api/v1/workspaces/${ws}/api-keys`;
        const [fromA, fromB] = await Promise.all([burst(a.url + path, key!, 350, 8), burst(b.url + path, key!, 350, 8)]);
        const all = [...fromA, ...fromB];
        expect(all.filter((r) => r.status === 200)).toHaveLength(600);
        expect(all.filter((r) => r.status === 429)).toHaveLength(100);
        // Both processes took part in the race on both sides of the limit's edge.
        expect(fromA.some((r) => r.status === 200) && fromB.some((r) => r.status === 200)).toBe(true);
        const overA = await fetch(a.url + path, { headers: { authorization: `Bearer ${key}` } });
        const overB = await fetch(b.url + path, { headers: { authorization: `Bearer ${key}` } });
        expect([overA.status, overB.status]).toEqual([429, 429]);
        expect([overA.headers.get('x-ratelimit-remaining'), overB.headers.get('x-ratelimit-remaining')]).toEqual(['0', '0']);
      } finally {
        await Promise.all([a.stop(), b.stop()]);
        await db.drop();
      }
    }, 150_000);
  }
});

describe('SQLite: one serving process', () => {
  it('a second serving process on the same file stops at start with one line; a worker and the CLI run beside; a SIGKILLed holder does not block the next start', async () => {
    const sqlite = testDatabaseKinds().find((k) => k.name === 'sqlite')!;
    const db = await sqlite.create();
    const env = { DATABASE_URL: db.url, SECRET_KEY: TEST_SECRET_KEY };
    const file = db.url.replace(/^sqlite:/, '');
    let first: Awaited<ReturnType<typeof startServiceProcess>> | undefined = await startServiceProcess(env);
    let worker: Awaited<ReturnType<typeof startServiceProcess>> | undefined;
    let next: Awaited<ReturnType<typeof startServiceProcess>> | undefined;
    try {
      const refused = await Promise.all(['all', 'api'].map((role) => runToEnd('src/main.ts', [], { PORT: '0', LOG_LEVEL: 'warn', ...env, SERVICE_ROLE: role })));
      for (const second of refused) {
        expect(second.code).toBe(1);
        expect(second.stdout).not.toMatch(/Listening on/);
        const lines = second.stderr.trim().split('\n').filter((l) => !/oidc-provider|Node\.js 22/.test(l));
        expect(lines).toEqual([
          `Another process already serves ${file} (it holds ${file}.serving-lock). SQLite runs one serving process (SERVICE_ROLE=all or api); run a SERVICE_ROLE=worker process or the CLI beside it, or several serving processes on PostgreSQL.`,
        ]);
      }
      const [started, cli] = await Promise.all([
        startServiceProcess({ ...env, SERVICE_ROLE: 'worker' }),
        runToEnd('src/cli.ts', ['workspace', 'create', '--name', 'Beside', '--json'], env),
      ]);
      worker = started;
      expect((await fetch(`${worker.url}/healthz`)).status).toBe(200);
      expect(cli.code).toBe(0);
      // The first process still serves.
      const ws = /(ws_[0-9a-z]{20})/.exec(first.stdout())?.[1];
      const key = /(svc_live_[0-9a-f]{32})/.exec(first.stdout())?.[1];
      expect((await fetch(`${first.url}/api/v1/workspaces/${ws}/api-keys`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);

      expect(await first.stop('SIGKILL')).toBeNull();
      first = undefined;
      next = await startServiceProcess(env);
      expect((await fetch(`${next.url}/api/v1/workspaces/${ws}/api-keys`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    } finally {
      await Promise.all([first?.stop(), worker?.stop(), next?.stop()]);
      await db.drop();
    }
  }, 240_000);
});
