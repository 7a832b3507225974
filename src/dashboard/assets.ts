import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Router } from 'express';
import type TypeScript from 'typescript';

/**
 * The stylesheet and the one script, plain files under src/dashboard/assets. They are found from the package
 * root, so the same lookup works from `src/` under tsx and from the compiled `dist/src/`.
 */
function assetsDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'package.json'))) return join(dir, 'src', 'dashboard', 'assets');
    dir = dirname(dir);
  }
  throw new Error('dashboard assets not found: no package.json above the dashboard module');
}

const TYPES: Record<string, string> = {
  'app.css': 'text/css; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'text-length.js': 'text/javascript; charset=utf-8',
  'passkeys.js': 'text/javascript; charset=utf-8',
  'webauthn.js': 'text/javascript; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
  'icon.png': 'image/png',
};

/**
 * The networks' text counting rules (src/vocabulary/text-length.ts) as a browser module, which app.js imports so
 * that the live counters count exactly as the server checks. Running compiled, it is the compiled module beside
 * this one; running from source (tsx, the tests), the source without its types. The module imports nothing.
 */
function textLengthModule(): Buffer {
  const compiled = fileURLToPath(new URL('../vocabulary/text-length.js', import.meta.url));
  if (existsSync(compiled)) return Buffer.from(readFileSync(compiled, 'utf8').replace(/\n\/\/# sourceMappingURL=.*\n?$/, '\n'));
  const source = readFileSync(fileURLToPath(new URL('../vocabulary/text-length.ts', import.meta.url)), 'utf8');
  const ts = createRequire(import.meta.url)('typescript') as typeof TypeScript;
  return Buffer.from(ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText);
}

/**
 * The browser half of WebAuthn, `@simplewebauthn/browser`'s own bundle as published (it defines the global
 * `SimpleWebAuthnBrowser`), served from here: the pages' CSP allows scripts from our origin only.
 */
function webauthnBundle(): Buffer {
  const entry = createRequire(import.meta.url).resolve('@simplewebauthn/browser');
  return Buffer.from(readFileSync(join(dirname(entry), '..', 'dist', 'bundle', 'index.umd.min.js'), 'utf8').replace(/\n\/\/# sourceMappingURL=.*\n?$/, '\n'));
}

export function assetRoutes(router: Router): void {
  const dir = assetsDir();
  const files = new Map(
    Object.keys(TYPES).map((name) => {
      const body = name === 'text-length.js' ? textLengthModule() : name === 'webauthn.js' ? webauthnBundle() : readFileSync(join(dir, name));
      return [name, { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"` }] as const;
    }),
  );
  router.get('/dashboard/assets/:file', (req, res, next) => {
    const file = files.get(req.params.file);
    if (!file) {
      next();
      return;
    }
    res.setHeader('ETag', file.etag);
    res.setHeader('Cache-Control', 'no-cache');
    if (req.get('if-none-match') === file.etag) {
      res.status(304).end();
      return;
    }
    res.type(TYPES[req.params.file]!).send(file.body);
  });
  // Browsers ask for /favicon.ico on every origin, whatever the page links; the SVG answers both addresses.
  const icon = files.get('favicon.svg')!;
  router.get('/favicon.ico', (_req, res) => {
    res.setHeader('Cache-Control', 'public, max-age=86400');
    res.type(TYPES['favicon.svg']!).send(icon.body);
  });
}
