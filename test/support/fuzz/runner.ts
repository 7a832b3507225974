/**
 * The runner of an OpenAPI-driven HTTP fuzzer (OWASP API4 "unrestricted resource consumption" and API8
 * "security misconfiguration"). The fuzzer reads the served OpenAPI document (document.ts), generates inputs for
 * each operation with fast-check from the operation's schemas (arbitraries.ts) and as mutations of valid inputs
 * (mutations.ts, body-mutations.ts, slow-cases.ts), sends them (send.ts), and judges every answer:
 *
 * - never a 5xx, never a hang, never a dropped connection;
 * - a 4xx is the spec error body `{error, message, request_id}` with `request_id` equal to `X-Request-Id`, a code of
 *   the catalogue, and a status the operation documents; a 2xx matches the documented schema (judge.ts);
 * - a rejected request (and any GET) leaves the database as it was (row counts of the main tables, plus
 *   soft deletes, revocations, updates, meters and balances; database-fingerprint.ts);
 * - the server stays up (`GET /healthz` is 200 after every batch).
 *
 * Nothing here knows this service's ids or business rules: the caller passes the real ids to use in paths,
 * hints for fields whose valid values are not in the schema (e.g. a brand id), and the changes it allows.
 */
import fc from 'fast-check';
import type { Kysely } from 'kysely';
import type { Database } from '../../../db/schema.js';
import type { FuzzCase } from './case.js';
import { databaseChanges, databaseFingerprint } from './database-fingerprint.js';
import type { Operation } from './document.js';
import { isObject } from './json-path.js';
import { judge, type JudgeContext } from './judge.js';
import { type Answer, send } from './send.js';

export interface Failure {
  /** Status, code and mutation family: failures with the same signature are one finding. */
  signature: string;
  count: number;
  example: string;
}

export interface FuzzReport {
  op: Operation;
  runs: number;
  seed: number;
  ms: number;
  /** `201`, `400 validation_failed`, … → count. */
  answers: Record<string, number>;
  failures: Failure[];
}

export interface FuzzOptions {
  baseUrl: string;
  db: Kysely<Database>;
  op: Operation;
  cases: fc.Arbitrary<FuzzCase>;
  /** Run once each, before the generated cases. */
  slow?: readonly FuzzCase[];
  numRuns: number;
  seed?: number;
  /** The API key to send (it may change during a run, e.g. after a key rotation). */
  key(): string | undefined;
  judge: JudgeContext;
  /** Called before each case (e.g. to move a manual clock so updates are visible). */
  beforeCase?(): void;
  /** Called after each answer (e.g. to follow a key rotation). */
  afterAnswer?(c: FuzzCase, a: Answer): Promise<void>;
  /** Fingerprint entries a rejected case may legitimately change (e.g. an idempotency record of the rejection). */
  allowedChanges?(c: FuzzCase, a: Answer): readonly string[];
  /** GET /healthz every this many cases (and at the end). */
  healthEvery?: number;
  /** The server's own account of a 5xx (e.g. from its error log), by request id; added to the finding. */
  explain?(requestId: string): string | undefined;
}

function excerpt(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s;
}

export function describeCase(op: Operation, c: FuzzCase, url: string): string {
  const body =
    c.body === undefined || op.method === 'GET'
      ? ''
      : c.body.kind === 'json'
        ? (JSON.stringify(c.body.value) ?? '')
        : c.body.kind === 'text'
          ? c.body.text
          : c.body.kind === 'bytes'
            ? `bytes ${Buffer.from(c.body.bytes).toString('hex').slice(0, 200)}`
            : `chunked ${c.body.chunks.length} chunks`;
  const headers = { ...c.headers, ...(c.contentType !== undefined ? { 'content-type': c.contentType } : {}) };
  return [
    `${op.method} ${excerpt(url, 300)}`,
    `  case: ${c.label}${c.anonymous === true ? ' (no credential)' : ''}`,
    Object.keys(headers).length > 0 ? `  headers: ${excerpt(JSON.stringify(headers), 300)}` : '',
    body !== '' ? `  body: ${excerpt(JSON.stringify(body), 400)}` : '',
  ]
    .filter((l) => l !== '')
    .join('\n');
}

async function healthy(baseUrl: string): Promise<string | null> {
  try {
    const res = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(10_000) });
    await res.arrayBuffer();
    return res.status === 200 ? null : `GET /healthz answered ${res.status}`;
  } catch (err) {
    return `GET /healthz failed: ${(err as Error).message}`;
  }
}

/** Runs the slow cases, then `numRuns` generated cases, judging each; collects failures instead of stopping. */
export async function fuzzOperation(o: FuzzOptions): Promise<FuzzReport> {
  const started = performance.now();
  const seed = o.seed ?? (Date.now() ^ (Math.random() * 0x100000000)) | 0;
  const answers: Record<string, number> = {};
  const failures = new Map<string, Failure>();
  const healthEvery = o.healthEvery ?? 50;
  let before = await databaseFingerprint(o.db);
  let n = 0;

  const record = (signature: string, example: string) => {
    const f = failures.get(signature);
    if (f) f.count++;
    else failures.set(signature, { signature, count: 1, example });
  };

  const runCase = async (c: FuzzCase): Promise<void> => {
    o.beforeCase?.();
    const outcome = await send(o.baseUrl, o.op, c, o.key());
    const family = c.label.split(/[@=]/)[0] ?? c.label;
    if (!outcome.ok) {
      if (outcome.harness) throw new Error(`the fuzzer built a request fetch refuses (${outcome.error}):\n${describeCase(o.op, c, outcome.url)}`);
      record(`no answer (${outcome.error.slice(0, 80)}) [${family}]`, `${describeCase(o.op, c, outcome.url)}\n  → ${outcome.error}`);
      before = await databaseFingerprint(o.db);
    } else {
      const a = outcome.answer;
      const code = isObject(a.json) && typeof a.json.error === 'string' ? ` ${a.json.error}` : '';
      answers[`${a.status}${code}`] = (answers[`${a.status}${code}`] ?? 0) + 1;
      const problems = judge(o.op, c, a, o.judge);
      await o.afterAnswer?.(c, a);
      const after = await databaseFingerprint(o.db);
      const rejected = a.status < 200 || a.status >= 300;
      if (rejected || o.op.method === 'GET') {
        const changes = databaseChanges(before, after, rejected ? (o.allowedChanges?.(c, a) ?? []) : []);
        if (changes.length > 0) problems.push(`database changed: ${changes.join(', ')}`);
      }
      before = after;
      if (problems.length > 0) {
        const rid = a.headers.get('x-request-id');
        const why = a.status >= 500 && rid !== null ? o.explain?.(rid) : undefined;
        const cause = why === undefined ? '' : ` ${why.replace(/(["'`]).*?\1/g, '…').replace(/\d+/g, 'N').slice(0, 100)}`;
        const logged = why === undefined ? '' : `\n  server log: ${why}`;
        record(`${a.status}${code} [${family}]${cause}`, `${describeCase(o.op, c, a.url)}\n  → ${a.status} ${excerpt(a.text, 300)}${logged}\n  problems: ${problems.join('; ')}`);
      }
    }
    n++;
    if (n % healthEvery === 0) {
      const sick = await healthy(o.baseUrl);
      if (sick !== null) record('server unhealthy', `${sick} after ${describeCase(o.op, c, outcome.ok ? outcome.answer.url : outcome.url)}`);
    }
  };

  for (const c of o.slow ?? []) await runCase(c);
  await fc.assert(
    fc.asyncProperty(o.cases, async (c) => {
      await runCase(c);
    }),
    { numRuns: o.numRuns, seed, endOnFailure: true },
  );
  const sick = await healthy(o.baseUrl);
  if (sick !== null) record('server unhealthy', `${sick} at the end of the run`);
  return { op: o.op, runs: n, seed, ms: performance.now() - started, answers, failures: [...failures.values()] };
}

export function formatFailures(report: FuzzReport): string {
  const lines = [`${report.op.method} ${report.op.path}: ${report.failures.length} finding(s) in ${report.runs} cases (FUZZ_SEED=${report.seed})`];
  for (const f of report.failures) lines.push(`\n● ${f.signature} ×${f.count}\n${f.example}`);
  return lines.join('\n');
}

export function formatAnswers(report: FuzzReport): string {
  const answers = Object.entries(report.answers)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k}×${v}`)
    .join(', ');
  return `${report.op.id}: ${report.runs} cases in ${(report.ms / 1000).toFixed(1)} s — ${answers}`;
}
