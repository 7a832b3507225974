import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { testDatabaseKinds } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { overrides } from '../support/overrides.js';

const postgres = testDatabaseKinds().find((k) => k.name === 'postgres');

describe.skipIf(postgres === undefined)('PostgreSQL: a lock held on a busy table (skipped without TEST_DATABASE_URL)', () => {
  let server: TestServer | undefined;
  let holder: pg.Client | undefined;
  afterAll(async () => {
    await holder?.end().catch(() => undefined);
    await server?.stop();
  });

  it('requests and /readyz answer within the configured bounds while another transaction holds jobs exclusively', async () => {
    server = await startTestServer(postgres!, { DATABASE_LOCK_TIMEOUT: '1s', DATABASE_CONNECT_TIMEOUT: '1s', ...overrides({ READY_TIMEOUT: '1s' }) });
    const ws = await server.workspace();
    const base = `/api/v1/workspaces/${ws.workspace_id}`;
    const brand = await server.request('POST', `${base}/brands`, { key: ws.api_key, body: { name: 'locked' } });
    await server.request('POST', `${base}/brands/${brand.body.id as string}/connections`, { key: ws.api_key, body: { platform_slug: 'facebook', mode: 'sandbox', name: 'fb' } });
    const body = { brand_id: brand.body.id, target_platforms: ['facebook'], content_type: 'text', text: 'behind a lock' };
    const first = await server.request('POST', `${base}/contents`, { key: ws.api_key, body });
    expect(first.status).toBe(201);

    holder = new pg.Client({ connectionString: server.database.url });
    holder.on('error', () => undefined);
    await holder.connect();
    await holder.query('begin');
    await holder.query('lock table jobs in access exclusive mode');

    const timed = async <T>(run: () => Promise<T>) => {
      const started = Date.now();
      const value = await run();
      return { value, ms: Date.now() - started };
    };
    // Without bounds each of these waited for the lock's holder, however long it held it.
    const [created, read, ready] = await Promise.all([
      timed(() => server!.request('POST', `${base}/contents`, { key: ws.api_key, body, headers: { 'idempotency-key': 'behind-lock' } })),
      timed(() => server!.request('GET', `${base}/contents/${first.body.id as string}`, { key: ws.api_key })),
      timed(() => server!.request('GET', '/readyz')),
    ]);
    // A lock wait (1 s), perhaps after a pooled connection's wait (1 s), and the machine's own slowness.
    for (const answer of [created, read]) {
      expect(answer.value.status).toBe(500);
      expect(answer.value.body).toMatchObject({ error: 'server_error', request_id: expect.any(String) });
      expect(answer.ms).toBeLessThan(5_000);
    }
    // `select 1` needs no lock on jobs; its answer is bounded by its own deadline either way.
    expect([200, 500]).toContain(ready.value.status);
    expect(ready.ms).toBeLessThan(2_500);

    await holder.query('rollback');
    const retried = await server.request('POST', `${base}/contents`, { key: ws.api_key, body, headers: { 'idempotency-key': 'behind-lock' } });
    expect(retried.status).toBe(201);
  }, 60_000);
});
