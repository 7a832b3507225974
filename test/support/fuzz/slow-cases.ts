import type { CaseContext, FuzzCase } from './case.js';
import { deepText, getAt, pathsOf, setAt, withRaw } from './json-path.js';
import { joinQuery } from './url-encoding.js';

/**
 * The few expensive cases, run once per operation before the generated ones: bodies around 1 MB (over and under
 * the body limit), 100,000 levels of nesting, and headers and URLs over Node's 16 KB limit.
 */
export function slowCases(ctx: CaseContext, example: FuzzCase): FuzzCase[] {
  const out: FuzzCase[] = [
    { ...example, label: 'slow:huge-x-request-id', headers: { ...example.headers, 'x-request-id': 'r'.repeat(20_000) }, transport: true },
    { ...example, label: 'slow:huge-query', query: joinQuery(example.query, `q=${'q'.repeat(20_000)}`), transport: true },
  ];
  if (ctx.op.jsonBody !== undefined) {
    const value = example.body?.kind === 'json' ? example.body.value : {};
    const strings = pathsOf(value).filter((p) => typeof getAt(value, p) === 'string');
    const at = strings[0] ?? ['fuzz'];
    out.push(
      { ...example, label: 'slow:1MB-over-limit', body: { kind: 'json', value: setAt(value, at, 'a'.repeat(1024 * 1024 + 1)) } },
      { ...example, label: 'slow:1MB-emoji-over-limit', body: { kind: 'json', value: setAt(value, at, '😀'.repeat(300_000)) } },
      { ...example, label: 'slow:1MB-under-limit', body: { kind: 'json', value: setAt(value, at, 'b'.repeat(1_000_000)) } },
      { ...example, label: 'slow:deep-100000', body: { kind: 'text', text: withRaw(value, at, deepText(100_000, 'array')) } },
      { ...example, label: 'slow:16MB-whitespace', body: { kind: 'text', text: `${' '.repeat(16 * 1024 * 1024)}{}` } },
    );
  }
  if (ctx.op.rawBodyTypes.length > 0) {
    out.push({ ...example, label: 'slow:upload-2MB', body: { kind: 'bytes', bytes: new Uint8Array(2 * 1024 * 1024).fill(7) } });
  }
  return out;
}
