import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import autocannon from 'autocannon';

/** Shared pieces of the benchmarks: processes on loopback, load, latency summaries, peak memory. */

/** The sandbox networks every bench content targets: one text, three networks. */
export const PLATFORMS = ['facebook', 'threads', 'linkedin'];

export interface Started {
  child: ChildProcess;
  url: string;
  stdout: string;
}

/** The Node options `npm start` runs the service with (its heap ceiling), read from package.json's start script. */
function startFlags(): string[] {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } };
  const words = pkg.scripts.start.split(/\s+/);
  if (words[0] !== 'node' || words.at(-1) !== 'dist/src/main.js') throw new Error(`unexpected start script: ${pkg.scripts.start}`);
  return words.slice(1, -1);
}

export async function start(entry: string, env: Record<string, string>): Promise<Started> {
  // The service runs as deployed: compiled JavaScript on plain Node, with the flags `npm start` gives it
  // (`npm run bench` builds first).
  const args = entry === 'src/main.ts' ? [...startFlags(), 'dist/src/main.js'] : ['--import', 'tsx', entry];
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'ignore'] });
  let stdout = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      stdout += d.toString();
      const m = /Listening on (\S+)/.exec(stdout);
      if (m?.[1]) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`${entry} exited with ${code}`)));
  });
  await new Promise((r) => setTimeout(r, 300));
  return { child, url, get stdout() { return stdout; } } as Started;
}

/** Peak resident memory of a process so far (Linux VmHWM), in MB. */
export function peakRssMb(child: ChildProcess): number {
  const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

export async function stop(s: Started): Promise<void> {
  if (s.child.exitCode !== null) return;
  const exited = once(s.child, 'exit');
  s.child.kill('SIGTERM');
  await exited;
}

export interface LoadFigures {
  rps: number;
  /** Mean latency in ms, fractional: autocannon's percentiles are whole milliseconds, too coarse near 1–3 ms. */
  mean: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

export async function load(
  url: string,
  options: { seconds: number; connections: number; method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string },
): Promise<LoadFigures> {
  const result = await autocannon({
    url,
    method: options.method ?? 'GET',
    headers: options.headers ?? {},
    ...(options.body === undefined ? {} : { body: options.body }),
    connections: options.connections,
    duration: options.seconds,
  });
  return { rps: result.requests.average, mean: result.latency.mean, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors, non2xx: result.non2xx };
}

/**
 * CPU time a process has used so far, in ms: the sum over its threads of the scheduler's on-CPU time (Linux
 * /proc/<pid>/task/<tid>/schedstat, in nanoseconds). /proc/<pid>/stat counts in 10 ms ticks, too coarse for a
 * block of calls of about a millisecond each. Threads that ended are not counted; a Node service keeps its
 * threads for its life.
 */
export function cpuMs(child: ChildProcess): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${child.pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${child.pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return ns / 1e6;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export async function api<T = Record<string, unknown>>(base: string, key: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : {}) as T;
}

/** Environment for a benchmark server: no plan or rate ceilings in the way, quiet logs. */
export function benchEnv(databaseUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  const huge = 1_000_000_000;
  return {
    PORT: '0',
    LOG_LEVEL: 'silent',
    DATABASE_URL: databaseUrl,
    SECRET_KEY: 'ab'.repeat(32),
    RATE_LIMIT_PER_MINUTE: String(huge),
    PLANS_JSON: JSON.stringify({ default: { brands: huge, connections: huge, media_storage: huge, webhooks: huge, inspiration_library: huge, criacao_de_conteudos: huge, publicacoes: huge } }),
    ...extra,
  };
}
