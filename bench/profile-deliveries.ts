/**
 * Pages written per delivery: bench row (d)'s cost beside a silent endpoint, counted instead of timed. One endpoint's
 * deliveries are claimed eight at a time and recorded, as the dispatcher does, through the repository's own
 * statements, with another endpoint's backlog interleaved in the table ("beside") or absent ("alone"). Every
 * commit writes each page it dirtied to the WAL once, so the WAL's frames per delivery are the pages a delivery
 * costs; row (d)'s time goes mostly to the claim's and the record's commits, so pages are its measure. The process's CPU
 * time per delivery over the same loop is printed beside it (the writes to the WAL are the process's own).
 *
 *   npx tsx bench/profile-deliveries.ts            (20,000 deliveries per endpoint)
 *   PROFILE_DELIVERIES=5000 npx tsx bench/profile-deliveries.ts
 *   PROFILE_ATTEMPT_IDS=random npx tsx bench/profile-deliveries.ts   (attempt ids as they were before 8be4f87)
 *
 * Each layout runs on a fresh SQLite file: the schema as migrated up to 0015, and as migration 0016 leaves it (the
 * index of every delivery by status and due time dropped), with delivery ids in creation order as the service makes
 * them.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Kysely, sql } from 'kysely';
import { connect } from '../db/connect.js';
import { migrateUpTo } from '../db/migrate.js';
import { type AttemptRecord, claimDueDeliveries, insertDeliveries, recordAttempts } from '../db/repositories/deliveries.repo.js';
import type { Database } from '../db/schema.js';
import { newId, newTimeOrderedId } from '../src/core/ids.js';

const N = Number(process.env.PROFILE_DELIVERIES ?? 20_000);
const BATCH = 8;
const RANDOM_ATTEMPT_IDS = process.env.PROFILE_ATTEMPT_IDS === 'random';
const PAGE = 4096;
// WAL header, then a 24-byte header before each frame's page.
const frames = (file: string) => Math.max(0, (statSync(`${file}-wal`).size - 32) / (PAGE + 24));

async function run(upTo: string, beside: boolean, n: number): Promise<{ framesPerDelivery: number; usPerDelivery: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'profile-deliveries-'));
  const file = join(dir, 'db.sqlite');
  const db = connect({ dialect: 'sqlite', file });
  try {
    await migrateUpTo(db.kysely as unknown as Kysely<unknown>, 'sqlite', upTo);
    const kdb = db.kysely as Kysely<Database>;
    await sql`insert into workspaces (id, name, created_at) values ('ws_1', 'one', 1)`.execute(kdb);
    for (const hook of ['wh_fast', 'wh_silent']) {
      await sql`insert into webhooks (id, workspace_id, url, description, enabled_events, active, secret_sealed, created_at, updated_at)
        values (${hook}, 'ws_1', 'https://example.com/hook', '', '[]', 1, 'sealed', 1, 1)`.execute(kdb);
    }
    const start = Date.UTC(2026, 10, 24);
    const body = JSON.stringify({ id: 'evt_x', type: 'content.published', data: { content_id: 'cnt_x', status: 'published' } });
    // An event's fan-out: one delivery to each endpoint, event after event, as the service writes them.
    for (let i = 0; i < n; i += 500) {
      const rows = [];
      for (let j = i; j < Math.min(n, i + 500); j++) {
        const now = start + j;
        for (const hook of beside ? ['wh_fast', 'wh_silent'] : ['wh_fast']) {
          rows.push({ id: newTimeOrderedId('del_', now), workspaceId: 'ws_1', webhookId: hook, eventId: `evt_${j}`, eventType: 'content.published', body, now });
        }
      }
      await insertDeliveries(kdb, rows);
    }
    await sql`pragma wal_checkpoint(truncate)`.execute(kdb);
    await sql`pragma wal_autocheckpoint = 0`.execute(kdb);
    const before = frames(file);
    const now = start + n;
    let done = 0;
    const t0 = process.cpuUsage();
    for (;;) {
      const lease = newId('lease_');
      const claimed = await claimDueDeliveries(kdb, 'sqlite', { now, lease, lockedUntil: now + 60_000, endpoints: [{ webhookId: 'wh_fast', limit: BATCH }] });
      if (claimed.length === 0) break;
      const records: AttemptRecord[] = claimed.map((d) => ({
        id: d.id,
        lease,
        // Attempts are made one after another; PROFILE_ATTEMPT_IDS=random gives them the random ids they had before.
        attemptId: RANDOM_ATTEMPT_IDS ? newId('att_') : newTimeOrderedId('att_', now + done),
        attempt: { deliveryId: d.id, number: 1, manual: false, at: now, httpStatus: 204, latencyMs: 1, error: null, responseExcerpt: null },
        status: 'delivered',
        nextAttemptAt: null,
        deliveredAt: now,
      }));
      await recordAttempts(kdb, records);
      done += claimed.length;
    }
    if (done !== n) throw new Error(`delivered ${done} of ${n}`);
    const cpu = process.cpuUsage(t0);
    return { framesPerDelivery: (frames(file) - before) / n, usPerDelivery: (cpu.user + cpu.system) / n };
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const layouts = [
  { name: 'with the (status, next_attempt_at) index (0015)', upTo: '0015_token_refresh_lease' },
  { name: 'without it (0016)', upTo: '0016_delivery_due_index_dropped' },
];
console.log(`${N} deliveries of one endpoint, claimed ${BATCH} at a time and recorded; WAL pages written per delivery`);
console.log('| layout | pages alone | pages beside a backlog of as many | beside ÷ alone | CPU µs alone | CPU µs beside | beside ÷ alone |');
console.log('|---|---:|---:|---:|---:|---:|---:|');
// A short run of each first, so that neither measured run pays for compiling the code and the statements.
for (const layout of layouts) for (const beside of [false, true]) await run(layout.upTo, beside, 2_000);
for (const layout of layouts) {
  const alone = await run(layout.upTo, false, N);
  const beside = await run(layout.upTo, true, N);
  const ratio = (a: number, b: number) => (b / a).toFixed(2);
  console.log(
    `| ${layout.name} | ${alone.framesPerDelivery.toFixed(2)} | ${beside.framesPerDelivery.toFixed(2)} | ${ratio(alone.framesPerDelivery, beside.framesPerDelivery)} | ` +
      `${alone.usPerDelivery.toFixed(0)} | ${beside.usPerDelivery.toFixed(0)} | ${ratio(alone.usPerDelivery, beside.usPerDelivery)} |`,
  );
}
