import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Kysely, type Migration, Migrator, sql } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { connect, type Db } from '../../db/connect.js';
import { migrateToLatest } from '../../db/migrate.js';
import { migrations } from '../../db/migrations/index.js';

// Migration 0016 rebuilds SQLite's deliveries table clustered by endpoint: an upgrade must keep every delivery
// and every attempt (dropping the old table with foreign keys on would have cascaded to the attempts).

let dir: string;
let db: Db;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'deliveries-by-endpoint-'));
  db = connect({ dialect: 'sqlite', file: join(dir, 'db.sqlite') });
});
afterEach(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

const raw = (k: Kysely<unknown>) => ({
  rows: async <T>(query: ReturnType<typeof sql<T>>) => (await query.execute(k)).rows,
});

async function migrateUpTo(k: Kysely<unknown>, name: string): Promise<void> {
  const migrator = new Migrator({
    db: k,
    provider: { getMigrations: async () => Object.fromEntries(migrations.map((m): [string, Migration] => [m.name, { up: (tx) => m.up(tx, 'sqlite') }])) },
  });
  const result = await migrator.migrateTo(name);
  if (result.error) throw result.error;
}

it('an upgrade keeps every delivery and attempt, the table clustered by endpoint, its foreign keys enforced', async () => {
  const k = db.kysely as unknown as Kysely<unknown>;
  await migrateUpTo(k, '0015_token_refresh_lease');
  await sql`insert into workspaces (id, name, created_at) values ('ws_1', 'one', 1)`.execute(k);
  for (const hook of ['wh_a', 'wh_b']) {
    await sql`insert into webhooks (id, workspace_id, url, description, enabled_events, active, secret_sealed, created_at, updated_at)
      values (${hook}, 'ws_1', 'https://example.com/hook', '', '[]', 1, 'sealed', 1, 1)`.execute(k);
  }
  // Interleaved as an event's fan-out writes them: one to each endpoint, event after event.
  for (let i = 0; i < 50; i++) {
    for (const hook of ['wh_a', 'wh_b']) {
      await sql`insert into deliveries (id, workspace_id, webhook_id, event_id, event_type, body, status, attempt_count, manual, next_attempt_at, created_at, updated_at, redeliver_requested)
        values (${`del_${hook}_${i}`}, 'ws_1', ${hook}, ${`evt_${i}`}, 'content.published', ${`{"n":${i}}`}, 'pending', 1, 0, ${i}, ${i}, ${i}, ${i % 2})`.execute(k);
      await sql`insert into delivery_attempts (id, delivery_id, number, manual, at, http_status, latency_ms)
        values (${`att_${hook}_${i}`}, ${`del_${hook}_${i}`}, 1, 0, ${i}, 500, 3)`.execute(k);
    }
  }
  const before = await raw(k).rows(sql`select * from deliveries order by id`);

  await migrateToLatest(k, 'sqlite');

  expect(await raw(k).rows(sql`select * from deliveries order by id`)).toEqual(before);
  expect(await raw(k).rows(sql`select count(*) as n from delivery_attempts`)).toEqual([{ n: 100 }]);
  const [table] = await raw(k).rows<{ sql: string }>(sql`select sql from sqlite_master where type = 'table' and name = 'deliveries'`);
  expect(table?.sql).toMatch(/primary key \("webhook_id", "id"\)\s*\) without rowid$/);
  const indexes = await raw(k).rows<{ name: string }>(sql`select name from sqlite_master where type = 'index' and tbl_name = 'deliveries' order by name`);
  expect(indexes.map((i) => i.name)).toEqual(['deliveries_due_idx', 'deliveries_endpoint_due_idx', 'deliveries_id_idx', 'deliveries_webhook_idx']);
  // The table itself (no index holds the body) reads the deliveries endpoint by endpoint.
  const scanned = await raw(k).rows<{ webhook_id: string }>(sql`select webhook_id, body from deliveries`);
  expect(scanned.map((r) => r.webhook_id)).toEqual([...Array(50).fill('wh_a'), ...Array(50).fill('wh_b')]);

  // Foreign keys are on again, and the attempts still hang off the rebuilt table.
  expect(await raw(k).rows(sql`pragma foreign_keys`)).toEqual([{ foreign_keys: 1 }]);
  await expect(sql`insert into delivery_attempts (id, delivery_id, number, manual, at, latency_ms) values ('att_x', 'del_missing', 1, 0, 1, 1)`.execute(k)).rejects.toThrow(/FOREIGN KEY/);
  await expect(sql`insert into deliveries (id, workspace_id, webhook_id, event_id, event_type, body, status, created_at, updated_at)
    values ('del_wh_a_0', 'ws_1', 'wh_b', 'evt_x', 'content.published', '{}', 'pending', 1, 1)`.execute(k)).rejects.toThrow(/UNIQUE/);
  await sql`delete from deliveries where id = 'del_wh_a_7'`.execute(k);
  expect(await raw(k).rows(sql`select count(*) as n from delivery_attempts where delivery_id = 'del_wh_a_7'`)).toEqual([{ n: 0 }]);
  await sql`delete from webhooks where id = 'wh_b'`.execute(k);
  expect(await raw(k).rows(sql`select count(*) as n from deliveries`)).toEqual([{ n: 49 }]);
  expect(await raw(k).rows(sql`select count(*) as n from delivery_attempts`)).toEqual([{ n: 49 }]);
});

it('run again over a table already rebuilt (a crash before its bookkeeping), it changes nothing', async () => {
  const k = db.kysely as unknown as Kysely<unknown>;
  await migrateToLatest(k, 'sqlite');
  const schema = async () => raw(k).rows(sql`select name, sql from sqlite_master where tbl_name = 'deliveries' order by name`);
  const before = await schema();
  const rebuild = migrations.find((m) => m.name === '0016_deliveries_by_endpoint')!;
  await rebuild.up(k, 'sqlite');
  expect(await schema()).toEqual(before);
  expect(await raw(k).rows(sql`pragma foreign_keys`)).toEqual([{ foreign_keys: 1 }]);
});
