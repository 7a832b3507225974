import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import pg from 'pg';
import { runChaos } from './chaos.js';
import { startLocalS3 } from '../test/support/s3.js';

/**
 * `npm run chaos`: the crash test at full size (CHAOS_CONTENTS, default 2,000 contents × 3 platforms, then
 * CHAOS_SCHEDULED, default 120, scheduled contents through a full outage) on a fresh PostgreSQL database made on
 * CHAOS_DATABASE_URL (default the local server's `test` database). CHAOS_UPLOADS (default 8; 0 for none) makes
 * each process a host of its own (own MEDIA_DIR) sharing an S3-compatible store run in this process.
 */
const admin = process.env.CHAOS_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const contents = Number(process.env.CHAOS_CONTENTS ?? 2000);
const scheduled = Number(process.env.CHAOS_SCHEDULED ?? 120);
const uploads = Number(process.env.CHAOS_UPLOADS ?? 8);
const name = `chaos_${Date.now()}`;

const client = new pg.Client({ connectionString: admin });
await client.connect();
await client.query(`create database ${name}`);
await client.end();
const url = new URL(admin);
url.pathname = `/${name}`;
const t0 = Date.now();
const s3 = uploads > 0 ? await startLocalS3() : undefined;
try {
  const report = await runChaos({ databaseUrl: url.toString(), contents, scheduled, ...(s3 ? { media: { env: s3.env, uploads } } : {}), log: (line) => process.stdout.write(`${((Date.now() - t0) / 1000).toFixed(1)} s  ${line}\n`) });
  const ok = report.contents === report.contentsRequested && report.jobsNotFinal === 0 && report.jobsPostedTwice === 0 && report.eventsMissing === 0 && report.walletConsistent && report.metersConsistent &&
    report.scheduledEarly === 0 && report.missedWithinGrace === 0 && report.scheduledOtherOutcome === 0 &&
    report.mediaReadsFailed === 0 && report.uploadsOnHostDisks === 0;
  const lines = Object.entries(report).map(([k, v]) => `| ${k} | ${String(v)} |`);
  const text = `# Chaos run\n\nCommand: \`npm run chaos\` (3 service processes on one PostgreSQL${s3 ? ', each with its own MEDIA_DIR and one shared S3-compatible media store' : ''}, one SIGKILLed at a third of the jobs and restarted; then scheduled contents due through a full outage of all three)\nMachine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}\nDate: ${new Date().toISOString()}\nVerdict: ${ok ? 'PASS' : 'FAIL'}\n\n| Measure | Value |\n|---|---|\n${lines.join('\n')}\n`;
  writeFileSync('bench/CHAOS.md', text);
  process.stdout.write(text);
  process.exitCode = ok ? 0 : 1;
} finally {
  await s3?.close();
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  await c.query(`drop database if exists ${name} with (force)`);
  await c.end();
}
