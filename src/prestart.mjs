// `npm start`'s compile step (prestart): `tsc -b tsconfig.build.json`, saying first when it will take a while.
// npm is silent in this project (.npmrc), so without this line the first start is a minute or two of nothing.
// Nothing is printed when the build is already up to date, so a restart's first line is still the banner.
// Plain JavaScript run by node itself: it runs before anything is compiled.

import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import process from 'node:process';

const ROOT = join(import.meta.dirname, '..');
/** The folders tsconfig.build.json compiles. */
const SOURCES = ['src', 'db', 'oauth', 'tools'];
const BUILD_INFO = join(ROOT, 'dist', 'build.tsbuildinfo');

/** Whether any TypeScript file under `dir` changed after `since` (ms). */
function changedSince(dir, since) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (changedSince(path, since)) return true;
    } else if (entry.name.endsWith('.ts') && statSync(path).mtimeMs > since) {
      return true;
    }
  }
  return false;
}

function notice() {
  if (!existsSync(BUILD_INFO)) {
    return 'Compiling the TypeScript sources into dist/ (first start only: about a minute, up to three on a busy two-core machine; nothing else prints meanwhile)…';
  }
  const built = statSync(BUILD_INFO).mtimeMs;
  return SOURCES.some((dir) => changedSince(join(ROOT, dir), built)) ? 'Compiling what changed since the last build…' : null;
}

const line = notice();
if (line) process.stderr.write(`${line}\n`);
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const child = spawn(process.execPath, [tsc, '-b', join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'inherit' });
child.on('exit', (code, signal) => {
  process.exitCode = code ?? (signal ? 1 : 0);
});
