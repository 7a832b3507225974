import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { connect } from '../db/connect.js';
import { sandboxPostsPerJob } from '../db/repositories/sandbox.repo.js';
import { ledgerSum } from '../db/repositories/wallet.repo.js';
import { PLATFORMS } from './lib.js';
import { overrides } from '../test/support/overrides.js';

/**
 * Crash safety at scale: three service processes on one PostgreSQL, N contents to three sandbox platforms each
 * (paid by the plan, then by credits), one process SIGKILLed mid-run and restarted. Reports whether every job
 * ended final, whether any job posted twice, whether every content event reached the receiver (and how many
 * duplicates it saw), and whether wallet and meters add up.
 *
 * With `scheduled`, a second phase follows: that many contents due one every SCHEDULE_STEP_MS, and a full outage
 * (all three processes SIGKILLed, down OUTAGE_MS, restarted) ten contents into their window, so some are due while
 * a process is mid-start, some while nothing runs, some just after the restart. Each must publish once and never
 * early, or, when it was due longer than SCHEDULE_GRACE before the restarted scheduler saw it, fail
 * `schedule_missed` (and only then).
 *
 * With `media`, every process is a host of its own (its own MEDIA_DIR) sharing one media store (`media.env`, an
 * S3-compatible bucket): uploads go through the first process, one content in ten is a photo of one of them,
 * published by whichever process claims its jobs, and at the end every process must serve every upload's bytes
 * (from the signed address its media list gives) while no host keeps an upload on its own disk.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SECRET_KEY = '0f'.repeat(32);

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
  /** The scheduled phase (zero when not run). */
  scheduled: number;
  /** Scheduled contents published, every job once. */
  scheduledPublished: number;
  /** Of those, due while every process was down and published late within the grace. */
  scheduledPublishedLate: number;
  /** Scheduled contents whose jobs all failed `schedule_missed`. */
  scheduledMissed: number;
  /** Jobs failed `schedule_missed` that were within the grace when they were failed: must be 0. */
  missedWithinGrace: number;
  /** Scheduled jobs neither published nor failed `schedule_missed`: must be 0. */
  scheduledOtherOutcome: number;
  /** Scheduled jobs handed to their network before publish_at: must be 0. */
  scheduledEarly: number;
  /** From the kill of all three processes to all three listening again. */
  outageSeconds: number;
  /** Uploads made (zero without `media`). */
  mediaUploads: number;
  /** Reads of an upload through a process's media list that failed or gave other bytes: must be 0. */
  mediaReadsFailed: number;
  /** Uploads found on a host's own disk although the store is shared: must be 0. */
  uploadsOnHostDisks: number;
  seconds: number;
}

/** Photos of the two-host run: a PNG signature and some bytes of their own. */
const PHOTO_HEAD = Buffer.from('89504e470d0a1a0a', 'hex');

/** Phase two's timing: one content due every step, the outage's length, and the grace the processes run with. */
const SCHEDULE_STEP_MS = 500;
const OUTAGE_MS = 3000;
const GRACE_MS = 3000;

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

export async function runChaos(options: {
  databaseUrl: string;
  contents: number;
  scheduled?: number;
  /** Separate hosts sharing the media store `env` names; `uploads` files are used by the photo contents. */
  media?: { env: Record<string, string>; uploads: number };
  log?: (line: string) => void;
}): Promise<ChaosReport> {
  const scheduled = options.scheduled ?? 0;
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
    ...overrides({
      SANDBOX_DELAY: '20ms',
      CONFIRM_INTERVAL: '100ms',
      WORKER_POLL: '25ms',
      JOB_LEASE: '3s',
      // The requests in flight in the killed process hold their keys this long before a retry may take them over.
      IDEMPOTENCY_LEASE: '3s',
      JOB_RETRY_DELAYS: '100ms',
    }),
    RATE_LIMIT_PER_MINUTE: '1000000',
    WEBHOOK_TIMEOUT: '3s',
    SCHEDULE_GRACE: `${GRACE_MS}ms`,
  };
  // One MEDIA_DIR per process: with a shared store, three hosts; without, the same folder as before.
  const hostDirs = options.media ? [0, 1, 2].map((i) => mkdtempSync(join(tmpdir(), `chaos-host${i}-`))) : [];
  const envOf = (i: number): Record<string, string> => (options.media ? { ...env, ...options.media.env, MEDIA_DIR: hostDirs[i]! } : env);
  const db = connect({ dialect: 'postgres', connectionString: options.databaseUrl }, { poolSize: 2 });
  const procs: Proc[] = [];
  try {
    // The first process migrates the database alone; the other two start while the workspace is set up.
    procs.push(await startProcess(envOf(0)));
    const others = Promise.allSettled([startProcess(envOf(1)), startProcess(envOf(2))]);
    let ws: { workspace_id: string; api_key: string };
    try {
      ws = JSON.parse(await cli(['workspace', 'create', '--name', 'chaos', '--json'], env)) as { workspace_id: string; api_key: string };
      // The plan covers the first publications, credits the rest (modo automatico): both paths run under the kill.
      await cli(['workspace', 'plan', '--workspace', ws.workspace_id, '--plan', 'free'], env);
      // Enough for everything beyond the plan at the default prices (2 a publication, 1 a content).
      await cli(['credits', 'grant', '--workspace', ws.workspace_id, '--amount', String((options.contents + scheduled) * (PLATFORMS.length * 2 + 1))], env);
    } finally {
      // Every process started is in `procs`, so the cleanup below stops it whatever failed.
      for (const started of await others) if (started.status === 'fulfilled') procs.push(started.value);
    }
    for (const started of await others) if (started.status === 'rejected') throw started.reason;
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

    const uploads = new Map<string, Buffer>();
    for (let i = 0; i < (options.media?.uploads ?? 0); i++) {
      const bytes = Buffer.concat([PHOTO_HEAD, randomBytes(1024 + i)]);
      const res = await fetch(`${procs[0]!.url}/api/v1/workspaces/${ws.workspace_id}/media`, { method: 'POST', headers: { authorization: `Bearer ${ws.api_key}`, 'content-type': 'image/png' }, body: bytes });
      if (res.status !== 201) throw new Error(`upload ${i}: ${res.status} ${await res.text()}`);
      uploads.set(((await res.json()) as { id: string }).id, bytes);
    }
    const mediaIds = [...uploads.keys()];
    // One content in ten is a photo of an upload, the rest text: the same count, jobs and charges either way.
    const contentBody = (i: number) =>
      mediaIds.length > 0 && i % 10 === 0
        ? { brand_id: brand.body.id, target_platforms: PLATFORMS, content_type: 'photo', text: `chaos ${i}`, media: [{ media_id: mediaIds[(i / 10) % mediaIds.length] }], modo: 'automatico' }
        : { brand_id: brand.body.id, target_platforms: PLATFORMS, content_type: 'text', text: `chaos ${i}`, modo: 'automatico' };

    let sent = 0;
    const total = options.contents * PLATFORMS.length;
    const killAt = Math.floor(total / 3);
    const count = async (where: string) =>
      Number((await db.kysely.selectFrom('jobs').select((eb) => eb.fn.countAll().as('n')).where('status', '=', where).executeTakeFirst())?.n ?? 0);
    const watcher = (async () => {
      while ((await count('published')) < killAt) await new Promise((r) => setTimeout(r, 50));
      log(`SIGKILL process 2 with ${await count('published')} of ${total} jobs published`);
      await stop(procs[1]!, 'SIGKILL');
      procs[1] = await startProcess(envOf(1));
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
              const res = await call(p, 'POST', '/contents', contentBody(i), `chaos-${i}`).catch(() => null);
              if (res?.status === 201) break;
            } catch {
              /* try another process */
            }
          }
        }
      }),
    );
    await watcher;

    let outage = { downAt: 0, upAt: 0 };
    const scheduledIds: string[] = [];
    if (scheduled > 0) {
      const first = Date.now() + 3000 + scheduled * 40;
      let next = 0;
      await Promise.all(
        Array.from({ length: 12 }, async (_, worker) => {
          while (next < scheduled) {
            const i = next++;
            const body = { brand_id: brand.body.id, target_platforms: PLATFORMS, content_type: 'text', text: `scheduled ${i}`, modo: 'automatico', publish_at: new Date(first + i * SCHEDULE_STEP_MS).toISOString() };
            const res = await call(procs[(i + worker) % procs.length]!, 'POST', '/contents', body, `scheduled-${i}`);
            if (res.status !== 201) throw new Error(`scheduled content ${i}: ${res.status} ${JSON.stringify(res.body)}`);
            scheduledIds[i] = res.body.content_id as string;
          }
        }),
      );
      if (Date.now() >= first) throw new Error('the scheduled contents were not all made before the first was due');
      // Ten contents (or a quarter) in: the rest of the window must outlast a restart on a loaded machine (~20 s).
      await new Promise((r) => setTimeout(r, first + Math.min(10, Math.floor(scheduled / 4)) * SCHEDULE_STEP_MS - Date.now()));
      outage.downAt = Date.now();
      log('SIGKILL all three processes');
      await Promise.all(procs.map((p) => stop(p, 'SIGKILL')));
      await new Promise((r) => setTimeout(r, OUTAGE_MS));
      procs.splice(0, procs.length, ...(await Promise.all(procs.map((_, i) => startProcess(envOf(i))))));
      outage = { ...outage, upAt: Date.now() };
      log(`all three restarted after ${((outage.upAt - outage.downAt) / 1000).toFixed(1)} s`);
    }

    const deadline = Date.now() + Math.max(120_000, (options.contents + scheduled) * 200);
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
    const sched = await scheduledOutcome(db, scheduledIds, outage);
    const mediaReadsFailed = await unreadableUploads(procs, ws, uploads);
    const uploadsOnHostDisks = hostDirs.reduce((n, dir) => n + readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.includes('media_')).length, 0);
    // Default prices: 2 credits a publication, 1 a content. Whatever the plan did not cover was paid in credits;
    // a missed scheduled content was never charged.
    const charged = contentsCount - sched.scheduledMissed;
    const expectedSpend = 2 * (charged * PLATFORMS.length - used('publicacoes')) + (charged - used('criacao_de_conteudos'));

    return {
      contentsRequested: options.contents + scheduled,
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
      metersConsistent: spent === expectedSpend && used('criacao_de_conteudos') <= charged,
      scheduled,
      ...sched,
      outageSeconds: Math.round((outage.upAt - outage.downAt) / 100) / 10,
      mediaUploads: uploads.size,
      mediaReadsFailed,
      uploadsOnHostDisks,
      seconds: Math.round((Date.now() - started) / 1000),
    };
  } finally {
    await Promise.all(procs.map((p) => stop(p, 'SIGTERM')));
    await db.close();
    await new Promise<void>((r) => receiver.close(() => r()));
    for (const dir of hostDirs) rmSync(dir, { recursive: true, force: true });
  }
}

/** How many (process, upload) pairs fail to give the upload's bytes through that process's media list. */
async function unreadableUploads(procs: Proc[], ws: { workspace_id: string; api_key: string }, uploads: Map<string, Buffer>): Promise<number> {
  let failed = 0;
  if (uploads.size === 0) return 0;
  for (const p of procs) {
    const res = await fetch(`${p.url}/api/v1/workspaces/${ws.workspace_id}/media?limit=100`, { headers: { authorization: `Bearer ${ws.api_key}` } });
    const listed = res.status === 200 ? ((await res.json()) as { data: { id: string; url: string }[] }).data : [];
    for (const [id, bytes] of uploads) {
      const url = listed.find((m) => m.id === id)?.url;
      const got = url === undefined ? null : await fetch(url).then(async (r) => (r.status === 200 ? Buffer.from(await r.arrayBuffer()) : null)).catch(() => null);
      if (!got?.equals(bytes)) failed++;
    }
  }
  return failed;
}

/** How phase two's contents ended, from the jobs and the sandbox's own tables. */
async function scheduledOutcome(db: ReturnType<typeof connect>, ids: string[], outage: { downAt: number; upAt: number }) {
  const none = { scheduledPublished: 0, scheduledPublishedLate: 0, scheduledMissed: 0, missedWithinGrace: 0, scheduledOtherOutcome: 0, scheduledEarly: 0 };
  if (ids.length === 0) return none;
  const jobs = await db.kysely
    .selectFrom('jobs')
    .innerJoin('contents', 'contents.id', 'jobs.content_id')
    .select(['jobs.id', 'jobs.content_id', 'jobs.status', 'jobs.error_code', 'jobs.updated_at', 'contents.publish_at'])
    .where('jobs.content_id', 'in', ids)
    .execute();
  const containers = await db.kysely.selectFrom('sandbox_containers').select(['job_id', 'created_at']).where('job_id', 'in', jobs.map((j) => j.id)).execute();
  const posts = await db.kysely.selectFrom('sandbox_posts').select('job_id').where('job_id', 'in', jobs.map((j) => j.id)).execute();
  const postsOf = (jobId: string) => posts.filter((p) => p.job_id === jobId).length;
  const publishAt = new Map(jobs.map((j) => [j.id, Number(j.publish_at)]));
  const byContent = new Map<string, typeof jobs>();
  for (const j of jobs) byContent.set(j.content_id, [...(byContent.get(j.content_id) ?? []), j]);
  const published = [...byContent.values()].filter((js) => js.every((j) => j.status === 'published' && postsOf(j.id) === 1));
  const missed = [...byContent.values()].filter((js) => js.every((j) => j.status === 'failed' && j.error_code === 'schedule_missed' && postsOf(j.id) === 0));
  return {
    scheduledPublished: published.length,
    scheduledPublishedLate: published.filter((js) => Number(js[0]!.publish_at) >= outage.downAt && Number(js[0]!.publish_at) < outage.upAt).length,
    scheduledMissed: missed.length,
    missedWithinGrace: jobs.filter((j) => j.error_code === 'schedule_missed' && Number(j.updated_at) - Number(j.publish_at) <= GRACE_MS).length,
    scheduledOtherOutcome: ids.length - published.length - missed.length,
    scheduledEarly: containers.filter((c) => Number(c.created_at) < (publishAt.get(c.job_id) ?? 0)).length,
  };
}
