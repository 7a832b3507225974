import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * What `npm run build` and `npm start` need of the checkout: the compiled folders (tsconfig.build.json), the
 * configurations, and .npmrc (npm stays silent, which the start banner's tests rely on).
 */
const PROJECT = ['package.json', '.npmrc', 'tsconfig.json', 'tsconfig.build.json', 'src', 'db', 'oauth', 'tools'];

export interface ProjectCopy {
  /** The copy's root: `dist/` is built there, and the service finds its assets from it as from a checkout. */
  dir: string;
  remove(): void;
}

/**
 * A copy of the project in a temporary folder, built with `npm run build` there, so that no test writes into the
 * checkout. node_modules is linked, not copied. `from` is another copy to start from (with its `dist/`, its
 * timestamps kept, so the build there only checks that it is up to date); by default the checkout.
 */
export async function builtProjectCopy(from: string = ROOT): Promise<ProjectCopy> {
  const dir = mkdtempSync(join(tmpdir(), 'publisher-build-'));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    for (const entry of [...PROJECT, 'dist']) {
      if (entry === 'dist' && from === ROOT) continue;
      if (existsSync(join(from, entry))) cpSync(join(from, entry), join(dir, entry), { recursive: true, preserveTimestamps: true });
    }
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    const build = spawn('npm', ['run', 'build'], { cwd: dir, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? tmpdir() }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    build.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    build.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    const [code] = (await once(build, 'exit')) as [number | null];
    if (code !== 0) throw new Error(`npm run build failed in ${dir} (${code}): ${output}`);
  } catch (err) {
    remove();
    throw err;
  }
  return { dir, remove };
}
