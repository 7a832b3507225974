import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { testDatabaseKinds } from './databases.js';
import { TEST_SECRET_KEY } from './server.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface ServiceProcess {
  child: ChildProcess;
  /** Where it listens, parsed from its first line. */
  url: string;
  stdout(): string;
  stderr(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * How node runs an entry of the project (`src/main.ts`): its compiled JavaScript when the run built the service
 * (TEST_BUILD_DIR, test/support/global-build.ts), as `npm start` does; else the TypeScript through tsx.
 */
function nodeArgs(entry: string): string[] {
  const build = process.env.TEST_BUILD_DIR;
  return build ? [join(build, 'dist', entry.replace(/\.ts$/, '.js'))] : ['--import', 'tsx', entry];
}

/** Runs an entry of the project (src/main.ts, src/cli.ts) as a real child process. */
export function runEntry(entry: string, args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [...nodeArgs(entry), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Collects a child's output and its exit code. */
export async function runToEnd(entry: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = runEntry(entry, args, env);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

/** Starts `src/main.ts` and resolves once it prints its listening address. */
export async function startServiceProcess(env: Record<string, string>): Promise<ServiceProcess> {
  const child = runEntry('src/main.ts', [], { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env });
  let out = '';
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start: ${err}`)), 60_000);
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const match = /Listening on (\S+)/.exec(out);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code}: ${err}`));
    });
  });
  return {
    child,
    url,
    stdout: () => out,
    stderr: () => err,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null) return child.exitCode;
      const exited = once(child, 'exit') as Promise<[number | null]>;
      child.kill(signal);
      const [code] = await exited;
      return code;
    },
  };
}

/** How an MCP client spawns the stdio door (`src/mcp-stdio.ts`) acting with one API key. */
export interface StdioServerParams {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  stderr: 'pipe';
}

/**
 * A fresh SQLite database with one workspace made by the CLI, and the parameters that spawn the stdio door as
 * that workspace; the database is dropped when `use` ends.
 */
export async function withStdioWorkspace(name: string, use: (server: StdioServerParams) => Promise<void>): Promise<void> {
  const sqlite = testDatabaseKinds().find((k) => k.name === 'sqlite');
  if (sqlite === undefined) throw new Error('no SQLite test database kind');
  const db = await sqlite.create();
  const env = { DATABASE_URL: db.url, SECRET_KEY: TEST_SECRET_KEY, LOG_LEVEL: 'info' };
  try {
    const created = await runToEnd('src/cli.ts', ['workspace', 'create', '--name', name, '--json'], env);
    if (created.code !== 0) throw new Error(`workspace create: ${created.stderr}`);
    const { api_key } = JSON.parse(created.stdout) as { api_key: string };
    await use({
      command: process.execPath,
      args: nodeArgs('src/mcp-stdio.ts'),
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env, PUBLISHER_API_KEY: api_key },
      stderr: 'pipe',
    });
  } finally {
    await db.drop();
  }
}
