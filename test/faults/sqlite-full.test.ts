import { Writable } from 'node:stream';
import { afterAll, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.js';
import { testDatabaseKinds } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { overrides } from '../support/overrides.js';

let server: TestServer | undefined;
afterAll(async () => {
  await server?.stop();
});

it('SQLite disk full: each failed write answers 500 and logs SQLite\'s own error, /readyz is not ready until writes work again', async () => {
  const lines: string[] = [];
  const logger = createLogger('info', new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }));
  server = await startTestServer(testDatabaseKinds().find((k) => k.name === 'sqlite')!, overrides({ SQLITE_WRITE_FAILURE_HOLD: '1500ms' }), { logger, workers: false });
  const db = server.container.db;
  if (db.dialect !== 'sqlite') throw new Error('expected SQLite');
  const ws = await server.workspace();
  const base = `/api/v1/workspaces/${ws.workspace_id}`;
  const brand = await server.request('POST', `${base}/brands`, { key: ws.api_key, body: { name: 'full disk' } });
  for (const p of ['facebook', 'threads']) {
    await server.request('POST', `${base}/brands/${brand.body.id as string}/connections`, { key: ws.api_key, body: { platform_slug: p, mode: 'sandbox', name: p } });
  }
  const content = (i: number) => ({ brand_id: brand.body.id, target_platforms: ['facebook', 'threads'], content_type: 'text', text: `note ${i} ${'x'.repeat(400)}` });
  const create = (i: number) => server!.request('POST', `${base}/contents`, { key: ws.api_key, body: content(i), headers: { 'idempotency-key': `full-${i}` } });

  // The file may not grow past its present size (the service's own connection: the limit is per connection),
  // which SQLite reports as it reports a full disk: SQLITE_FULL.
  const pages = db.sqlite.prepare('PRAGMA page_count').get() as { page_count: number };
  db.sqlite.prepare(`PRAGMA max_page_count = ${pages.page_count}`).get();
  expect((await server.request('GET', '/readyz')).status).toBe(200);

  // Alone, then several at once (each its own transaction).
  const failed = [];
  for (let i = 0; i < 40 && failed.length === 0; i += 1) {
    const res = await create(i);
    if (res.status !== 201) failed.push({ i, res });
  }
  const together = await Promise.all(Array.from({ length: 8 }, (_, k) => create(100 + k)));
  failed.push(...together.map((res, k) => ({ i: 100 + k, res })).filter((f) => f.res.status !== 201));
  expect(failed.length).toBeGreaterThan(1);
  for (const f of failed) expect(f.res.status).toBe(500);
  for (const f of failed) expect(f.res.body).toMatchObject({ error: 'server_error', request_id: expect.any(String) });

  // Every failure is logged as SQLite's own error, never as the rollback that followed it.
  const errors = lines.filter((l) => l.includes('"level":50') || l.includes('"level":"error"'));
  expect(errors.length).toBeGreaterThanOrEqual(failed.length);
  expect(errors.join('\n')).toContain('database or disk is full');
  expect(errors.join('\n')).not.toMatch(/cannot rollback|no such savepoint/);

  const ready = await server.request('GET', '/readyz');
  expect(ready.status).toBe(500);
  expect(ready.body).toMatchObject({ error: 'server_error', message: expect.stringContaining('SQLITE_FULL') });

  // Room again: the same requests, retried with their keys, succeed; readiness returns once no write has
  // failed for the hold.
  db.sqlite.prepare('PRAGMA max_page_count = 1073741823').get();
  for (const f of failed) expect((await create(f.i)).status).toBe(201);
  await new Promise((r) => setTimeout(r, 1_600));
  expect((await server.request('GET', '/readyz')).status).toBe(200);
}, 60_000);
