import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Me, WorkspaceSummary } from '../src/core/workspaces/workspaces.schema.js';
import { runToEnd, startServiceProcess } from './support/process.js';

describe('operator CLI: workspace list and key create, checked against a running service', () => {
  const dir = mkdtempSync(join(tmpdir(), 'publisher-cli-'));
  const env = { DATABASE_URL: `sqlite:${join(dir, 'service.db')}` };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('lists workspaces, mints a key for one that GET /api/v1/me then names, and refuses what it cannot do', async () => {
    const empty = await runToEnd('src/cli.ts', ['workspace', 'list'], env);
    expect(empty).toMatchObject({ code: 0, stdout: expect.stringContaining('No workspace yet') });

    for (const name of ['Acme Coffee', 'Beta Bakery']) {
      expect((await runToEnd('src/cli.ts', ['workspace', 'create', '--name', name, '--json'], env)).code).toBe(0);
    }
    const listed = await runToEnd('src/cli.ts', ['workspace', 'list', '--json'], env);
    expect(listed.code).toBe(0);
    const { data } = JSON.parse(listed.stdout) as { data: WorkspaceSummary[] };
    expect(data.map((w) => [w.name, w.plan])).toEqual([
      ['Acme Coffee', 'default'],
      ['Beta Bakery', 'default'],
    ]);
    const beta = data[1]!;
    const text = await runToEnd('src/cli.ts', ['workspace', 'list'], env);
    const lines = text.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+NAME\s+PLAN\s+CREATED$/);
    expect(lines[2]).toMatch(new RegExp(`^${beta.id}\\s+Beta Bakery\\s+default\\s+${beta.created_at.replace(/\./g, '\\.')}$`));

    const human = await runToEnd('src/cli.ts', ['key', 'create', '--workspace', beta.id, '--name', 'laptop'], env);
    expect(human.code).toBe(0);
    const key = /(svc_live_[0-9a-f]{32})/.exec(human.stdout)?.[1];
    expect(human.stdout).toContain(`export KEY=${key} WS=${beta.id}`);
    const json = await runToEnd('src/cli.ts', ['key', 'create', '--workspace', beta.id, '--json'], env);
    const minted = JSON.parse(json.stdout) as { workspace_id: string; key_id: string; api_key: string };
    expect(minted.workspace_id).toBe(beta.id);

    const unknown = await runToEnd('src/cli.ts', ['key', 'create', '--workspace', 'ws_00000000000000000000'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('workspace list');
    const usage = await runToEnd('src/cli.ts', ['key', 'create'], env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--workspace');

    const service = await startServiceProcess(env);
    try {
      for (const [apiKey, name] of [
        [key!, 'laptop'],
        [minted.api_key, 'cli key'],
      ] as const) {
        const res = await fetch(`${service.url}/api/v1/me`, { headers: { authorization: `Bearer ${apiKey}` } });
        expect(res.status).toBe(200);
        const me = (await res.json()) as Me;
        expect(me.workspace).toMatchObject({ id: beta.id, name: 'Beta Bakery' });
        expect(me.credential).toMatchObject({ kind: 'api_key', name });
      }
      expect(minted.key_id).toMatch(/^key_/);
    } finally {
      expect(await service.stop('SIGTERM')).toBe(0);
    }
  }, 120_000);

  it('help is a command too', async () => {
    const help = await runToEnd('src/cli.ts', ['help'], env);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('key create --workspace WS');
  }, 30_000);
});
