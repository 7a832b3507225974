import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';

/**
 * Benchmarks, each reported as a ratio against a baseline measured in the same run: here, an authenticated read
 * of the service (API key lookup, rate-limit upsert, workspace check, query) against a bare Express hello-world.
 * Everything runs on loopback; the load generator runs in this process, each server in its own.
 */

const DURATION_S = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);

interface Started {
  child: ChildProcess;
  url: string;
  stdout: string;
}

async function start(entry: string, env: Record<string, string>): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
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
  return { child, url, stdout };
}

async function stop(s: Started): Promise<void> {
  const exited = once(s.child, 'exit');
  s.child.kill('SIGTERM');
  await exited;
}

interface Figures {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

async function load(url: string, headers: Record<string, string> = {}): Promise<Figures> {
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration: DURATION_S });
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'publisher-bench-'));
  const rows: { name: string; f: Figures }[] = [];
  try {
    const baseline = await start('bench/baseline-server.ts', {});
    await load(`${baseline.url}/hello`); // warm-up
    rows.push({ name: 'baseline: bare Express 5 GET /hello', f: await load(`${baseline.url}/hello`) });
    await stop(baseline);

    const service = await start('src/main.ts', {
      PORT: '0',
      LOG_LEVEL: 'silent',
      DATABASE_URL: `sqlite:${join(dir, 'service.db')}`,
      RATE_LIMIT_PER_MINUTE: '1000000000',
    });
    const ws = /(ws_[0-9a-z]{20})/.exec(service.stdout)?.[1];
    const key = /(svc_live_[0-9a-f]{32})/.exec(service.stdout)?.[1];
    if (!ws || !key) throw new Error('the service did not print its first key');
    const readUrl = `${service.url}/api/v1/workspaces/${ws}/api-keys`;
    const auth = { authorization: `Bearer ${key}` };
    await load(readUrl, auth);
    rows.push({ name: '(a) authenticated read, SQLite: GET /api/v1/workspaces/{wsId}/api-keys', f: await load(readUrl, auth) });
    await stop(service);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const base = rows[0]!.f;
  const table = [
    '| Benchmark | req/s | ratio to baseline | p50 ms | p99 ms | p99 ratio | errors | non-2xx |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      ({ name, f }) =>
        `| ${name} | ${f.rps.toFixed(0)} | ${(f.rps / base.rps).toFixed(2)} | ${f.p50} | ${f.p99} | ${(f.p99 / Math.max(1, base.p99)).toFixed(2)} | ${f.errors} | ${f.non2xx} |`,
    ),
  ].join('\n');
  process.stdout.write(`${table}\n`);

  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${process.platform}`;
  writeFileSync(
    join('bench', 'RESULTS.md'),
    `# Benchmark results\n\nMachine: ${machine}\nCommand: \`npm run bench\` (autocannon, ${CONNECTIONS} connections, ${DURATION_S} s per figure after a warm-up of the same length; servers in their own processes on loopback)\nDate: ${new Date().toISOString()}\n\n${table}\n\nRatios compare against the baseline measured in the same run; absolute figures vary by machine.\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
