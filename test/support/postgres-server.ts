import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A PostgreSQL server of the test's own, which the test may stop and start again. */
export interface OwnPostgres {
  /** postgres://postgres@127.0.0.1:<port>/postgres (trust auth). */
  url: string;
  /** `pg_ctl stop -m immediate`: the server dies as on a crash, every connection cut. */
  kill(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and removes its files. */
  remove(): Promise<void>;
}

/** The directory of PostgreSQL's server programs (initdb, pg_ctl), or null when none is installed. */
export function postgresBinaries(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  for (const version of readdirSync(root).sort().reverse()) {
    const bin = join(root, version, 'bin');
    if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'pg_ctl'))) return bin;
  }
  return null;
}

/** Why a test of an own server cannot run here, or null when it can. */
export function ownPostgresUnavailable(): string | null {
  if (postgresBinaries() === null) return 'no PostgreSQL server programs (initdb, pg_ctl) under /usr/lib/postgresql';
  if (process.getuid?.() !== 0 && process.env.USER !== 'postgres') return 'initdb must run as the postgres user (tests run as root use runuser)';
  return null;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * initdb in a fresh directory and a server on a free loopback port. PostgreSQL refuses to run as root, so as root
 * (how the tests run here) its programs run as the `postgres` user in a directory that user owns.
 */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  const bin = postgresBinaries();
  if (bin === null) throw new Error('no PostgreSQL server programs');
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'own-pg-'));
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const pgProgram = (program: string, args: string[]) =>
    asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, program), ...args]) : run(join(bin, program), args);
  const data = join(dir, 'data');
  await pgProgram('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const options = `-c listen_addresses=127.0.0.1 -p ${port} -c unix_socket_directories=${dir} -c fsync=off -c max_connections=100`;
  const start = async () => {
    await pgProgram('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'server.log'), '-w', '-t', '30', 'start']);
  };
  const stop = (mode: 'immediate' | 'fast') => pgProgram('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']).then(() => undefined);
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    kill: () => stop('immediate'),
    start,
    async remove() {
      await stop('immediate').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
