import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * docs/architecture.md is the map of the tree. A map that names files which moved or were removed misleads the
 * next reader without anyone noticing, so every repository path it names in backticks must exist, and every part
 * of `src/` must appear in its layout.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DOC = 'docs/architecture.md';

/** Where repository paths start; a backticked name under one of these is a path. */
const TOP_FOLDERS = ['src', 'db', 'oauth', 'tools', 'test', 'bench', 'docs', '.ci'];
const UNDER_TOP = new RegExp(`^(${TOP_FOLDERS.map((f) => f.replace('.', '\\.')).join('|')})/[\\w./-]*$`);
/** A file at the repository's root (`eslint.config.js`, `README.md`). */
const ROOT_FILE = /^[\w.-]+\.(ts|js|mjs|json|md|ya?ml|sql)$/;

/** The backticked spans of `text` that look like repository paths (no placeholders, no spaces). */
function repoPaths(text: string): string[] {
  const spans = [...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!);
  return [...new Set(spans.filter((s) => UNDER_TOP.test(s) || ROOT_FILE.test(s)))];
}

const text = readFileSync(join(ROOT, DOC), 'utf8');
const paths = repoPaths(text);

describe('docs/architecture.md matches the tree', () => {
  it('recognises repository paths and nothing else', () => {
    const sample = 'See `src/core/lease.ts`, `db/`, `.ci/run`, `eslint.config.js`, but not `express.Router`, `/openapi.yaml`, `<resource>/<resource>.schema.ts`, `30s` or `a b.ts`.';
    expect(repoPaths(sample)).toEqual(['src/core/lease.ts', 'db/', '.ci/run', 'eslint.config.js']);
  });

  it('names a realistic number of files (the extraction finds them)', () => {
    expect(paths.length).toBeGreaterThan(60);
    expect(paths).toContain('src/core/lease.ts');
    expect(paths).toContain('test/architecture.test.ts');
  });

  it('names only paths that exist', () => {
    expect(paths.filter((p) => !existsSync(join(ROOT, p)))).toEqual([]);
  });

  it('lists every folder of src/ and every top-level part in its layout', () => {
    const layout = /^## The parts\n+```\n([\s\S]*?)```/m.exec(text)?.[1];
    expect(layout, 'the document has a layout block under "## The parts"').toBeDefined();
    const folders = readdirSync(join(ROOT, 'src'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
    expect(folders.length).toBeGreaterThan(10);
    const missing = [...folders, 'tools', 'oauth', 'db', 'test', 'bench'].filter((name) => !new RegExp(`^\\s*${name}/\\s`, 'm').test(layout!));
    expect(missing).toEqual([]);
  });
});
