import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ServiceProcess, startServiceProcess } from './support/process.js';

const README = fileURLToPath(new URL('../README.md', import.meta.url));

/** The first `sh` block under the README's "Publishing in five requests", exactly as a reader copies it. */
function quickstartScript(): string {
  const text = readFileSync(README, 'utf8');
  const section = text.slice(text.indexOf('\n## Publishing in five requests\n'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (!section || block === undefined) throw new Error('README has no "Publishing in five requests" script');
  return block;
}

async function runScript(script: string, cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  // errexit and pipefail: a step that fails stops the run here, where a reader would see it fail.
  const child = spawn('bash', ['-eo', 'pipefail', '-c', script], { cwd, env: { PATH: process.env.PATH ?? '', HOME: cwd }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

/** jq prints each top-level value pretty, closing with `}` alone on a line. */
function jsonDocuments(text: string): unknown[] {
  return text
    .split(/^}$/m)
    .map((part) => part.trim())
    .filter((part) => part.length > 0)
    .map((part) => JSON.parse(`${part}\n}`) as unknown);
}

describe('README quickstart, run with bash as written against a first start', () => {
  // The project folder of the README is the working directory; the service keeps its data in ./data under it.
  const dir = mkdtempSync(join(tmpdir(), 'publisher-quickstart-'));
  let service: ServiceProcess;
  beforeAll(async () => {
    // The default confirmation interval: the wait the README announces is the one the script meets.
    service = await startServiceProcess({ DATABASE_URL: `sqlite:${join(dir, 'data', 'service.db')}` });
  }, 60_000);
  afterAll(async () => {
    await service.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates a brand and a sandbox connection, publishes, waits for "published", shows the meters — twice, reusing the brand and connection', async () => {
    const script = quickstartScript();
    const brandLines = new Set<string>();
    for (const run of [1, 2]) {
      const { code, stdout, stderr } = await runScript(script, dir);
      expect(code, `run ${run}: ${stderr}`).toBe(0);
      expect(stderr).toBe('');
      const [first, ...rest] = stdout.split('\n');
      expect(first).toMatch(/^brand brand_\w+, connection conn_\w+$/);
      const [content, usage] = jsonDocuments(rest.join('\n')) as [
        { status: string; jobs: { platform_slug: string; status: string; external_post_url: string | null }[] },
        { plan: string; meters: { meter: string; used: number }[] },
      ];
      expect(content).toEqual({
        status: 'published',
        jobs: [{ platform_slug: 'threads', status: 'published', external_post_url: expect.stringMatching(/^https:\/\//) }],
      });
      expect(usage.plan).toBe('default');
      // The second run finds the first run's brand and connection by name: one of each, one more publication.
      expect(usage.meters).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ meter: 'brands', used: 1 }),
          expect.objectContaining({ meter: 'connections', used: 1 }),
          expect.objectContaining({ meter: 'publicacoes', used: run }),
        ]),
      );
      brandLines.add(first ?? '');
    }
    // Both runs printed the same brand and connection ids.
    expect(brandLines.size).toBe(1);
  }, 120_000);
});
