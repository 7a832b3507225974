import { type ChildProcess, fork } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import pg from 'pg';
import type * as ConfigModule from '../src/config.js';
import type * as ServerModule from '../src/server.js';
import { api, benchEnv, cpuMs, PLATFORMS, start, stop } from './lib.js';
import { overrides } from '../test/support/overrides.js';

/**
 * `npx tsx bench/profile-read.ts [sqlite|postgres]`: where an authenticated read (row (a): GET one content with an
 * API key; with `PROFILE_READ=path`, a GET of `PROFILE_PATH` (default /healthz) with the key; with `PROFILE_READ=create`, row (b)'s content creation; with `PROFILE_READ=mcp-2025` or `mcp-2026`, row
 * (e)'s MCP call) spends its CPU and how many SQL
 * statements it runs.
 *
 * The service runs as deployed (compiled, `npm run build` first) in a child process, with every SQL statement
 * counted at the driver (better-sqlite3's `prepare`, which kysely and the rate limiter call once per statement;
 * pg's `Client.query`). After a warm-up, the parent sends a fixed number of reads (not a fixed time, so counts do
 * not depend on the machine's speed) while the child's CPU profiler runs (node:inspector, the measured window
 * only), then prints statements per read by SQL text, and the profile's self and inclusive time.
 */

const READS = Number(process.env.PROFILE_READS ?? 20_000);
const CONNECTIONS = Number(process.env.PROFILE_CONNECTIONS ?? 16);
const READ = process.env.PROFILE_READ ?? 'rest';
const PG_ADMIN = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

type ToChild = { reset: boolean } | { report: string } | { unfinished: true };
type FromChild = { ready: { url: string; ws: string; key: string } } | { started: true } | { counts: Record<string, number> } | { unfinished: number };

/** Child: the service itself, with its statements counted. */
async function serve(): Promise<void> {
  const counts = new Map<string, number>();
  // Counted by the exact text (a map lookup), shortened only when reported, so counting costs the reads little.
  const count = (sql: string) => counts.set(sql, (counts.get(sql) ?? 0) + 1);
  const query = pg.Client.prototype.query as (this: pg.Client, ...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const first = args[0];
    count(typeof first === 'string' ? first : typeof first === 'object' && first !== null && 'text' in first ? String(first.text) : '?');
    return query.apply(this, args);
  } as typeof pg.Client.prototype.query;

  // Built JavaScript, as `npm run bench` runs it; the import is computed so the bench's own type check skips it.
  const dist = new URL('../dist/src/', import.meta.url).href;
  const { loadConfig } = (await import(`${dist}config.js`)) as typeof ConfigModule;
  const { startService } = (await import(`${dist}server.js`)) as typeof ServerModule;
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  const service = await startService(loadConfig());
  const { db } = service.container;
  if (db.dialect === 'sqlite') {
    const prepare = db.sqlite.prepare.bind(db.sqlite);
    db.sqlite.prepare = (sql) => {
      count(sql);
      return prepare(sql);
    };
  }
  const first = service.firstWorkspace!;
  process.on('message', (m: ToChild) => {
    void (async () => {
      if ('unfinished' in m) {
        // Marked, so the report leaves this polling out of the job path's statements.
        const { rows } = await sql<{ n: number | string }>`select count(*) as n from jobs where status not in ('published', 'failed') /* profile */`.execute(db.kysely);
        process.send!({ unfinished: Number(rows[0]?.n ?? 0) } satisfies FromChild);
        return;
      }
      if ('reset' in m) {
        counts.clear();
        if (m.reset) await session.post('Profiler.start');
        process.send!({ started: true } satisfies FromChild);
        return;
      }
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(m.report, JSON.stringify(profile));
      const short = new Map<string, number>();
      for (const [sql, n] of counts) {
        if (sql.includes('/* profile */')) continue;
        const text = sql.replace(/\s+/g, ' ').slice(0, 110);
        short.set(text, (short.get(text) ?? 0) + n);
      }
      process.send!({ counts: Object.fromEntries(short) } satisfies FromChild);
    })();
  });
  process.on('SIGTERM', () => void service.stop(100).then(() => process.exit(0)));
  process.send!({ ready: { url: service.listenUrl, ws: first.workspace_id, key: first.api_key } } satisfies FromChild);
}

function next(child: ChildProcess): Promise<FromChild> {
  return new Promise((resolve) => child.once('message', (m) => resolve(m as FromChild)));
}

interface ProfileNode {
  id: number;
  children?: number[];
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

/** Where a sampled frame's code lives: a package, our own source, Node's internals or V8 (GC, idle). */
function moduleOf(url: string, fn: string): string {
  // Native functions have no script: better-sqlite3's statement methods, the socket's writev, GC.
  if (url === '') return ['all', 'get', 'run', 'prepare', 'transaction'].includes(fn) ? 'better-sqlite3 (native)' : `(${fn || 'anonymous'})`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  if (url.startsWith('node:')) return url.replace(/^node:internal\/(\w+).*/, 'node:$1');
  const ours = /\/(?:dist\/)?((?:src|db|oauth|tools)\/.*)$/.exec(url.replace('file://', ''));
  return ours ? ours[1]! : url;
}

/** Self time is grouped by directory for our own code, by file for inclusive time. */
function dirOf(mod: string): string {
  return /^(src|db|oauth|tools)\//.test(mod) ? mod.replace(/\/[^/]+$/, '/') : mod;
}

function summarise(file: string): { total: number; byModule: [string, number][]; byFunction: [string, number][]; inclusive: [string, number][] } {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number };
  const interval = (profile.endTime - profile.startTime) / Math.max(1, profile.samples.length) / 1000;
  const byModule = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  for (const node of profile.nodes) {
    const hits = node.hitCount ?? 0;
    if (hits === 0 || node.callFrame.functionName === '(idle)' || node.callFrame.functionName === '(program)') continue;
    const ms = hits * interval;
    total += ms;
    const mod = moduleOf(node.callFrame.url, node.callFrame.functionName);
    byModule.set(dirOf(mod), (byModule.get(dirOf(mod)) ?? 0) + ms);
    const fn = `${node.callFrame.functionName || '(anonymous)'} ${mod}:${node.callFrame.lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + ms);
  }
  // Inclusive: a frame's own samples plus its callees', counted once per stack even under recursion.
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const inclusive = new Map<string, number>();
  const walk = (node: ProfileNode, onStack: Set<string>): number => {
    const fn = `${node.callFrame.functionName || '(anonymous)'} ${moduleOf(node.callFrame.url, node.callFrame.functionName)}:${node.callFrame.lineNumber + 1}`;
    const ours = node.callFrame.url.includes('/dist/src/') && !onStack.has(fn);
    const idle = node.callFrame.functionName === '(idle)' || node.callFrame.functionName === '(program)';
    if (ours) onStack.add(fn);
    let hits = idle ? 0 : (node.hitCount ?? 0) * interval;
    for (const c of node.children ?? []) hits += walk(nodes.get(c)!, onStack);
    if (ours) {
      onStack.delete(fn);
      inclusive.set(fn, (inclusive.get(fn) ?? 0) + hits);
    }
    return hits;
  };
  walk(profile.nodes[0]!, new Set());
  const top = (m: Map<string, number>, n: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n);
  return { total, byModule: top(byModule, 18), byFunction: top(byFunction, 25), inclusive: top(inclusive, 30) };
}

async function databaseUrl(kind: string): Promise<{ url: string; drop(): Promise<void> }> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'publisher-profile-'));
    return { url: `sqlite:${join(dir, 'service.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `profile_${Date.now()}`;
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

/** The bare Express baseline's CPU time per request, measured the same way. */
async function baselineCpu(): Promise<number> {
  const baseline = await start('bench/baseline-server.ts', {});
  try {
    await autocannon({ url: `${baseline.url}/hello`, connections: CONNECTIONS, amount: 2000 });
    const before = cpuMs(baseline.child);
    await autocannon({ url: `${baseline.url}/hello`, connections: CONNECTIONS, amount: READS });
    return ((cpuMs(baseline.child) - before) * 1000) / READS;
  } finally {
    await stop(baseline);
  }
}

/** Row (b)'s request, POST …/contents with `body`, as autocannon sends it. */
const createContents = (url: string, ws: string, key: string, body: string) =>
  ({ url: `${url}/api/v1/workspaces/${ws}/contents`, method: 'POST' as const, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });

/**
 * The read profiled (`PROFILE_READ`): `rest` is row (a)'s GET; `mcp-2025` and `mcp-2026` are row (e)'s
 * `tools/call get_content` in each protocol era, as raw JSON-RPC.
 */
function readRequest(read: string, url: string, key: string, contentId: string, ws: string, brandId: string) {
  const auth = { authorization: `Bearer ${key}` };
  if (read === 'rest') return { url: `${url}/api/v1/workspaces/${ws}/contents/${contentId}`, headers: auth };
  // Any GET with the key, e.g. PROFILE_PATH=/healthz: what the stack in front of a handler costs, with no SQL.
  if (read === 'path') return { url: `${url}${process.env.PROFILE_PATH ?? '/healthz'}`, headers: auth };
  if (read === 'create') {
    const body = { brand_id: brandId, target_platforms: PLATFORMS, content_type: 'text', text: 'profile' };
    return createContents(url, ws, key, JSON.stringify(body));
  }
  const params = { name: 'get_content', arguments: { content_id: contentId } };
  const json = { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  if (read === 'mcp-2025') {
    return { url: `${url}/mcp`, method: 'POST' as const, headers: { ...json, 'mcp-protocol-version': '2025-11-25' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params }) };
  }
  if (read !== 'mcp-2026') throw new Error(`PROFILE_READ must be rest, path, create, mcp-2025 or mcp-2026, not ${read}`);
  const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'profile', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} };
  return {
    url: `${url}/mcp`,
    method: 'POST' as const,
    headers: { ...json, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'get_content' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { ...params, _meta: envelope } }),
  };
}

/** The service in a child process on a fresh database, with a brand and one sandbox connection per bench network. */
async function startProfiled(kind: string, env: Record<string, string>) {
  const database = await databaseUrl(kind);
  const profileDir = mkdtempSync(join(tmpdir(), 'publisher-cpuprofile-'));
  const child = fork(new URL(import.meta.url).pathname, [], {
    env: { ...process.env, ...benchEnv(database.url, env), PROFILE_CHILD: '1' },
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const ready = await next(child);
  if (!('ready' in ready)) throw new Error('the service did not start');
  const { url, ws, key } = ready.ready;
  const brand = await api<{ id: string }>(url, key, 'POST', `/api/v1/workspaces/${ws}/brands`, { name: 'profile' });
  for (const p of PLATFORMS) await api(url, key, 'POST', `/api/v1/workspaces/${ws}/brands/${brand.id}/connections`, { platform_slug: p, mode: 'sandbox', name: p });
  return { kind, database, profileDir, child, url, ws, key, brand };
}

/** Stops the profiler and the service, drops the database; the statement counts and the profile's file. */
async function finishProfiled(profiled: Awaited<ReturnType<typeof startProfiled>>, name: string) {
  const { child, database, profileDir, kind } = profiled;
  const profileFile = join(profileDir, `${name}-${kind}.cpuprofile`);
  child.send({ report: profileFile } satisfies ToChild);
  const report = await next(child);
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
  await database.drop();
  return { counts: 'counts' in report ? report.counts : {}, profileFile };
}

async function main(): Promise<void> {
  const kind = process.argv[2] ?? 'sqlite';
  const profiled = await startProfiled(kind, { SERVICE_ROLE: 'api' });
  const { child, url, ws, key, brand } = profiled;
  const created = await api<{ content_id: string }>(url, key, 'POST', `/api/v1/workspaces/${ws}/contents`, {
    brand_id: brand.id,
    target_platforms: PLATFORMS.slice(0, 1),
    content_type: 'text',
    text: 'profile',
  });
  const request = readRequest(READ, url, key, created.content_id, ws, brand.id);
  // Warm up (JIT, statement caches), then measure the process's CPU time for exactly READS reads, unprofiled.
  await autocannon({ ...request, connections: CONNECTIONS, amount: 2000 });
  const cpuBefore = cpuMs(child);
  const plain = await autocannon({ ...request, connections: CONNECTIONS, amount: READS });
  const serviceCpuUs = ((cpuMs(child) - cpuBefore) * 1000) / READS;
  // Then count the statements of READS reads and profile them.
  child.send({ reset: true } satisfies ToChild);
  await next(child);
  const run = await autocannon({ ...request, connections: CONNECTIONS, amount: READS });
  const { counts, profileFile } = await finishProfiled(profiled, 'read');
  const baselineCpuUs = await baselineCpu();

  const title = `## ${kind}, ${READ}: ${READS} authenticated reads, ${CONNECTIONS} connections (${run.non2xx} non-2xx)`;
  const cpuLine =
    `CPU per request (process user + system time, unprofiled): service ${serviceCpuUs.toFixed(0)} µs per read, bare Express ${baselineCpuUs.toFixed(0)} µs per GET /hello, ` +
    `ratio ${(baselineCpuUs / serviceCpuUs).toFixed(2)}× (throughput at ${CONNECTIONS} connections: ${plain.requests.average.toFixed(0)} req/s, noisy on a shared machine)`;
  process.stdout.write(render(title, cpuLine, counts, READS, 'read', profileFile));
}

/** The report: statements per unit by SQL text, then the profile's self and inclusive time. */
function render(title: string, cpuLine: string, counts: Record<string, number>, units: number, unit: string, profileFile: string): string {
  const statements = Object.values(counts).reduce((a, b) => a + b, 0);
  const out: string[] = [title, '', cpuLine, ''];
  out.push(`SQL statements per ${unit}: ${(statements / units).toFixed(2)}`, '');
  for (const [sql, n] of Object.entries(counts).sort((a, b) => b[1] - a[1])) out.push(`- ${(n / units).toFixed(3)} × \`${sql}\``);
  const { total, byModule, byFunction, inclusive } = summarise(profileFile);
  out.push('', `CPU in the measured window (sampled every 100 µs): ${total.toFixed(0)} ms busy = ${((total * 1000) / units).toFixed(0)} µs per ${unit}`, '');
  out.push('| self time by module | ms | share |', '|---|---:|---:|');
  for (const [m, ms] of byModule) out.push(`| ${m} | ${ms.toFixed(0)} | ${((100 * ms) / total).toFixed(1)}% |`);
  out.push('', '| self time by function | ms | share |', '|---|---:|---:|');
  for (const [f, ms] of byFunction) out.push(`| ${f.replace(/\|/g, '\\|')} | ${ms.toFixed(0)} | ${((100 * ms) / total).toFixed(1)}% |`);
  out.push('', `| inclusive time of our own frames (src/) | µs per ${unit} |`, '|---|---:|');
  for (const [f, ms] of inclusive) out.push(`| ${f.replace(/\|/g, '\\|')} | ${((ms * 1000) / units).toFixed(1)} |`);
  out.push('', `profile: ${profileFile} (open in Chrome DevTools or speedscope)`);
  return `${out.join('\n')}\n`;
}

/** The service as row (c) sets it: one process with every role, the sandbox answering at once, confirming every 20 ms. */
const JOB_PATH_ENV = {
  SERVICE_ROLE: 'all',
  ...overrides({ SANDBOX_DELAY: '0ms', CONFIRM_INTERVAL: '20ms', WORKER_POLL: '10ms' }),
  WORKER_CONCURRENCY: '32',
  WORKER_PER_CONNECTION: '32',
};

/**
 * `PROFILE_READ=publish`: the job path. PROFILE_READS / 3 contents (three sandbox networks each) are created due a
 * few seconds ahead, with the workers of the same process idle until then; the profile and the counts then cover
 * the scheduler starting them, the claims, the sandbox's submit and publish, the confirmation (every 20 ms), the
 * outcomes and their events, until every job is final. Figures are per job.
 */
async function publishMain(kind: string): Promise<void> {
  const profiled = await startProfiled(kind, JOB_PATH_ENV);
  const { child, url, ws, key, brand } = profiled;
  const contents = Math.ceil(READS / PLATFORMS.length);
  const publishAt = new Date(Date.now() + 5_000 + contents * 5).toISOString();
  const body = JSON.stringify({ brand_id: brand.id, target_platforms: PLATFORMS, content_type: 'text', text: 'profile', publish_at: publishAt });
  const made = await autocannon({ ...createContents(url, ws, key, body), connections: 8, amount: contents });
  if (made.non2xx > 0) throw new Error(`${made.non2xx} creations failed`);
  if (Date.now() > Date.parse(publishAt) - 500) throw new Error('the contents were not all created before they were due; lower PROFILE_READS');
  child.send({ reset: true } satisfies ToChild);
  await next(child);
  const cpuBefore = cpuMs(child);
  const started = performance.now();
  for (;;) {
    await new Promise((r) => setTimeout(r, 200));
    child.send({ unfinished: true } satisfies ToChild);
    const answer = await next(child);
    if ('unfinished' in answer && answer.unfinished === 0) break;
    if (performance.now() - started > 300_000) throw new Error('the jobs did not finish within 5 minutes');
  }
  const wallS = (performance.now() - started) / 1000;
  const cpuUsPerJob = ((cpuMs(child) - cpuBefore) * 1000) / (contents * PLATFORMS.length);
  const { counts, profileFile } = await finishProfiled(profiled, 'publish');
  const jobs = contents * PLATFORMS.length;
  const title = `## ${kind}, publish: ${contents} contents × ${PLATFORMS.length} sandbox networks = ${jobs} jobs, due at one instant`;
  const cpuLine =
    `CPU per job (process user + system time, from the due instant until every job is final, including the wait for it and idle polling): ${cpuUsPerJob.toFixed(0)} µs; ` +
    `${jobs} jobs in ${wallS.toFixed(1)} s = ${(jobs / wallS).toFixed(0)} jobs/s`;
  process.stdout.write(render(title, cpuLine, counts, jobs, 'job', profileFile));
}

/**
 * `PROFILE_READ=flow`: row (c)'s path as a whole. With the service set as row (c) sets it, 16 clients create
 * PROFILE_READS / 3 contents to publish now (three sandbox networks each) back to back, and each content's
 * `content.published` reaches a local receiver; counts and profile cover the creations, the claims, the three
 * steps of every job, the outcomes and the deliveries, until the last webhook arrives. Figures are per content.
 */
async function flowMain(kind: string): Promise<void> {
  const profiled = await startProfiled(kind, { ...JOB_PATH_ENV, ALLOW_LOCAL_URLS: 'true' });
  const { child, url, ws, key, brand } = profiled;
  let arrived = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      arrived += 1;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  await api(url, key, 'POST', `/api/v1/workspaces/${ws}/webhooks`, {
    url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
    enabled_events: ['content.published'],
  });
  const contents = Math.ceil(READS / PLATFORMS.length);
  const body = JSON.stringify({ brand_id: brand.id, target_platforms: PLATFORMS, content_type: 'text', text: 'profile' });
  const post = createContents(url, ws, key, body);
  const untilArrived = async (n: number) => {
    const started = performance.now();
    while (arrived < n) {
      await new Promise((r) => setTimeout(r, 20));
      if (performance.now() - started > 300_000) throw new Error(`${arrived} of ${n} webhooks arrived within 5 minutes`);
    }
  };
  // Warm up (JIT, statement caches) on the same path.
  await autocannon({ ...post, connections: 16, amount: 300 });
  await untilArrived(300);
  child.send({ reset: true } satisfies ToChild);
  await next(child);
  const cpuBefore = cpuMs(child);
  const started = performance.now();
  const made = await autocannon({ ...post, connections: 16, amount: contents });
  if (made.non2xx > 0) throw new Error(`${made.non2xx} creations failed`);
  await untilArrived(300 + contents);
  const wallS = (performance.now() - started) / 1000;
  const cpuUsPerContent = ((cpuMs(child) - cpuBefore) * 1000) / contents;
  const { counts, profileFile } = await finishProfiled(profiled, 'flow');
  receiver.close();
  const title = `## ${kind}, flow: ${contents} contents × ${PLATFORMS.length} sandbox networks, created by 16 clients, until each content.published arrived`;
  const cpuLine = `CPU per content (process user + system time, creation to webhook, including idle polling): ${cpuUsPerContent.toFixed(0)} µs; ${contents} contents in ${wallS.toFixed(1)} s = ${(contents / wallS).toFixed(0)} contents/s`;
  process.stdout.write(render(title, cpuLine, counts, contents, 'content', profileFile));
}

if (process.env.PROFILE_CHILD === '1') await serve();
else if (READ === 'publish') await publishMain(process.argv[2] ?? 'sqlite');
else if (READ === 'flow') await flowMain(process.argv[2] ?? 'sqlite');
else await main();
