import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { connect } from '../db/connect.js';
import { sandboxPostsPerJob } from '../db/repositories/sandbox.repo.js';
import { ledgerSum } from '../db/repositories/wallet.repo.js';

/**
 * Crash safety at scale: three service processes on one PostgreSQL, N contents to three sandbox platforms each
 * (paid by the plan, then by credits), one process SIGKILLed mid-run and restarted. Reports whether every job
 * ended final, whether any job posted twice, whether every content event reached the receiver (and how many
 * duplicates it saw), and whether wallet and meters add up.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SECRET_KEY = '0f'.repeat(32);
const PLATFORMS = ['facebook', 'threads', 'linkedin'];

export interface ChaosReport {
  contentsRequested: number;
  contents: number;
  jobs: number;
  jobsNotFinal: number;
  jobsNotPublished: number;
  jobsPostedTwice: number;
  contentEvents: number;
  eventsDelivered: number;
  eventsMissing: number;
  duplicateDeliveries: number;
  walletConsistent: boolean;
  metersConsistent: boolean;
  seconds: number;
}

interface Proc {
  child: ChildProcess;
  url: string;
  out: string;
}

function run(entry: string, args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', entry, ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
}

async function startProcess(env: Record<string, string>): Promise<Proc> {
  const child = run('src/main.ts', [], env);
  let out = '';
  child.stderr?.resume();
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /Listening on (\S+)/.exec(out);
      if (m?.[1]) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`service exited with ${code}`)));
  });
  return { child, url, get out() { return out; } } as Proc;
}

async function cli(args: string[], env: Record<string, string>): Promise<string> {
  const child = run('src/cli.ts', args, env);
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.resume();
  const [code] = (await once(child, 'exit')) as [number];
  if (code !== 0) throw new Error(`cli ${args.join(' ')} failed with ${code}`);
  return out;
}

async function stop(p: Proc, signal: NodeJS.Signals): Promise<void> {
  if (p.child.exitCode !== null) return;
  const exited = once(p.child, 'exit');
  p.child.kill(signal);
  await exited;
}

export async function runChaos(options: { databaseUrl: string; contents: number; log?: (line: string) => void }): Promise<ChaosReport> {
  const log = options.log ?? (() => undefined);
  const started = Date.now();
  const received = new Map<string, number>();
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const id = (JSON.parse(body) as { id: string }).id;
      received.set(id, (received.get(id) ?? 0) + 1);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

  const env = {
    PORT: '0',
    LOG_LEVEL: 'error',
    DATABASE_URL: options.databaseUrl,
    SECRET_KEY,
    ALLOW_LOCAL_URLS: 'true',
    SANDBOX_DELAY_MS: '20',
    CONFIRM_INTERVAL_MS: '100',
    WORKER_POLL_MS: '25',
    JOB_LEASE_MS: '3000',
    JOB_RETRY_DELAYS_MS: '100',
    RATE_LIMIT_PER_MINUTE: '1000000',
    WEBHOOK_TIMEOUT_MS: '3000',
  };
  const db = connect({ dialect: 'postgres', connectionString: options.databaseUrl }, { poolSize: 2 });
  const procs: Proc[] = [];
  try {
    procs.push(await startProcess(env));
    procs.push(await startProcess(env), await startProcess(env));
    const ws = JSON.parse(await cli(['workspace', 'create', '--name', 'chaos', '--json'], env)) as { workspace_id: string; api_key: string };
    // The plan covers the first publications, credits the rest (modo automatico): both paths run under the kill.
    await cli(['workspace', 'plan', '--workspace', ws.workspace_id, '--plan', 'free'], env);
    // Enough for everything beyond the plan at the default prices (2 a publication, 1 a content).
    await cli(['credits', 'grant', '--workspace', ws.workspace_id, '--amount', String(options.contents * (PLATFORMS.length * 2 + 1))], env);
    const call = async (p: Proc, method: string, path: string, body?: unknown, idempotencyKey?: string) => {
      const res = await fetch(`${p.url}/api/v1/workspaces/${ws.workspace_id}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${ws.api_key}`,
          'content-type': 'application/json',
          ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const brand = await call(procs[0]!, 'POST', '/brands', { name: 'chaos' });
    for (const platform of PLATFORMS) await call(procs[0]!, 'POST', `/brands/${brand.body.id as string}/connections`, { platform_slug: platform, mode: 'sandbox', name: platform });
    await call(procs[0]!, 'POST', '/webhooks', { url: receiverUrl, description: 'chaos', enabled_events: ['content.published', 'content.partial', 'content.failed'] });

    let sent = 0;
    const total = options.contents * PLATFORMS.length;
    const killAt = Math.floor(total / 3);
    const count = async (where: string) =>
      Number((await db.kysely.selectFrom('jobs').select((eb) => eb.fn.countAll().as('n')).where('status', '=', where).executeTakeFirst())?.n ?? 0);
    const watcher = (async () => {
      while ((await count('published')) < killAt) await new Promise((r) => setTimeout(r, 50));
      log(`SIGKILL process 2 with ${await count('published')} of ${total} jobs published`);
      await stop(procs[1]!, 'SIGKILL');
      procs[1] = await startProcess(env);
      log('process 2 restarted');
    })();
    await Promise.all(
      Array.from({ length: 12 }, async (_, worker) => {
        while (sent < options.contents) {
          const i = sent++;
          // Round-robin over the processes; the one being killed refuses connections for a moment.
          for (let attempt = 0; attempt < 20; attempt++) {
            const p = procs[(i + worker + attempt) % procs.length]!;
            try {
              // The key makes a retry after a lost answer (the killed process) a replay, not a second content.
              const res = await call(p, 'POST', '/contents', { brand_id: brand.body.id, target_platforms: PLATFORMS, content_type: 'text', text: `chaos ${i}`, modo: 'automatico' }, `chaos-${i}`).catch(() => null);
              if (res?.status === 201) break;
            } catch {
              /* try another process */
            }
          }
        }
      }),
    );
    await watcher;

    const deadline = Date.now() + Math.max(120_000, options.contents * 200);
    for (;;) {
      const open = Number(
        (await db.kysely.selectFrom('jobs').select((eb) => eb.fn.countAll().as('n')).where('status', 'not in', ['published', 'failed']).executeTakeFirst())?.n ?? 0,
      );
      const pending = Number((await db.kysely.selectFrom('deliveries').select((eb) => eb.fn.countAll().as('n')).where('status', '=', 'pending').executeTakeFirst())?.n ?? 0);
      if (open === 0 && pending === 0) break;
      if (Date.now() > deadline) {
        log(`gave up waiting: ${open} jobs open, ${pending} deliveries pending`);
        break;
      }
      await new Promise((r) => setTimeout(r, 200));
    }

    const jobs = await db.kysely.selectFrom('jobs').select(['id', 'status']).execute();
    const posts = await sandboxPostsPerJob(db.kysely);
    const events = await db.kysely.selectFrom('events').select('id').where('type', 'like', 'content.%').execute();
    const contentsCount = (await db.kysely.selectFrom('contents').select('id').where('workspace_id', '=', ws.workspace_id).execute()).length;
    const sum = await ledgerSum(db.kysely, ws.workspace_id);
    const batches = await db.kysely.selectFrom('credit_batches').select('remaining').where('workspace_id', '=', ws.workspace_id).execute();
    const remaining = batches.reduce((s, b) => s + Number(b.remaining), 0);
    const spent = (await db.kysely.selectFrom('credit_ledger').select('amount').where('workspace_id', '=', ws.workspace_id).where('kind', '=', 'spend').execute()).reduce(
      (s, l) => s - Number(l.amount),
      0,
    );
    const meters = await db.kysely.selectFrom('meter_counters').select(['meter', 'used']).where('workspace_id', '=', ws.workspace_id).execute();
    const used = (m: string) => Number(meters.find((r) => r.meter === m)?.used ?? 0);
    // Default prices: 2 credits a publication, 1 a content. Whatever the plan did not cover was paid in credits.
    const expectedSpend = 2 * (contentsCount * PLATFORMS.length - used('publicacoes')) + (contentsCount - used('criacao_de_conteudos'));

    return {
      contentsRequested: options.contents,
      contents: contentsCount,
      jobs: jobs.length,
      jobsNotFinal: jobs.filter((j) => j.status !== 'published' && j.status !== 'failed').length,
      jobsNotPublished: jobs.filter((j) => j.status !== 'published').length,
      jobsPostedTwice: posts.filter((p) => p.posts > 1).length,
      contentEvents: events.length,
      eventsDelivered: events.filter((e) => received.has(e.id)).length,
      eventsMissing: events.filter((e) => !received.has(e.id)).length,
      duplicateDeliveries: [...received.values()].reduce((s, n) => s + (n - 1), 0),
      walletConsistent: sum === remaining && remaining >= 0,
      metersConsistent: spent === expectedSpend && used('criacao_de_conteudos') <= contentsCount,
      seconds: Math.round((Date.now() - started) / 1000),
    };
  } finally {
    await Promise.all(procs.map((p) => stop(p, 'SIGTERM')));
    await db.close();
    await new Promise<void>((r) => receiver.close(() => r()));
  }
}
