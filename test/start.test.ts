import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfig, ConfigError } from '../src/config.js';
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
      // F10: the MCP URL is printed exactly as BASE_URL spells it (OAuth clients compare it with `resource`).
      const baseUrl = /\(base URL (\S+)\)/.exec(out)?.[1];
      expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(out).toContain(`MCP: ${baseUrl}/mcp (give clients this URL exactly as written: it must match BASE_URL)`);
      const metadata = (await (await fetch(`${first.url}/.well-known/oauth-protected-resource/mcp`)).json()) as { resource?: string };
      expect(metadata.resource).toBe(`${baseUrl}/mcp`);
      const key = /(svc_live_[0-9a-f]{32})/.exec(out)?.[1];
      const ws = /workspace (ws_[0-9a-z]{20})/.exec(out)?.[1];
      expect(out).toContain(`curl -H "Authorization: Bearer ${key}"`);
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
      expect(second.stdout()).toContain('npm run cli -- workspace create');
    } finally {
      expect(await second.stop('SIGTERM')).toBe(0);
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

describe('configuration', () => {
  it('has the documented defaults', () => {
    const c = parseConfig({});
    expect(c).toMatchObject({ port: 8080, host: '127.0.0.1', baseUrl: 'http://127.0.0.1:8080', logLevel: 'info', allowLocalUrls: false });
    expect(c.database).toEqual({ dialect: 'sqlite', file: './data/service.db' });
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
