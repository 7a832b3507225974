import { createServer } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpTransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { api, benchEnv, cpuMs, load, peakRssMb, percentile, start, PLATFORMS, type Started, stop } from './lib.js';
import { burst, calendarFeed } from './scheduling.js';
import { overrides } from '../test/support/overrides.js';

/**
 * `npm run bench`: every figure is a ratio against a baseline measured in this same run, or a count per second
 * beside it. Servers run in their own processes on loopback; the load comes from this process. Writes
 * bench/RESULTS.md.
 */

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const PG_ADMIN = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

interface Row {
  name: string;
  figure: string;
  target: string;
  met: boolean | null;
}
const rows: Row[] = [];
/** Issue 16's rows, kept in their own section of RESULTS.md. */
const schedulingRows: Row[] = [];
/** Each service process's peak RSS, with the run it served. */
const rss: { mb: number; run: string }[] = [];
const dirs: string[] = [];

function sqliteUrl(): string {
  const dir = mkdtempSync(join(tmpdir(), 'publisher-bench-'));
  dirs.push(dir);
  return `sqlite:${join(dir, 'service.db')}`;
}

async function pgUrl(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `bench_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(PG_ADMIN);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: PG_ADMIN });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

/** A started service with a workspace, a brand and one sandbox connection per platform. */
async function service(databaseUrl: string, extra: Record<string, string> = {}) {
  const s = await start('src/main.ts', benchEnv(databaseUrl, extra));
  const ws = /(ws_[0-9a-z]{20})/.exec(s.stdout)![1]!;
  const key = /(svc_live_[0-9a-f]{32})/.exec(s.stdout)![1]!;
  const base = `${s.url}/api/v1/workspaces/${ws}`;
  const brand = await api<{ id: string }>(s.url, key, 'POST', `/api/v1/workspaces/${ws}/brands`, { name: 'bench' });
  for (const p of PLATFORMS) await api(s.url, key, 'POST', `/api/v1/workspaces/${ws}/brands/${brand.id}/connections`, { platform_slug: p, mode: 'sandbox', name: p });
  const content = { brand_id: brand.id, target_platforms: PLATFORMS, content_type: 'text', text: 'benchmark' };
  return { s, ws, key, base, brandId: brand.id, content, auth: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } };
}

function done(s: Started, run: string): Promise<void> {
  rss.push({ mb: peakRssMb(s.child), run });
  return stop(s);
}

/** Bare Express on this machine in this run: every throughput row is held as a ratio to it. */
async function baselineFigure(): Promise<{ rps: number; p99: number }> {
  const baseline = await start('bench/baseline-server.ts', {});
  await load(`${baseline.url}/hello`, { seconds: SECONDS, connections: CONNECTIONS });
  const base = await load(`${baseline.url}/hello`, { seconds: SECONDS, connections: CONNECTIONS });
  await stop(baseline);
  rows.push({ name: 'baseline: bare Express 5 GET /hello', figure: `${base.rps.toFixed(0)} req/s, p99 ${base.p99} ms`, target: '—', met: null });
  return base;
}

async function reads(base: { rps: number; p99: number }): Promise<void> {
  const sqlite = await readFigure('SQLite', sqliteUrl(), base);
  rows.push({ name: '(a) authenticated GET content (SQLite) vs baseline', figure: sqlite.figure, target: '≥ 0.30×', met: sqlite.ratio >= 0.3 });
  const pgdb = await pgUrl();
  try {
    const postgres = await readFigure('PostgreSQL', pgdb.url, base);
    rows.push({ name: '(a) authenticated GET content (PostgreSQL) vs baseline', figure: postgres.figure, target: '≥ 0.15×', met: postgres.ratio >= 0.15 });
    // Rate limits counted in Redis instead of PostgreSQL's rate_limits row: one round trip to the database fewer.
    const fresh = await pgUrl();
    try {
      const redis = await readFigure('PostgreSQL, REDIS_URL', fresh.url, base, { REDIS_URL });
      rows.push({ name: '(a) the same on PostgreSQL with the rate limiter on Redis (REDIS_URL)', figure: redis.figure, target: '≥ the PostgreSQL (a) figure', met: redis.ratio >= postgres.ratio });
    } finally {
      await fresh.drop();
    }
  } finally {
    await pgdb.drop();
  }
}

/** Row (a)'s read: one content by id with an API key, against the service on `databaseUrl`. */
async function readFigure(label: string, databaseUrl: string, base: { rps: number; p99: number }, extra: Record<string, string> = {}): Promise<{ ratio: number; figure: string }> {
  const svc = await service(databaseUrl, { SERVICE_ROLE: 'api', ...extra });
  const created = await api<{ content_id: string }>(svc.s.url, svc.key, 'POST', `/api/v1/workspaces/${svc.ws}/contents`, svc.content);
  const url = `${svc.base}/contents/${created.content_id}`;
  await load(url, { seconds: SECONDS, connections: CONNECTIONS, headers: svc.auth });
  const read = await load(url, { seconds: SECONDS, connections: CONNECTIONS, headers: svc.auth });
  await done(svc.s, `(a) ${label}`);
  const ratio = read.rps / base.rps;
  return { ratio, figure: `${read.rps.toFixed(0)} req/s = ${ratio.toFixed(2)}×, p99 ${read.p99} ms (${(read.p99 / Math.max(1, base.p99)).toFixed(1)}×)` };
}

/** Signs in to the dashboard over HTTP and returns the session cookie. */
async function dashboardSession(url: string, key: string): Promise<string> {
  const form = await fetch(`${url}/dashboard/sign-in`);
  const csrfCookie = /svc_signin_csrf=([^;]+)/.exec(form.headers.getSetCookie().join(';'))![1]!;
  const csrf = /name="csrf" value="([^"]+)"/.exec(await form.text())![1]!;
  const signed = await fetch(`${url}/dashboard/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `svc_signin_csrf=${csrfCookie}` },
    body: new URLSearchParams({ csrf, api_key: key, next: '/dashboard' }).toString(),
  });
  return `svc_session=${/svc_session=([^;]+)/.exec(signed.headers.getSetCookie().join(';'))![1]!}`;
}

/** (h) Dashboard pages as a signed-in person gets them: the overview (four core reads) and one content. */
async function dashboardPages(baseRps: number): Promise<void> {
  const svc = await service(sqliteUrl(), { SERVICE_ROLE: 'api' });
  for (let i = 0; i < 20; i++) await api(svc.s.url, svc.key, 'POST', `/api/v1/workspaces/${svc.ws}/contents`, svc.content);
  const created = await api<{ content_id: string }>(svc.s.url, svc.key, 'POST', `/api/v1/workspaces/${svc.ws}/contents`, svc.content);
  const headers = { cookie: await dashboardSession(svc.s.url, svc.key) };
  for (const [label, path] of [
    ['overview', '/dashboard'],
    ['content page', `/dashboard/contents/${created.content_id}`],
  ] as const) {
    await load(`${svc.s.url}${path}`, { seconds: SECONDS, connections: CONNECTIONS, headers });
    const page = await load(`${svc.s.url}${path}`, { seconds: SECONDS, connections: CONNECTIONS, headers });
    // A lost session would answer fast 303s to the sign-in page: only 200s count.
    if (page.non2xx > 0 || page.errors > 0) throw new Error(`dashboard ${label}: ${page.non2xx} non-2xx answers, ${page.errors} errors`);
    rows.push({
      name: `(h) dashboard ${label} (SQLite, signed in) vs baseline`,
      figure: `${page.rps.toFixed(0)} req/s = ${(page.rps / baseRps).toFixed(2)}×, p99 ${page.p99} ms`,
      target: 'none set',
      met: null,
    });
  }
  await done(svc.s, '(h)');
}

/** A person joins through an invitation (the join form opens their session) and returns its cookie. */
async function personSession(url: string, ws: string, key: string): Promise<string> {
  const invited = await api<{ token: string }>(url, key, 'POST', `/api/v1/workspaces/${ws}/invitations`, { email: 'bench-person@example.com', role: 'editor' });
  const path = `/dashboard/join/${invited.token}`;
  const form = await fetch(`${url}${path}`);
  const csrfCookie = /svc_join_csrf=([^;]+)/.exec(form.headers.getSetCookie().join(';'))![1]!;
  const csrf = /name="csrf" value="([^"]+)"/.exec(await form.text())![1]!;
  const joined = await fetch(`${url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `svc_join_csrf=${csrfCookie}` },
    body: new URLSearchParams({ csrf, as: 'new', name: 'Bench', password: 'a bench password of some length' }).toString(),
  });
  return `svc_session=${/svc_session=([^;]+)/.exec(joined.headers.getSetCookie().join(';'))![1]!}`;
}

/**
 * (k) What roles cost on the read path: one content read by a key limited to an editor's role and one brand,
 * against the same read by a full key; and the content's dashboard page for a signed-in person (whose membership is
 * read on every request) against the same page for a session opened with a full key. Rounds alternate so drift
 * affects both sides alike.
 */
async function accessCost(): Promise<void> {
  const svc = await service(sqliteUrl(), { SERVICE_ROLE: 'api' });
  const created = await api<{ content_id: string }>(svc.s.url, svc.key, 'POST', `/api/v1/workspaces/${svc.ws}/contents`, svc.content);
  const scoped = await api<{ api_key: string }>(svc.s.url, svc.key, 'POST', `/api/v1/workspaces/${svc.ws}/api-keys`, { name: 'bench scoped', role: 'editor', brand_ids: [svc.brandId] });
  const keySession = await dashboardSession(svc.s.url, svc.key);
  const person = await personSession(svc.s.url, svc.ws, svc.key);
  const rest = `${svc.base}/contents/${created.content_id}`;
  const page = `${svc.s.url}/dashboard/contents/${created.content_id}`;
  const sides = {
    full: { url: rest, headers: svc.auth },
    scoped: { url: rest, headers: { authorization: `Bearer ${scoped.api_key}` } },
    keySession: { url: page, headers: { cookie: keySession } },
    person: { url: page, headers: { cookie: person } },
  };
  const rps: Record<keyof typeof sides, number[]> = { full: [], scoped: [], keySession: [], person: [] };
  for (const side of Object.keys(sides) as (keyof typeof sides)[]) await load(sides[side].url, { seconds: 2, connections: CONNECTIONS, headers: sides[side].headers });
  for (let round = 0; round < 3; round++) {
    for (const side of Object.keys(sides) as (keyof typeof sides)[]) {
      const r = await load(sides[side].url, { seconds: SECONDS, connections: CONNECTIONS, headers: sides[side].headers });
      if (r.non2xx > 0 || r.errors > 0) throw new Error(`(k) ${side}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
      rps[side].push(r.rps);
    }
  }
  await done(svc.s, '(k)');
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  // Cost is time per read: the full credential's rate over the scoped one's.
  const keyCost = mean(rps.full) / mean(rps.scoped);
  const personCost = mean(rps.keySession) / mean(rps.person);
  rows.push({
    name: '(k) GET content by a key limited to role editor and one brand, vs a full key (SQLite)',
    figure: `${mean(rps.scoped).toFixed(0)} vs ${mean(rps.full).toFixed(0)} req/s: cost ${keyCost.toFixed(2)}× (3 alternating rounds)`,
    target: '≤ 1.1×',
    met: keyCost <= 1.1,
  });
  rows.push({
    name: "(k) a content's dashboard page for a signed-in person, vs a session opened with a full key (SQLite)",
    figure: `${mean(rps.person).toFixed(0)} vs ${mean(rps.keySession).toFixed(0)} req/s: cost ${personCost.toFixed(2)}× (3 alternating rounds)`,
    target: '≤ 1.1×',
    met: personCost <= 1.1,
  });
}

async function creation(label: string, databaseUrl: string, baseRps: number): Promise<void> {
  const svc = await service(databaseUrl, { SERVICE_ROLE: 'api' });
  const body = JSON.stringify(svc.content);
  await load(`${svc.base}/contents`, { seconds: 2, connections: CONNECTIONS, method: 'POST', headers: svc.auth, body });
  const r = await load(`${svc.base}/contents`, { seconds: SECONDS, connections: CONNECTIONS, method: 'POST', headers: svc.auth, body });
  await done(svc.s, `(b) ${label}`);
  // About 1,500/s on the embedded default and 600/s on PostgreSQL at a quiet run's baseline of 16,000 req/s.
  const target = label === 'SQLite' ? 0.09 : 0.037;
  rows.push({
    name: `(b) content creation, 3 sandbox platforms, ${label}, vs baseline`,
    figure: `${r.rps.toFixed(0)} contents/s = ${(r.rps / baseRps).toFixed(3)}×, p99 ${r.p99} ms${r.non2xx > 0 ? `, ${r.non2xx} non-2xx` : ''}`,
    target: `≥ ${target}×`,
    met: r.rps / baseRps >= target,
  });
}

/** The sandbox's confirmation interval for row (c), stated in the row. */
const CONFIRM_INTERVAL_MS = 20;

/**
 * Contents accepted → every job published → the content.published webhook received, measured twice on one
 * service: first its capacity (16 clients sending back to back for SECONDS), then latency at a fixed offered rate
 * of 80 % of that capacity (an open loop: each content is sent at its scheduled instant whatever the answers, and
 * its latency counts from that instant, so a stall is not hidden by clients that waited).
 */
async function endToEnd(baseRps: number): Promise<void> {
  const arrivals = new Map<string, number>();
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      arrivals.set((JSON.parse(body) as { data: { content_id: string } }).data.content_id, performance.now());
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const svc = await service(sqliteUrl(), {
    ALLOW_LOCAL_URLS: 'true',
    ...overrides({ SANDBOX_DELAY: '0ms', CONFIRM_INTERVAL: `${CONFIRM_INTERVAL_MS}ms`, WORKER_POLL: '10ms' }),
    WORKER_CONCURRENCY: '32',
    WORKER_PER_CONNECTION: '32',
  });
  await api(svc.s.url, svc.key, 'POST', `/api/v1/workspaces/${svc.ws}/webhooks`, {
    url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
    description: 'bench',
    enabled_events: ['content.published'],
  });
  const create = () => api<{ content_id: string }>(svc.s.url, svc.key, 'POST', `/api/v1/workspaces/${svc.ws}/contents`, svc.content);
  const settle = async (sentAt: Map<string, number>) => {
    const deadline = performance.now() + 60_000;
    while ([...sentAt.keys()].some((id) => !arrivals.has(id)) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const arrived = [...sentAt].filter(([id]) => arrivals.has(id));
    return { arrived: arrived.length, latencies: arrived.map(([id, t]) => arrivals.get(id)! - t), finished: Math.max(...arrived.map(([id]) => arrivals.get(id)!)) };
  };

  // Capacity: closed loop, as many as the service takes.
  const saturated = new Map<string, number>();
  const started = performance.now();
  const until = started + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (performance.now() < until) {
        const t = performance.now();
        saturated.set((await create()).content_id, t);
      }
    }),
  );
  const full = await settle(saturated);
  const capacity = full.arrived / ((full.finished - started) / 1000);

  // Latency at 80 % of that capacity: one content every 1000 / rate ms, sent on schedule.
  const rate = Math.max(1, Math.floor(capacity * 0.8));
  const offered = new Map<string, number>();
  const sends: Promise<void>[] = [];
  const from = performance.now();
  for (let n = 0; n < rate * SECONDS; n++) {
    const due = from + (n * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    sends.push(create().then((c) => void offered.set(c.content_id, due)));
  }
  await Promise.all(sends);
  const steady = await settle(offered);
  await done(svc.s, '(c)');
  receiver.close();
  const p99 = percentile(steady.latencies, 99);
  rows.push({
    name: `(c) end to end: accepted → 3 jobs published → webhook received (SQLite, sandbox confirming every ${CONFIRM_INTERVAL_MS} ms): capacity, then latency at 80 % of it`,
    figure:
      `capacity ${capacity.toFixed(0)} contents/s = ${(capacity / baseRps).toFixed(3)}× (p99 ${percentile(full.latencies, 99).toFixed(0)} ms at saturation); at ${rate}/s offered: ` +
      `p50 ${percentile(steady.latencies, 50).toFixed(0)} ms, p99 ${p99.toFixed(0)} ms (${steady.arrived}/${offered.size} arrived)`,
    target: 'capacity ≥ 0.03× baseline; p99 < 1 s at 80 %',
    met: capacity / baseRps >= 0.03 && p99 < 1000 && steady.arrived === offered.size,
  });
}

/**
 * Deliveries per second to a 2xx receiver, alone and beside an endpoint that always times out (1 s timeout):
 * `DELIVERIES` to each endpoint, in `PAIRS` alternating runs.
 */
async function dispatcher(baseRps: number): Promise<void> {
  const DELIVERIES = 30_000;
  const PAIRS = 3;
  const run = async (withTimeout: boolean): Promise<number> => {
    const receiver = createServer((req, res) => {
      if (req.url === '/slow') return; // never answers: every attempt times out
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const port = (receiver.address() as AddressInfo).port;
    const url = sqliteUrl();
    const svc = await service(url, { ALLOW_LOCAL_URLS: 'true', SERVICE_ROLE: 'api' });
    const fast = await api<{ id: string }>(svc.s.url, svc.key, 'POST', `/api/v1/workspaces/${svc.ws}/webhooks`, { url: `http://127.0.0.1:${port}/fast`, description: '', enabled_events: ['content.published'] });
    const slow = withTimeout
      ? await api<{ id: string }>(svc.s.url, svc.key, 'POST', `/api/v1/workspaces/${svc.ws}/webhooks`, { url: `http://127.0.0.1:${port}/slow`, description: '', enabled_events: ['content.published'] })
      : null;
    await stop(svc.s);
    // The outbox filled directly: N deliveries per endpoint, all due now.
    // Enough for several seconds at the target rate: the timing-out endpoint's attempts then time out and are
    // claimed again several times within the run, instead of the run ending within its first timeout.
    const n = DELIVERIES;
    const db = new BetterSqlite3(url.replace(/^sqlite:/, ''));
    const now = Date.now();
    const insert = db.prepare(
      "insert into deliveries (id, workspace_id, webhook_id, event_id, event_type, body, status, attempt_count, manual, next_attempt_at, created_at, updated_at) values (?, ?, ?, ?, 'content.published', ?, 'pending', 0, 0, ?, ?, ?)",
    );
    db.transaction(() => {
      for (let i = 0; i < n; i++) {
        const body = JSON.stringify({ id: `evt_${i}`, type: 'content.published', data: { content_id: `c${i}` } });
        // Ids that sort in the order they were made, as the service's own delivery ids do.
        const seq = String(i).padStart(6, '0');
        insert.run(`del_${seq}f`, svc.ws, fast.id, `evt_${i}`, body, now, now, now);
        if (slow) insert.run(`del_${seq}s`, svc.ws, slow.id, `evt_${i}`, body, now, now, now);
      }
    })();
    db.close();
    const worker = await start('src/main.ts', benchEnv(url, { ALLOW_LOCAL_URLS: 'true', SERVICE_ROLE: 'worker', ...overrides({ WORKER_POLL: '10ms' }), WEBHOOK_TIMEOUT: '1s' }));
    const t0 = performance.now();
    const check = new BetterSqlite3(url.replace(/^sqlite:/, ''), { readonly: true });
    // Done when the fast endpoint has nothing pending: a delivery stays pending, claimed or not, until its attempt
    // is recorded. Counted in the partial index of pending deliveries, which shrinks as the run goes. (Counting the
    // delivered rows read every row of the endpoint from the table on each poll: 2 ms alone and 7 ms beside the
    // other endpoint's interleaved backlog, every 25 ms, in the process that also runs the receiver, so the
    // measurement itself slowed the side it was compared against.)
    const pending = check.prepare("select count(*) as n from deliveries indexed by deliveries_endpoint_due_idx where webhook_id = ? and status = 'pending'");
    while ((pending.get(fast.id) as { n: number }).n > 0 && performance.now() - t0 < 120_000) await new Promise((r) => setTimeout(r, 25));
    const seconds = (performance.now() - t0) / 1000;
    check.close();
    await done(worker, '(d)');
    receiver.closeAllConnections();
    receiver.close();
    return n / seconds;
  };
  // Alternating pairs, so a slower moment of the machine falls on both sides; each side's median is the figure.
  const alones: number[] = [];
  const besides: number[] = [];
  for (let pair = 0; pair < PAIRS; pair++) {
    alones.push(await run(false));
    besides.push(await run(true));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const alone = median(alones);
  const beside = median(besides);
  const cost = 1 - beside / alone;
  const each = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(', ');
  rows.push({ name: '(d) webhook deliveries/s to a 2xx receiver', figure: `${alone.toFixed(0)}/s = ${(alone / baseRps).toFixed(2)}× baseline (median of ${each(alones)})`, target: '≥ 0.18× baseline', met: alone / baseRps >= 0.18 });
  rows.push({
    name: '(d) the same beside an endpoint that always times out',
    figure: `${beside.toFixed(0)}/s (median of ${each(besides)}; cost ${(cost * 100).toFixed(1)}%)`,
    target: 'cost < 10%',
    met: cost < 0.1,
  });
}

/**
 * MCP tools/call get_content vs REST GET content, every MCP call through the SDK's server and transports. The
 * target is on what the service spends: CPU time of the
 * service process per call (Linux schedstat, per thread, in ns), each kind called sequentially in blocks of 30,
 * the blocks of every kind interleaved in a rotating order over 180 measured rounds, and the ratio of the totals
 * (so a slower moment of the machine falls on every kind alike). Both MCP eras are posted as raw JSON-RPC over the
 * same fetch as the REST read, so the client does the same work for each. Beside it, informational: p50 latency of the same raw calls, and of
 * the official SDK clients (v1 for 2025-11-25, v2 for 2026-07-28), whose own work (the v1 client checks each
 * result against the tool's output schema) is the client's cost, not the service's.
 */
async function mcpVsRest(): Promise<void> {
  const svc = await service(sqliteUrl(), { SERVICE_ROLE: 'api' });
  const created = await api<{ content_id: string }>(svc.s.url, svc.key, 'POST', `/api/v1/workspaces/${svc.ws}/contents`, svc.content);
  const headers = { authorization: `Bearer ${svc.key}` };
  const legacyClient = new ClientV1({ name: 'bench', version: '1' });
  await legacyClient.connect(new HttpTransportV1(new URL(`${svc.s.url}/mcp`), { requestInit: { headers } }));
  const modernClient = new Client({ name: 'bench', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await modernClient.connect(new StreamableHTTPClientTransport(new URL(`${svc.s.url}/mcp`), { requestInit: { headers } }));
  // Clients list tools first; the v1 client then checks each result against the listed output schema.
  await legacyClient.listTools();
  await modernClient.listTools();

  const args = { name: 'get_content', arguments: { content_id: created.content_id } };
  const post = async (body: unknown, extra: Record<string, string>) => {
    const res = await fetch(`${svc.s.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...extra },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status !== 200 || text.includes('"isError":true')) throw new Error(`MCP call: ${res.status} ${text.slice(0, 300)}`);
  };
  const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
  const raw = {
    rest: () => api(svc.s.url, svc.key, 'GET', `/api/v1/workspaces/${svc.ws}/contents/${created.content_id}`),
    legacy: () => post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: args }, { 'mcp-protocol-version': '2025-11-25' }),
    modern: () =>
      post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { ...args, _meta: envelope } }, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'get_content' }),
  };
  const sdk = { sdkLegacy: () => legacyClient.callTool(args), sdkModern: () => modernClient.callTool(args) };
  const kinds = { ...raw, ...sdk };
  type Kind = keyof typeof kinds;

  // Small blocks, many rounds, each round in a rotated order: the machine's speed drifts over seconds, and every
  // kind then sees the same drift. The figure is the ratio of the CPU totals over all rounds after the first.
  const BLOCK = 30;
  const ROUNDS = 181;
  const order = Object.entries(kinds) as [Kind, () => Promise<unknown>][];
  const cpu: Record<Kind, number> = { rest: 0, legacy: 0, modern: 0, sdkLegacy: 0, sdkModern: 0 };
  const latency: Record<Kind, number[]> = { rest: [], legacy: [], modern: [], sdkLegacy: [], sdkModern: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (let k = 0; k < order.length; k++) {
      const [kind, call] = order[(k + round) % order.length]!;
      await call();
      const before = cpuMs(svc.s.child);
      for (let i = 0; i < BLOCK; i++) {
        const t = performance.now();
        await call();
        if (round > 0) latency[kind].push(performance.now() - t);
      }
      // The first round warms the JIT and the caches.
      if (round > 0) cpu[kind] += cpuMs(svc.s.child) - before;
    }
  }
  await legacyClient.close();
  await modernClient.close();
  await done(svc.s, '(e)');

  const calls = (ROUNDS - 1) * BLOCK;
  const perCall = (kind: Kind) => cpu[kind] / calls;
  const p50 = (kind: Kind) => percentile(latency[kind], 50);
  for (const [era, kind] of [['2025-11-25', 'legacy'], ['2026-07-28', 'modern']] as const) {
    const ratio = cpu[kind] / cpu.rest;
    rows.push({
      name: `(e) MCP tools/call get_content (${era}) vs REST GET content: service CPU per call`,
      figure: `${perCall(kind).toFixed(2)} ms vs ${perCall('rest').toFixed(2)} ms = ${ratio.toFixed(2)}×`,
      target: '≤ 1.5×',
      met: ratio <= 1.5,
    });
  }
  const latencyRow = (label: string, kind: Kind) => ({
    name: `(e) informational: p50 latency, ${label}`,
    figure: `${p50(kind).toFixed(2)} ms vs ${p50('rest').toFixed(2)} ms = ${(p50(kind) / p50('rest')).toFixed(2)}×`,
    target: '—',
    met: null,
  });
  rows.push(latencyRow('raw JSON-RPC 2025-11-25 vs REST', 'legacy'), latencyRow('raw JSON-RPC 2026-07-28 vs REST', 'modern'));
  rows.push(latencyRow('SDK v1 client (2025-11-25) vs REST', 'sdkLegacy'), latencyRow('SDK v2 client (2026-07-28) vs REST', 'sdkModern'));
}

/**
 * A read's mean latency with 10,000 vs 1,000,000 contents in the database (SQLite). Both services run at once and
 * are loaded in turns, alternating which goes first: measured one after the other, the machine's drift between
 * the two halves (its speed moves by half within minutes here) showed as growth that was not there.
 */
async function growth(): Promise<void> {
  const seeded = async (n: number) => {
    const url = sqliteUrl();
    const svc = await service(url, { SERVICE_ROLE: 'api' });
    const created = await api<{ content_id: string }>(svc.s.url, svc.key, 'POST', `/api/v1/workspaces/${svc.ws}/contents`, svc.content);
    const db = new BetterSqlite3(url.replace(/^sqlite:/, ''));
    const insert = db.prepare("insert into contents (id, workspace_id, brand_id, content_type, status, request, created_at, updated_at) values (?, ?, ?, 'text', 'published', ?, ?, ?)");
    const request = JSON.stringify({ text: 'x', title: null, media: [], targets: [] });
    const t0 = Date.now() - n;
    db.transaction(() => {
      for (let i = 0; i < n; i++) insert.run(`00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, svc.ws, svc.brandId, request, t0 + i, t0 + i);
    })();
    db.close();
    const get = `${svc.base}/contents/${created.content_id}`;
    const list = `${svc.base}/contents?limit=20`;
    await load(get, { seconds: 2, connections: 8, headers: svc.auth });
    await load(list, { seconds: 1, connections: 8, headers: svc.auth });
    const means: number[] = [];
    return {
      svc,
      means,
      async round(seconds: number) {
        means.push((await load(get, { seconds, connections: 8, headers: svc.auth })).mean);
        means.push((await load(list, { seconds, connections: 8, headers: svc.auth })).mean);
      },
    };
  };
  const small = await seeded(10_000);
  const big = await seeded(1_000_000);
  const ROUNDS = Math.max(2, Math.round(SECONDS / 2));
  for (let r = 0; r < ROUNDS; r++) {
    for (const side of r % 2 === 0 ? [small, big] : [big, small]) await side.round(1);
  }
  await done(small.svc.s, '(f) 10,000');
  await done(big.svc.s, '(f) 1,000,000');
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const ratio = mean(big.means) / mean(small.means);
  rows.push({ name: '(f) read latency (GET content, first page of list), 1,000,000 vs 10,000 contents', figure: `mean ${mean(big.means).toFixed(2)} ms vs ${mean(small.means).toFixed(2)} ms = ${ratio.toFixed(2)}× (both loaded in ${ROUNDS} alternating rounds)`, target: '≤ 1.2×', met: ratio <= 1.2 });
}

/** (i) top-of-the-hour bursts on SQLite (one process) and PostgreSQL (three); (j) the calendar feed at 1,000,000. */
async function scheduling(only: Set<string>): Promise<void> {
  if (only.has('i')) {
    const lite = await burst('SQLite, 1 process', sqliteUrl(), Number(process.env.BENCH_BURST_SQLITE ?? 10_000), 1);
    schedulingRows.push(lite.row);
    const pgdb = await pgUrl();
    try {
      const big = await burst('PostgreSQL, 3 processes', pgdb.url, Number(process.env.BENCH_BURST_POSTGRES ?? 30_000), 3);
      schedulingRows.push(big.row);
    } finally {
      await pgdb.drop();
    }
  }
  if (only.has('j')) schedulingRows.push((await calendarFeed(sqliteUrl, 10_000, 1_000_000, SECONDS)).row);
}

/** RESULTS.md: the general table, then the scheduling section; a part this run did not measure is kept as it was. */
function writeResults(general: string | null, schedulingSection: string | null): void {
  const file = join('bench', 'RESULTS.md');
  const old = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const marker = '\n## Scheduling';
  const cut = old.indexOf(marker);
  const oldGeneral = cut < 0 ? old : old.slice(0, cut);
  const oldScheduling = cut < 0 ? '' : old.slice(cut + 1);
  const parts = [general ?? oldGeneral.trimEnd(), schedulingSection ?? oldScheduling.trimEnd()].filter((p) => p.length > 0);
  writeFileSync(file, `${parts.join('\n\n')}\n`);
}

async function main(): Promise<void> {
  const started = Date.now();
  // `BENCH_ONLY=i,j npm run bench` runs the scheduling rows alone (the rest of RESULTS.md is kept).
  const only = new Set((process.env.BENCH_ONLY ?? 'a,b,c,d,e,f,h,k,i,j').split(','));
  const general = ['a', 'b', 'c', 'd', 'e', 'f', 'h', 'k'].some((l) => only.has(l));
  try {
    const base = ['a', 'b', 'c', 'd', 'h'].some((l) => only.has(l)) ? await baselineFigure() : { rps: 0, p99: 0 };
    const baseRps = base.rps;
    if (only.has('a')) await reads(base);
    if (only.has('h')) await dashboardPages(baseRps);
    if (only.has('k')) await accessCost();
    if (only.has('b')) {
      await creation('SQLite', sqliteUrl(), baseRps);
      const pgdb = await pgUrl();
      try {
        await creation('PostgreSQL', pgdb.url, baseRps);
      } finally {
        await pgdb.drop();
      }
    }
    if (only.has('c')) await endToEnd(baseRps);
    if (only.has('d')) await dispatcher(baseRps);
    if (only.has('e')) await mcpVsRest();
    if (only.has('f')) await growth();
    if (general) {
      const peak = rss.reduce((a, b) => (b.mb > a.mb ? b : a));
      rows.push({ name: '(g) peak RSS of a service process during the runs above', figure: `${peak.mb} MB (the service of row ${peak.run})`, target: '≤ 200 MB', met: peak.mb <= 200 });
    }
    await scheduling(only);
  } finally {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
  const tableOf = (list: Row[]) =>
    ['| Benchmark | Figure | Target | Met |', '|---|---|---|---|', ...list.map((r) => `| ${r.name} | ${r.figure} | ${r.target} | ${r.met === null ? '—' : r.met ? 'yes' : '**missed**'} |`)].join('\n');
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${process.platform}`;
  const when = `Date: ${new Date().toISOString()}; run took ${Math.round((Date.now() - started) / 1000)} s`;
  const table = tableOf(rows);
  const schedulingTable = tableOf(schedulingRows);
  if (general) process.stdout.write(`${table}\n`);
  if (schedulingRows.length > 0) process.stdout.write(`${schedulingTable}\n`);
  writeResults(
    general
      ? `# Benchmark results\n\nMachine: ${machine}\nCommand: \`npm run bench\` (autocannon from the bench process, ${CONNECTIONS} connections, ${SECONDS} s per figure after a warm-up; each server in its own process on loopback)\n${when}\n\n${table}\n\nRatios compare with the baseline measured in the same run; absolute figures depend on the machine (this one also runs the load generator on its 2 cores).`
      : null,
    schedulingRows.length > 0
      ? `## Scheduling\n\nMachine: ${machine}\nCommand: \`BENCH_ONLY=i,j npm run bench\` (part of the full run)\n${when}\n\n${schedulingTable}\n\nBurst: the contents are seeded by copying rows made through the API (see bench/scheduling.ts), all set due at one instant 25 s ahead on the real clock; the scheduler and publisher of the service processes (sandbox delay 0, WORKER_CONCURRENCY 32, WORKER_PER_CONNECTION 32, worker poll 50 ms; 100 brands × 3 sandbox connections) do the rest. Lateness is the sandbox's submit (container created_at) minus publish_at, per job. Calendar: the feed's first page over a one-week window in the middle of a year of scheduled contents, 8 connections.`
      : null,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
