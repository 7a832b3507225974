import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { adminQuery } from './databases.js';

/**
 * vitest globalSetup: ONE PostgreSQL database migrated once per run, which every suite's database copies
 * (`CREATE DATABASE … TEMPLATE …`, test/support/databases.ts) instead of running every migration again.
 * The migration runs through the CLI's `migrate`, the door an operator uses. Nothing to do without
 * TEST_DATABASE_URL. Each vitest project runs its global setups, so the template is shared between them.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

interface Shared {
  users: number;
  made: Promise<{ name: string; drop(): Promise<void> } | null>;
}
const KEY = Symbol.for('publisher.test.postgres-template');
const shared = globalThis as typeof globalThis & { [KEY]?: Shared };

async function makeTemplate(): Promise<{ name: string; drop(): Promise<void> } | null> {
  const baseUrl = process.env.TEST_DATABASE_URL;
  if (!baseUrl) return null;
  const url = new URL(baseUrl);
  const name = `${decodeURIComponent(url.pathname.slice(1)) || 'test'}_tpl_${randomBytes(6).toString('hex')}`;
  await adminQuery(baseUrl, `create database "${name}"`);
  url.pathname = `/${encodeURIComponent(name)}`;
  const drop = () => adminQuery(baseUrl, `drop database if exists "${name}" with (force)`);
  try {
    await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'migrate'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: url.toString(), SECRET_KEY: '0f'.repeat(32), LOG_LEVEL: 'warn' },
    });
  } catch (err) {
    await drop();
    throw err;
  }
  return { name, drop };
}

export async function setup(): Promise<void> {
  const state = (shared[KEY] ??= { users: 0, made: makeTemplate() });
  state.users += 1;
  const template = await state.made;
  // Read by databases.ts in the test workers, which are started after the global setups.
  if (template) process.env.TEST_DATABASE_TEMPLATE = template.name;
}

export async function teardown(): Promise<void> {
  const state = shared[KEY];
  if (state === undefined || --state.users > 0) return;
  delete shared[KEY];
  delete process.env.TEST_DATABASE_TEMPLATE;
  await (await state.made)?.drop();
}
