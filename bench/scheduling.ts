import { randomBytes, randomUUID } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { api, benchEnv, load, peakRssMb, percentile, PLATFORMS, start, type Started, stop } from './lib.js';
import { overrides } from '../test/support/overrides.js';

/**
 * Scheduling rows of `npm run bench` (README, Scheduling).
 *
 * Top-of-the-hour burst: N contents × 3 sandbox networks all due at one instant, started by the real scheduler
 * and handed over by the real publisher in service processes (one on SQLite, three on PostgreSQL). "Handed to
 * its network" is the sandbox adapter's submit (its container's created_at); lateness = that minus publish_at.
 * None early = no container made before publish_at; none twice = one container and one post per job.
 *
 * Seeding: making 10,000–30,000 contents through HTTP takes minutes and would measure creation, not scheduling,
 * so each brand gets one content made through the API (checked like any other) and the bench process copies its
 * rows (content and jobs) directly in the database, with fresh ids, up to N; then every copy is set due at one
 * instant ~25 s ahead on the real clock, and only then do the worker processes start. The calendar feed's
 * 1,000,000 scheduled contents are seeded the same way (contents only: the feed reads no job for them).
 */

/** Brands the burst is spread over (three sandbox connections each), so per-connection queues are not the limit. */
const BRANDS = 100;
/** The workers as the row runs them: no artificial sandbox pause (as row (c)), wide enough pools. */
const WORKER_ENV = { ...overrides({ SANDBOX_DELAY: '0ms', WORKER_POLL: '50ms' }), WORKER_CONCURRENCY: '32', WORKER_PER_CONNECTION: '32' };
const LEAD_MS = 25_000;

export interface BenchRow {
  name: string;
  figure: string;
  target: string;
  met: boolean | null;
}

/** The few statements the seeding and the measurement need, on either database. */
interface Sql {
  all(query: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  run(query: string, params?: unknown[]): Promise<void>;
  insert(table: string, rows: Record<string, unknown>[]): Promise<void>;
  close(): Promise<void>;
}

function sqliteSql(url: string): Sql {
  const db = new BetterSqlite3(url.replace(/^sqlite:/, ''));
  db.pragma('busy_timeout = 5000');
  return {
    all: async (q, p = []) => db.prepare(q).all(...p) as Record<string, unknown>[],
    run: async (q, p = []) => void db.prepare(q).run(...p),
    insert: async (table, rows) => {
      if (rows.length === 0) return;
      const cols = Object.keys(rows[0]!);
      const stmt = db.prepare(`insert into ${table} (${cols.join(', ')}) values (${cols.map(() => '?').join(', ')})`);
      db.transaction(() => {
        for (const r of rows) stmt.run(...cols.map((c) => r[c]));
      })();
    },
    close: async () => void db.close(),
  };
}

async function postgresSql(url: string): Promise<Sql> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const numbered = (q: string) => {
    let n = 0;
    return q.replace(/\?/g, () => `$${++n}`);
  };
  return {
    all: async (q, p = []) => (await client.query(numbered(q), p)).rows as Record<string, unknown>[],
    run: async (q, p = []) => void (await client.query(numbered(q), p)),
    insert: async (table, rows) => {
      if (rows.length === 0) return;
      const cols = Object.keys(rows[0]!);
      // Batches under PostgreSQL's 65,535 parameters.
      const per = Math.floor(60_000 / cols.length);
      for (let i = 0; i < rows.length; i += per) {
        const batch = rows.slice(i, i + per);
        const values = batch.map((_, r) => `(${cols.map((_, c) => `$${r * cols.length + c + 1}`).join(', ')})`).join(', ');
        await client.query(`insert into ${table} (${cols.join(', ')}) values ${values}`, batch.flatMap((r) => cols.map((c) => r[c])));
      }
    },
    close: () => client.end(),
  };
}

/** A service with one workspace and BRANDS brands of three sandbox connections; returns what the seeding needs. */
async function prepare(databaseUrl: string, brands: number) {
  const s = await start('src/main.ts', benchEnv(databaseUrl, { SERVICE_ROLE: 'api' }));
  const ws = /(ws_[0-9a-z]{20})/.exec(s.stdout)![1]!;
  const key = /(svc_live_[0-9a-f]{32})/.exec(s.stdout)![1]!;
  const brandIds: string[] = [];
  for (let b = 0; b < brands; b++) {
    const brand = await api<{ id: string }>(s.url, key, 'POST', `/api/v1/workspaces/${ws}/brands`, { name: `bench ${b}` });
    for (const p of PLATFORMS) await api(s.url, key, 'POST', `/api/v1/workspaces/${ws}/brands/${brand.id}/connections`, { platform_slug: p, mode: 'sandbox', name: p });
    brandIds.push(brand.id);
  }
  return { s, ws, key, brandIds };
}

/** Copies each template content (and its jobs) until there are `total` contents, fresh ids, same brand. */
async function cloneContents(sql: Sql, templateIds: string[], total: number, withJobs: boolean, shape?: (row: Record<string, unknown>, i: number) => void): Promise<void> {
  const templates = await sql.all(`select * from contents where id in (${templateIds.map(() => '?').join(', ')})`, templateIds);
  const jobs = withJobs ? await sql.all(`select * from jobs where content_id in (${templateIds.map(() => '?').join(', ')})`, templateIds) : [];
  const jobsOf = new Map<unknown, Record<string, unknown>[]>();
  for (const j of jobs) jobsOf.set(j.content_id, [...(jobsOf.get(j.content_id) ?? []), j]);
  const chunk = 5000;
  for (let from = templates.length; from < total; from += chunk) {
    const contents: Record<string, unknown>[] = [];
    const jobRows: Record<string, unknown>[] = [];
    for (let i = from; i < Math.min(total, from + chunk); i++) {
      const t = templates[i % templates.length]!;
      const id = randomUUID();
      const row = { ...t, id };
      shape?.(row, i);
      contents.push(row);
      for (const j of jobsOf.get(t.id) ?? []) jobRows.push({ ...j, id: `job_${randomBytes(12).toString('hex')}`, content_id: id });
    }
    await sql.insert('contents', contents);
    await sql.insert('jobs', jobRows);
  }
}

/** p-th percentile in ms, or "> 180000" for a job never handed over within the wait. */
const pct = (values: number[], p: number) => {
  const v = percentile(values, p);
  return Number.isFinite(v) ? String(Math.round(v)) : '> 180000';
};

/**
 * One burst: `contents` × 3 jobs due at one instant, `processes` worker processes. Returns the row and the
 * peak RSS of each worker process.
 */
export async function burst(label: string, databaseUrl: string, contents: number, processes: number): Promise<{ row: BenchRow; rss: number[] }> {
  const { s, ws, key, brandIds } = await prepare(databaseUrl, BRANDS);
  const far = new Date(Date.now() + 86_400_000).toISOString();
  const templates: string[] = [];
  for (const brandId of brandIds) {
    const c = await api<{ content_id: string }>(s.url, key, 'POST', `/api/v1/workspaces/${ws}/contents`, { brand_id: brandId, target_platforms: PLATFORMS, content_type: 'text', text: 'top of the hour', publish_at: far });
    templates.push(c.content_id);
  }
  await stop(s);
  const sql = databaseUrl.startsWith('sqlite:') ? sqliteSql(databaseUrl) : await postgresSql(databaseUrl);
  const workers: Started[] = [];
  try {
    await cloneContents(sql, templates, contents, true);
    const due = Date.now() + LEAD_MS;
    const local = new Date(due).toISOString().slice(0, 16);
    await sql.run("update contents set publish_at = ?, time_zone = 'UTC', local_publish_at = ? where status = 'scheduled'", [due, local]);
    await sql.run("update jobs set run_at = ? where status = 'scheduled'", [due]);
    const jobCount = Number((await sql.all("select count(*) as n from jobs where status = 'scheduled'"))[0]!.n);
    const role = processes > 1 ? 'worker' : 'all';
    workers.push(...(await Promise.all(Array.from({ length: processes }, () => start('src/main.ts', benchEnv(databaseUrl, { ...WORKER_ENV, SERVICE_ROLE: role }))))));
    if (Date.now() >= due) throw new Error(`${label}: the workers started after the due instant`);
    const deadline = due + 180_000;
    let said = 0;
    for (;;) {
      // Posts, not distinct jobs: a job posted twice fails the row in the count below whatever this loop does, and
      // `count(distinct)` over up to 90,000 posts took ~80 ms of the database's CPU on every poll, beside the
      // workers it measures. The lateness comes from the posts' own times, not from when this loop saw them.
      const handed = Number((await sql.all('select count(*) as n from sandbox_posts'))[0]!.n);
      if (handed >= jobCount || Date.now() > deadline) break;
      if (Date.now() >= due && Date.now() - said >= 5000) {
        said = Date.now();
        const waiting = Number((await sql.all("select count(*) as n from contents where status = 'scheduled'"))[0]!.n);
        process.stderr.write(`${label}: +${((Date.now() - due) / 1000).toFixed(0)} s, ${waiting} contents not started yet, ${handed}/${jobCount} jobs posted\n`);
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
    // A moment more, so a second post of any job (the failure this row looks for) has time to land.
    await new Promise((r) => setTimeout(r, 2000));
    const rss = workers.map((w) => peakRssMb(w.child));
    const containers = await sql.all('select job_id, min(created_at) as first, count(*) as n from sandbox_containers group by job_id');
    const posts = await sql.all('select job_id, count(*) as n from sandbox_posts group by job_id');
    // A job not handed over by the deadline counts as infinitely late, so the percentiles do not flatter.
    const lateness = [...containers.map((c) => Number(c.first) - due), ...Array.from({ length: Math.max(0, jobCount - containers.length) }, () => Infinity)];
    const early = lateness.filter((l) => l < 0).length;
    const twice = containers.filter((c) => Number(c.n) > 1).length + posts.filter((p) => Number(p.n) > 1).length;
    const missing = jobCount - posts.length;
    const max = lateness.length > 0 ? lateness.reduce((a, b) => Math.max(a, b), -Infinity) : Infinity;
    const met = missing === 0 && early === 0 && twice === 0 && max <= 60_000;
    return {
      row: {
        name: `(i) top-of-the-hour burst, ${label}: ${contents.toLocaleString('en')} contents × 3 sandbox networks due at one instant`,
        figure: `lateness p50 ${pct(lateness, 50)} ms, p99 ${pct(lateness, 99)} ms, max ${Number.isFinite(max) ? max : '> 180000'} ms; ${jobCount - missing}/${jobCount} jobs handed over, ${early} early, ${twice} twice`,
        target: 'all ≤ 60 s, none early, none twice',
        met,
      },
      rss,
    };
  } finally {
    await Promise.all(workers.map((w) => stop(w)));
    await sql.close();
  }
}

/**
 * The calendar feed (`GET …/contents?status=scheduled&from&to`, first page of a one-week window) over `big`
 * scheduled contents against the same query over `small`, each spread evenly over the coming year, SQLite.
 */
export async function calendarFeed(sqliteUrl: () => string, small: number, big: number, seconds: number): Promise<{ row: BenchRow; rss: number[] }> {
  const rss: number[] = [];
  const measure = async (n: number): Promise<number> => {
    const url = sqliteUrl();
    const { s, ws, key, brandIds } = await prepare(url, 1);
    const year = 365 * 86_400_000;
    const t0 = Date.now() + 86_400_000;
    const template = await api<{ content_id: string }>(s.url, key, 'POST', `/api/v1/workspaces/${ws}/contents`, {
      brand_id: brandIds[0],
      target_platforms: PLATFORMS,
      content_type: 'text',
      text: 'calendar',
      publish_at: new Date(t0).toISOString(),
    });
    await stop(s);
    const sql = sqliteSql(url);
    await cloneContents(sql, [template.content_id], n, false, (row, i) => {
      const at = t0 + Math.floor((i * year) / n);
      row.publish_at = at;
      row.local_publish_at = new Date(at).toISOString().slice(0, 16);
    });
    await sql.run('analyze');
    await sql.close();
    const svc = await start('src/main.ts', benchEnv(url, { SERVICE_ROLE: 'api' }));
    const from = new Date(t0 + year / 2).toISOString();
    const to = new Date(t0 + year / 2 + 7 * 86_400_000).toISOString();
    const feed = `${svc.url}/api/v1/workspaces/${ws}/contents?status=scheduled&from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
    const headers = { authorization: `Bearer ${key}` };
    const page = (await (await fetch(feed, { headers })).json()) as { data: unknown[] };
    if (page.data.length !== 20) throw new Error(`calendar feed over ${n}: expected a full first page, got ${page.data.length}`);
    await load(feed, { seconds: 2, connections: 8, headers });
    const r = await load(feed, { seconds, connections: 8, headers });
    rss.push(peakRssMb(svc.child));
    await stop(svc);
    return r.mean;
  };
  const smallMean = await measure(small);
  const bigMean = await measure(big);
  const ratio = bigMean / smallMean;
  return {
    row: {
      name: `(j) calendar feed (scheduled, one-week window, first page), ${big.toLocaleString('en')} vs ${small.toLocaleString('en')} scheduled contents (SQLite)`,
      figure: `mean ${bigMean.toFixed(2)} ms vs ${smallMean.toFixed(2)} ms = ${ratio.toFixed(2)}×`,
      target: '≤ 1.2×',
      met: ratio <= 1.2,
    },
    rss,
  };
}
