import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig, ConfigError } from '../src/config.js';
import { builtProjectCopy, type ProjectCopy } from './support/build.js';
import { runToEnd, startServiceProcess } from './support/process.js';

describe('first start, later starts and shutdown (embedded SQLite default)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'publisher-start-'));
  const env = { DATABASE_URL: `sqlite:${join(dir, 'data', 'service.db')}` };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('prints the address, the MCP URL and a first key once; the key answers with the rate-limit headers', async () => {
    const first = await startServiceProcess(env);
    try {
      const out = first.stdout();
      expect(out).toMatch(/Listening on http:\/\/127\.0\.0\.1:\d+/);
      // The MCP URL is printed exactly as BASE_URL spells it (OAuth clients compare it with `resource`).
      const baseUrl = /\(base URL (\S+)\)/.exec(out)?.[1];
      expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(out).toContain(`MCP        ${baseUrl}/mcp (give clients this URL exactly as written: it must match BASE_URL)`);
      const metadata = (await (await fetch(`${first.url}/.well-known/oauth-protected-resource/mcp`)).json()) as { resource?: string };
      expect(metadata.resource).toBe(`${baseUrl}/mcp`);
      const key = /(svc_live_[0-9a-f]{32})/.exec(out)?.[1];
      const ws = /workspace (ws_[0-9a-z]{20})/.exec(out)?.[1];
      expect(out).toContain(`export KEY=${key} WS=${ws} BASE=${baseUrl}`);
      const res = await fetch(`${first.url}/api/v1/workspaces/${ws}/api-keys`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
      for (const h of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-request-id']) expect(res.headers.get(h)).toBeTruthy();
      // The encryption key for stored secrets was generated beside the database, readable by the owner only.
      expect(statSync(join(dir, 'data', 'secret.key')).mode & 0o077).toBe(0);
    } finally {
      expect(await first.stop('SIGTERM')).toBe(0);
    }

    const second = await startServiceProcess(env);
    try {
      expect(second.stdout()).not.toMatch(/svc_live_/);
      expect(second.stdout()).toContain('npm run cli -- key create --workspace');
      expect(second.stdout()).toContain(`The first API key is in ${join(dir, 'data', 'first-key.env')}`);
    } finally {
      expect(await second.stop('SIGTERM')).toBe(0);
    }
  }, 60_000);

  it('warns in the log at start when the configured LinkedIn version is over 11 months old', async () => {
    const linkedin = { LINKEDIN_CLIENT_ID: 'li-client', LINKEDIN_CLIENT_SECRET: 'li-secret' };
    const stale = await startServiceProcess({ ...env, ...linkedin, LINKEDIN_API_VERSION: '202401' });
    try {
      await waitFor(() => /LINKEDIN_API_VERSION 202401 is \d+ months old/.test(stale.stdout()));
      const line = stale.stdout().split('\n').find((l) => l.includes('LINKEDIN_API_VERSION 202401'));
      expect(JSON.parse(line ?? '{}')).toMatchObject({ level: 40 });
    } finally {
      expect(await stale.stop('SIGTERM')).toBe(0);
    }
    // Without a LinkedIn app the version is never sent, so nothing is said about it.
    const unused = await startServiceProcess({ ...env, LINKEDIN_API_VERSION: '202401' });
    try {
      await new Promise((r) => setTimeout(r, 500));
      expect(unused.stdout()).not.toContain('LINKEDIN_API_VERSION');
    } finally {
      expect(await unused.stop('SIGTERM')).toBe(0);
    }
  }, 60_000);

  it('cli workspace create --json prints exactly one JSON object', async () => {
    const { code, stdout } = await runToEnd('src/cli.ts', ['workspace', 'create', '--name', 'Acme', '--json'], env);
    expect(code).toBe(0);
    const parsed = JSON.parse(stdout) as Record<string, string>;
    expect(Object.keys(parsed).sort()).toEqual(['api_key', 'key_id', 'workspace_id']);
    expect(parsed.api_key).toMatch(/^svc_live_[0-9a-f]{32}$/);
    expect(stdout.trim().split('\n')).toHaveLength(1);
  }, 60_000);

  it('cli migrate reports an up-to-date schema', async () => {
    const { code, stdout } = await runToEnd('src/cli.ts', ['migrate'], env);
    expect(code).toBe(0);
    expect(stdout).toContain('up to date');
  }, 60_000);
});

describe('the first owner link, printed on first start', () => {
  const dir = mkdtempSync(join(tmpdir(), 'publisher-owner-'));
  const env = { DATABASE_URL: `sqlite:${join(dir, 'data', 'service.db')}` };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('opens a page where the first person sets their email and password and becomes the owner; it works once and is not printed again', async () => {
    const first = await startServiceProcess(env);
    try {
      const out = first.stdout();
      const link = /(http:\/\/\S+\/dashboard\/join\/[A-Za-z0-9_-]+)/.exec(out)?.[1];
      expect(link, out).toBeDefined();
      expect(out).toContain('Create the owner account');
      const key = /(svc_live_[0-9a-f]{32})/.exec(out)![1]!;
      const ws = /workspace (ws_[0-9a-z]{20})/.exec(out)![1]!;
      const path = new URL(link!).pathname;

      const page = await fetch(`${first.url}${path}`);
      const html = await page.text();
      expect(page.status).toBe(200);
      expect(html).toContain('<strong>owner</strong>');
      expect(html).toContain('name="email"');
      const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
      const cookie = /svc_join_csrf=([^;]+)/.exec(page.headers.get('set-cookie') ?? '')![1]!;
      const post = (email: string) =>
        fetch(`${first.url}${path}`, {
          method: 'POST',
          redirect: 'manual',
          headers: { cookie: `svc_join_csrf=${cookie}`, 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ csrf, as: 'new', email, password: 'the owner password', name: 'Owner' }).toString(),
        });
      const joined = await post('Owner@Example.com');
      expect(joined.status).toBe(303);
      expect(joined.headers.get('set-cookie')).toMatch(/svc_session=u\./);
      expect((await post('other@example.com')).status).toBe(410);

      const members = (await (await fetch(`${first.url}/api/v1/workspaces/${ws}/members`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: { email: string; role: string }[] };
      expect(members.data.map((m) => [m.email, m.role])).toEqual([['owner@example.com', 'owner']]);
    } finally {
      expect(await first.stop('SIGTERM')).toBe(0);
    }
    const second = await startServiceProcess(env);
    try {
      expect(second.stdout()).not.toContain('/dashboard/join/');
    } finally {
      expect(await second.stop('SIGTERM')).toBe(0);
    }
  }, 60_000);
});

describe('configuration', () => {
  it('has the documented defaults', () => {
    const c = parseConfig({});
    expect(c).toMatchObject({ port: 8080, host: '127.0.0.1', baseUrl: 'http://127.0.0.1:8080', logLevel: 'info', allowLocalUrls: false });
    expect(c.database).toEqual({ dialect: 'sqlite', file: './data/service.db', writeFailureHoldMs: 30_000 });
    expect(c.networks.linkedin.apiVersion).toBe('202610');
  });

  it('selects PostgreSQL by URL and then requires SECRET_KEY', () => {
    expect(() => parseConfig({ DATABASE_URL: 'postgres://localhost/x' })).toThrow(ConfigError);
    const c = parseConfig({ DATABASE_URL: 'postgres://localhost/x', SECRET_KEY: 'ab'.repeat(32) });
    expect(c.database.dialect).toBe('postgres');
    expect(c.secretKey?.length).toBe(32);
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['BASE_URL', 'not a url'],
    ['DATABASE_URL', 'mysql://x'],
    ['LOG_LEVEL', 'loud'],
    ['SECRET_KEY', 'short'],
    ['ALLOW_LOCAL_URLS', 'maybe'],
  ])('rejects %s=%s naming the variable', (variable, value) => {
    try {
      parseConfig({ [variable]: value });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).variable).toBe(variable);
      expect((err as Error).message.startsWith(variable)).toBe(true);
    }
  });

  it('a bad value stops the process with one line on stderr and exit code 2', async () => {
    const { code, stderr, stdout } = await runToEnd('src/main.ts', [], { PORT: 'eighty' });
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.trim().split('\n')).toHaveLength(1);
    expect(stderr).toContain('PORT');
  }, 30_000);
});

/**
 * The environment of a fresh shell: PATH and HOME only. Not the test runner's: vitest sets BASE_URL (Vite's base
 * path, "/") and a surrounding `npm test` passes its `npm_*` settings down.
 */
function shellEnv(extra: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir(), ...extra };
}

interface Started {
  child: ChildProcess;
  /** stdout and stderr interleaved as a terminal shows them. */
  output(): string;
  url: string;
  stop(): Promise<number | null>;
}

/** Runs `command` the way a person does in a shell (stderr merged into stdout), until it prints where it listens. */
async function runCommand(command: string, cwd: string, env: Record<string, string>): Promise<Started> {
  // Its own process group, so stopping it reaches npm, the shell and node alike.
  const child = spawn('bash', ['-c', `exec ${command} 2>&1`], { cwd, env: shellEnv(env), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner after 60 s: ${out}`)), 60_000);
    child.stdout?.on('data', () => {
      const match = /Listening on (\S+)/.exec(out);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited with ${code}: ${out}`));
    });
  });
  return {
    child,
    url,
    output: () => out,
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      const exited = once(child, 'exit') as Promise<[number | null]>;
      // npm may exit before the service has written its last lines: the pipe closes only when every process
      // holding it (npm, the shell, node) is gone, so the output is complete then.
      const drained = child.stdout ? once(child.stdout, 'close') : Promise.resolve();
      process.kill(-child.pid!, 'SIGTERM');
      const [[code]] = await Promise.all([exited, drained]);
      return code;
    },
  };
}

/** npm re-raises the signal its script died of, so the service's own clean stop is read from its log. */
async function stopNpm(started: Started): Promise<void> {
  await started.stop();
  expect(started.output()).toMatch(/"reason":"SIGTERM","msg":"shutting down"/);
  expect(started.output()).not.toContain('fatal');
}

async function waitFor(done: () => boolean, ms = 5_000): Promise<void> {
  const until = performance.now() + ms;
  while (!done()) {
    if (performance.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function waitForLine(started: Started, pattern: RegExp, ms = 5_000): Promise<void> {
  const until = performance.now() + ms;
  while (!pattern.test(started.output())) {
    if (performance.now() > until) throw new Error(`no line matching ${pattern} in: ${started.output()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('npm start, as a newcomer runs it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'publisher-npm-start-'));
  const env = { PORT: '0', DATABASE_URL: `sqlite:${join(dir, 'data', 'service.db')}`, LOG_LEVEL: 'info' };
  // A copy of the project of its own, as a newcomer's checkout: npm start compiles into it and the test touches its
  // sources, and neither reaches the checkout the tests run from, nor the build other files' processes run.
  let project: ProjectCopy | undefined;
  const root = () => project!.dir;
  const built = (name: string) => statSync(join(root(), 'dist', name)).mtimeMs;
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    project?.remove();
  });

  beforeAll(async () => {
    // Whatever the copy's state, `npm run build` once there (it throws when the build fails), so the starts below
    // measure an up-to-date build. Starting from the run's own build, when there is one, it only checks that.
    project = await builtProjectCopy(process.env.TEST_BUILD_DIR);
  }, 300_000);

  it('prints the banner first, then the explained runtime warning; the first key is in a 0600 file and its export lines work', async () => {
    const started = await runCommand('npm start', root(), env);
    try {
      const base = /\(base URL (\S+)\)/.exec(started.output())?.[1];
      // BASE_URL and the listen address agree by default: OAuth clients compare them as strings.
      expect(base).toBe(started.url);
      await waitForLine(started, /export KEY=/);
      const lines = started.output().split('\n');
      expect(lines[0]).toBe(`Listening on ${base} (base URL ${base})`);
      for (const [i, path] of ['/dashboard', '/mcp', '/docs', '/openapi.yaml'].entries()) expect(lines[i + 1]).toContain(` ${base}${path}`);

      const keyPath = join(dir, 'data', 'first-key.env');
      expect(started.output()).toContain(`Also saved, readable by you only, in ${keyPath}`);
      expect(statSync(keyPath).mode & 0o777).toBe(0o600);
      const exported = /export KEY=(svc_live_[0-9a-f]{32}) WS=(ws_\w+) BASE=(\S+)/.exec(started.output());
      const [, key, ws, exportedBase] = exported ?? [];
      expect(exportedBase).toBe(base);
      expect(readFileSync(keyPath, 'utf8')).toContain(`export KEY=${key}\nexport WS=${ws}\nexport BASE=${base}\n`);
      const me = await fetch(`${exportedBase}/api/v1/me`, { headers: { authorization: `Bearer ${key}` } });
      expect(((await me.json()) as { workspace: { id: string } }).workspace.id).toBe(ws);

      // No warning line comes before the banner's last line; a runtime warning is preceded by its explanation.
      const bannerEnd = lines.findIndex((l) => l.includes('api/v1/me'));
      const warnings = lines.flatMap((l, i) => (/WARN|warning/i.test(l) ? [i] : []));
      for (const i of warnings) expect(i).toBeGreaterThan(bannerEnd);
      const runtime = lines.findIndex((l) => l.includes('oidc-provider WARNING: Unsupported runtime'));
      if (runtime !== -1) expect(lines[runtime - 1]).toMatch(/^Note: the OAuth library below asks for Node\.js 22/);

      // The bare address leads to the dashboard, and browsers find an icon.
      const root = await fetch(`${base}/`, { redirect: 'manual' });
      expect(root.status).toBe(302);
      expect(root.headers.get('location')).toBe('/dashboard');
      const icon = await fetch(`${base}/favicon.ico`);
      expect(icon.status).toBe(200);
      expect(icon.headers.get('content-type')).toContain('image/svg+xml');
      // Not a terminal: request logs stay JSON lines for machines.
      await waitForLine(started, /"msg":"request"/);
    } finally {
      await stopNpm(started);
    }
  }, 120_000);

  it('when sources changed since the last build, npm start first says it is compiling, then prints the banner', async () => {
    // A source newer than the last build, as after an edit or a pull: npm itself is silent, so the compile announces itself.
    const now = new Date();
    utimesSync(join(root(), 'src', 'main.ts'), now, now);
    const started = await runCommand('npm start', root(), env);
    try {
      const lines = started.output().split('\n');
      expect(lines[0]).toBe('Compiling what changed since the last build…');
      expect(lines[1]).toMatch(/^Listening on /);
    } finally {
      await stopNpm(started);
    }
  }, 120_000);

  it('a second npm start compiles nothing and answers /healthz soon', async () => {
    const before = { main: built('src/main.js'), info: built('build.tsbuildinfo') };
    const t0 = performance.now();
    const started = await runCommand('npm start', root(), env);
    try {
      const health = await fetch(`${started.url}/healthz`);
      const elapsed = performance.now() - t0;
      expect(health.status).toBe(200);
      // Alone, this start answers in about 2 s and a full compile takes about 20 s; the suite's other files share
      // the two cores, so the bound leaves room for them while still refusing a start that compiled. The build
      // outputs left untouched are the exact check.
      expect(elapsed).toBeLessThan(15_000);
      expect({ main: built('src/main.js'), info: built('build.tsbuildinfo') }).toEqual(before);
      expect(started.output()).not.toMatch(/svc_live_/);
      expect(started.output()).toContain(`The first API key is in ${join(dir, 'data', 'first-key.env')}`);
    } finally {
      await stopNpm(started);
    }
  }, 60_000);

  it('on a terminal, request logs are one readable line each', async () => {
    // `script` gives the service a pseudo-terminal, as a person's shell does.
    const started = await runCommand(`script -qefc 'node dist/src/main.js' /dev/null`, root(), env);
    try {
      await fetch(`${started.url}/healthz`);
      await waitForLine(started, /INFO: GET \/healthz → 200 \(\d+\.\d ms\) \[req_\w+\]/);
      expect(started.output()).not.toContain('"msg":"request"');
    } finally {
      await started.stop();
    }
  }, 60_000);
});
