import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`), installed with the Node version it
 * needs into test/conformance/node_modules, apart from the service's own dependencies: its `node` package has a
 * `node` bin that would shadow the project's Node 20 in every npm script if it were a root dependency.
 */

const HERE = dirname(fileURLToPath(import.meta.url));
const NODE_MODULES = join(HERE, 'node_modules');
/** Node 22 from the npm package `node` (the suite imports `fs.globSync`, which Node 20 lacks). */
const NODE_22 = join(NODE_MODULES, '.bin', 'node');
const CLI = join(NODE_MODULES, '@modelcontextprotocol', 'conformance', 'dist', 'index.js');

interface Lockfile {
  packages: Record<string, { version?: string; integrity?: string }>;
}

function readLock(file: string): Lockfile | undefined {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Lockfile) : undefined;
}

/**
 * Whether node_modules holds exactly what package-lock.json names: npm records what it installed in
 * node_modules/.package-lock.json, whoever ran it (CI's install step or an earlier run of this test).
 */
function installed(): boolean {
  const wanted = readLock(join(HERE, 'package-lock.json'));
  const present = readLock(join(NODE_MODULES, '.package-lock.json'));
  if (wanted === undefined || present === undefined || !existsSync(NODE_22) || !existsSync(CLI)) return false;
  const names = Object.keys(wanted.packages).filter((name) => name !== '');
  if (names.length !== Object.keys(present.packages).length) return false;
  return names.every((name) => {
    const want = wanted.packages[name]!;
    const have = present.packages[name];
    return have !== undefined && have.version === want.version && have.integrity === want.integrity;
  });
}

/**
 * Installs the suite from test/conformance/package-lock.json unless node_modules already holds exactly that (CI
 * installs it right after the root `npm ci`; after a plain `npm ci && npm test` it is installed here).
 */
export async function ensureConformanceSuite(): Promise<void> {
  if (installed()) return;
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  await promisify(execFile)(npm, ['ci', '--prefix', HERE, '--loglevel=error', '--no-audit', '--no-fund'], { maxBuffer: 16 * 1024 * 1024 });
  const version = (await promisify(execFile)(NODE_22, ['--version'])).stdout.trim();
  if (!/^v22\./.test(version)) throw new Error(`test/conformance installed Node ${version}, expected 22.x`);
  if (!installed()) throw new Error('npm ci did not install what test/conformance/package-lock.json names');
}

export type CheckStatus = 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO';

/** One entry of a scenario's checks.json, as the suite writes it. */
export interface Check {
  id: string;
  name: string;
  description: string;
  status: CheckStatus;
  errorMessage?: string;
  details?: Record<string, unknown>;
}

export interface ScenarioResult {
  scenario: string;
  checks: Check[];
}

export interface SuiteRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** In the order the suite ran them. */
  scenarios: ScenarioResult[];
}

/**
 * Reads what a `server` or `authorization` run reported: each `=== Running scenario: X ===` block names the
 * directory of its checks.json. A scenario that threw has no checks.json (the suite only logs it to stderr);
 * it is reported here as one failing check carrying that log line.
 */
export function scenarioResults(stdout: string, stderr: string): ScenarioResult[] {
  const blocks = stdout.split(/^=== Running scenario: /m).slice(1);
  return blocks.map((block) => {
    const scenario = block.slice(0, block.indexOf(' ===')).trim();
    const saved = /^Results saved to (.+)$/m.exec(block)?.[1];
    if (saved !== undefined) return { scenario, checks: JSON.parse(readFileSync(join(saved.trim(), 'checks.json'), 'utf8')) as Check[] };
    const thrown = stderr.split('\n').find((line) => line.startsWith(`Failed to run scenario ${scenario}:`)) ?? 'no checks.json was written';
    return { scenario, checks: [{ id: scenario, name: scenario, description: 'The scenario ran to completion', status: 'FAILURE', errorMessage: thrown }] };
  });
}

export interface RunOptions {
  /** Sees each line of the suite's standard output as it is printed (the authorization-code scenario prints the
   * URL a user must open, then waits for the callback). */
  onLine?: (line: string) => void;
  /** Ends the suite's process (it waits up to 5 minutes for an authorization callback that may never come). */
  signal?: AbortSignal;
}

/** Runs the suite's CLI on Node 22 with `args`. */
export function runConformance(args: string[], { onLine = () => {}, signal }: RunOptions = {}): Promise<SuiteRun> {
  const env = { ...process.env };
  // The test runner's loaders and flags are meant for the Node 20 that runs the service, not for the suite.
  delete env.NODE_OPTIONS;
  const child = spawn(NODE_22, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'], ...(signal === undefined ? {} : { signal }) });
  let stdout = '';
  let stderr = '';
  let pending = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) onLine(line);
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    child.on('error', (err) => {
      if (err.name === 'AbortError') return; // 'close' follows with the killed process's status
      reject(err);
    });
    child.on('close', (code) => resolve({ code, stdout, stderr, scenarios: scenarioResults(stdout, stderr) }));
  });
}

/** Every server scenario the suite knows, with its era tags as `list` prints them (`[2025-06-18,2025-11-25]`). */
export async function listServerScenarios(): Promise<Map<string, string[]>> {
  const { stdout } = await promisify(execFile)(NODE_22, [CLI, 'list', '--server']);
  const scenarios = new Map<string, string[]>();
  for (const match of stdout.matchAll(/^\s+- (\S+) \[([^\]]*)\]$/gm)) scenarios.set(match[1]!, match[2]!.split(','));
  return scenarios;
}
