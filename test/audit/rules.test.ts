import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return name === 'node_modules' || name === 'assets' ? [] : sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** Statements that change or remove audit rows: the query builder's and raw SQL's spellings. */
const CHANGES = [
  { kind: 'update', pattern: /updateTable\(\s*['"`]audit_events['"`]/g },
  { kind: 'update', pattern: /\bupdate\s+audit_events\b/gi },
  { kind: 'delete', pattern: /deleteFrom\(\s*['"`]audit_events['"`]/g },
  { kind: 'delete', pattern: /\bdelete\s+from\s+audit_events\b/gi },
  { kind: 'delete', pattern: /\btruncate\s+(table\s+)?audit_events\b/gi },
  { kind: 'delete', pattern: /dropTable\(\s*['"`]audit_events['"`]/g },
] as const;

/** Every place in the product code that updates or deletes audit entries, as `file: kind in function`. */
function changesOfAuditRows(files: readonly string[]): string[] {
  const found: string[] = [];
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const { kind, pattern } of CHANGES) {
      for (const match of text.matchAll(pattern)) {
        // The exported function the statement sits in: the nearest declaration above it.
        const before = text.slice(0, match.index);
        const fn = [...before.matchAll(/export (?:async )?function (\w+)/g)].pop()?.[1] ?? '(top level)';
        found.push(`${file}: ${kind} in ${fn}`);
      }
    }
  }
  return found;
}

describe('the audit log is append-only', () => {
  const files = [...sources('src'), ...sources('db'), ...sources('oauth'), ...sources('tools')];

  it('reads the whole product code (the scan finds the sweep it allows)', () => {
    expect(files.length).toBeGreaterThan(200);
    expect(files).toContain(join('db', 'repositories', 'audit.repo.ts'));
  });

  it('nothing updates an entry, and only the retention sweep deletes them', () => {
    expect(changesOfAuditRows(files)).toEqual([`${join('db', 'repositories', 'audit.repo.ts')}: delete in sweepAuditEvents`]);
  });

  it('the scan sees each spelling of a change', () => {
    const samples = ["db.updateTable('audit_events').set({})", 'sql`UPDATE audit_events SET ip = null`', 'db.deleteFrom("audit_events")', 'sql`delete from audit_events`'];
    for (const sample of samples) expect(CHANGES.some(({ pattern }) => new RegExp(pattern.source, pattern.flags).test(sample)), sample).toBe(true);
  });

  it('only the audit repository writes entries, and only recordAudit calls it', () => {
    const inserts = files.filter((f) => /insertInto\(\s*['"`]audit_events['"`]/.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(inserts).toEqual([join('db', 'repositories', 'audit.repo.ts')]);
    const callers = files.filter((f) => /\binsertAuditEvent\(/.test(readFileSync(join(ROOT, f), 'utf8')) && !f.endsWith('audit.repo.ts'));
    expect(callers).toEqual([join('src', 'core', 'audit', 'record.ts')]);
  });
});

describe('AUDIT_RETENTION', () => {
  it('defaults to 365 days and reads a duration with its unit', () => {
    expect(parseConfig({}).auditRetentionMs).toBe(365 * 86_400_000);
    expect(parseConfig({ AUDIT_RETENTION: '90d' }).auditRetentionMs).toBe(90 * 86_400_000);
    expect(parseConfig({ AUDIT_RETENTION: '720h' }).auditRetentionMs).toBe(30 * 86_400_000);
  });

  it.each(['29d', '719h', '0', '30'])('refuses %j: at least 30 days, with a unit', (value) => {
    expect(() => parseConfig({ AUDIT_RETENTION: value })).toThrow(ConfigError);
    try {
      parseConfig({ AUDIT_RETENTION: value });
    } catch (err) {
      expect((err as Error).message).toContain('AUDIT_RETENTION');
    }
  });
});
