import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The layout's "never" arrows, asserted over the import lines of the product code. The lint (eslint.config.js)
 * holds the same list while editing; this test states it as one table a reader can check against the README.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));

type Part = 'vocabulary' | 'outbound' | 'web' | 'observability' | 'core' | 'http' | 'mcp' | 'dashboard' | 'tools' | 'oauth' | 'networks' | 'db' | 'workers' | 'media' | 'webhooks' | 'root';

const DOORS: readonly Part[] = ['http', 'mcp', 'dashboard', 'tools', 'oauth'];
/** The network contract the core and the doors may know (types and interfaces, no adapter). */
const NETWORK_CONTRACT = ['src/networks/adapter.ts', 'src/networks/network-oauth.ts', 'src/networks/media-source.ts'];

function partOf(file: string): Part {
  const [top, second] = file.split('/');
  if (top === 'tools' || top === 'oauth' || top === 'db') return top;
  if (top === 'src' && second !== undefined && !second.endsWith('.ts')) return second as Part;
  return 'root';
}

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return name === 'assets' ? [] : sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

interface Arrow {
  from: string;
  to: string;
}

/** Every relative import of our own code, resolved to the file it names. */
function arrows(): Arrow[] {
  const out: Arrow[] = [];
  for (const file of ['src', 'tools', 'oauth', 'db'].flatMap(sources)) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s*['"](\.[^'"]+)['"]|(?:^|\n)\s*import\s*['"](\.[^'"]+)['"]/g)) {
      const spec = match[1] ?? match[2]!;
      const to = relative(ROOT, normalize(join(ROOT, dirname(file), spec))).replace(/\.js$/, '.ts');
      out.push({ from: file, to });
    }
  }
  return out;
}

const ALL = arrows();

function breaking(rule: (from: Part, to: Part, arrow: Arrow) => boolean): string[] {
  return ALL.filter((a) => rule(partOf(a.from), partOf(a.to), a)).map((a) => `${a.from} → ${a.to}`);
}

describe('architecture: the never arrows', () => {
  it('reads a realistic number of import lines (the parser finds them)', () => {
    expect(ALL.length).toBeGreaterThan(300);
    expect(ALL.some((a) => a.from === 'src/app.ts' && a.to.startsWith('src/http/'))).toBe(true);
  });

  it('vocabulary imports nothing of ours', () => {
    expect(breaking((from, to) => from === 'vocabulary' && to !== 'vocabulary')).toEqual([]);
  });

  it('db/ imports nothing of the app', () => {
    expect(breaking((from, to) => from === 'db' && to !== 'db')).toEqual([]);
  });

  it('network adapters import neither the core, the database nor a door', () => {
    expect(breaking((from, to) => from === 'networks' && (to === 'core' || to === 'db' || DOORS.includes(to)))).toEqual([]);
  });

  it('the core imports no door, and of the networks only their contract', () => {
    expect(breaking((from, to, a) => from === 'core' && (DOORS.includes(to) || (to === 'networks' && !NETWORK_CONTRACT.includes(a.to))))).toEqual([]);
  });

  it('doors do not import each other (the MCP server lists the tools, never the other way)', () => {
    const allowed = new Set(['mcp→tools']);
    expect(breaking((from, to) => DOORS.includes(from) && DOORS.includes(to) && from !== to && !allowed.has(`${from}→${to}`))).toEqual([]);
  });

  it('doors see networks through the core and the vocabulary; only OAuth reaches the database', () => {
    expect(breaking((from, to, a) => DOORS.includes(from) && to === 'networks' && !NETWORK_CONTRACT.includes(a.to))).toEqual([]);
    expect(breaking((from, to) => DOORS.includes(from) && from !== 'oauth' && to === 'db')).toEqual([]);
  });

  it('the web plumbing the doors share imports no door', () => {
    expect(breaking((from, to) => from === 'web' && DOORS.includes(to))).toEqual([]);
  });

  it('the web plumbing never reaches into db/ (it takes ports the container wires)', () => {
    expect(breaking((from, to) => from === 'web' && to === 'db')).toEqual([]);
  });

  it('the core never imports src/media (media implements core ports; the container injects them)', () => {
    expect(breaking((from, to) => from === 'core' && to === 'media')).toEqual([]);
  });

  it('outbound HTTP (deadline, address guard, URL rule) is a leaf: it imports nothing of ours', () => {
    expect(breaking((from, to) => from === 'outbound' && to !== 'outbound')).toEqual([]);
  });

  it('no part imports the composition root back (each declares the deps it takes; the root wires them)', () => {
    expect(breaking((from, to) => from !== 'root' && to === 'root')).toEqual([]);
  });
});
