/** Hostile variants of a valid JSON body: wrong types, odd strings, raw numbers, bad syntax, odd encodings. */
import fc from 'fast-check';
import type { JsonSchema } from '../openapi.js';
import { pick, wrongValueArbitrary } from './arbitraries.js';
import type { CaseContext, FuzzCase, Mutation } from './case.js';
import { resolveSchema } from './document.js';
import { BAD_UTF8, CONTENT_ENCODINGS, EXTRA_KEYS, ODD_CONTENT_TYPES, ODD_STRINGS, PROTOTYPE_NAMES, RAW_NUMBERS, SYNTAX_BREAKERS } from './hostile-values.js';
import { copyShallow, deepText, define, getAt, isObject, type JsonPath, MARK, pathsOf, setAt, withRaw } from './json-path.js';

export function bodyMutations(ctx: CaseContext, valid: fc.Arbitrary<FuzzCase>): { weight: number; arbitrary: Mutation }[] {
  const withJson = (c: FuzzCase): unknown => (c.body?.kind === 'json' ? c.body.value : {});
  const objectPaths = (v: unknown) => pathsOf(v).filter((p) => isObject(getAt(v, p)));
  const arrayPaths = (v: unknown) => pathsOf(v).filter((p) => Array.isArray(getAt(v, p)));
  const stringPaths = (v: unknown) => pathsOf(v).filter((p) => typeof getAt(v, p) === 'string');
  const nonRoot = (v: unknown) => {
    const all = pathsOf(v).filter((p) => p.length > 0);
    return all.length > 0 ? all : [[]];
  };
  const m = (weight: number, arbitrary: Mutation) => ({ weight, arbitrary });
  const json = (c: FuzzCase, label: string, value: unknown): FuzzCase => ({ ...c, label, body: { kind: 'json', value } });
  const text = (c: FuzzCase, label: string, t: string): FuzzCase => ({ ...c, label, body: { kind: 'text', text: t } });
  const maxLengthAt = (path: JsonPath): number => {
    let s: JsonSchema | undefined = ctx.op.jsonBody;
    for (const p of path) {
      if (s === undefined) return 100;
      s = resolveSchema(s, ctx.doc);
      s = typeof p === 'number' ? s.items : s.properties?.[p];
    }
    return s === undefined ? 100 : (resolveSchema(s, ctx.doc).maxLength ?? 100);
  };
  return [
    m(3, fc.tuple(valid, fc.nat(), wrongValueArbitrary).map(([c, n, w]) => { const v = withJson(c); const p = pick(nonRoot(v), n); return json(c, `body:type-swap@${p.join('.')}`, setAt(v, p, w)); })),
    m(2, fc.tuple(valid, fc.nat()).map(([c, n]) => { const v = withJson(c); const p = pick(pathsOf(v), n); return json(c, `body:null@${p.join('.')}`, setAt(v, p, null)); })),
    m(2, fc.tuple(valid, fc.nat()).map(([c, n]) => { const v = withJson(c); const p = pick(nonRoot(v), n); return json(c, `body:drop@${p.join('.')}`, setAt(v, p, undefined, true)); })),
    m(2, fc.tuple(valid, fc.nat(), fc.oneof(fc.constantFrom(...EXTRA_KEYS), fc.string({ maxLength: 12 })), fc.jsonValue({ maxDepth: 2 })).map(([c, n, k, x]) => {
      const v = withJson(c);
      const p = pick(objectPaths(v).length > 0 ? objectPaths(v) : [[]], n);
      const target = getAt(v, p);
      const grown = copyShallow(isObject(target) ? target : {}) as Record<string, unknown>;
      define(grown, k, x);
      return json(c, `body:extra-field@${p.join('.')}`, setAt(v, p, grown));
    })),
    m(3, fc.tuple(valid, fc.nat(), fc.oneof(fc.constantFrom(...ODD_STRINGS), fc.constantFrom(...PROTOTYPE_NAMES), fc.string({ maxLength: 40, unit: 'binary' }), fc.string({ maxLength: 20, unit: 'grapheme-composite' }))).map(([c, n, s]) => {
      const v = withJson(c);
      const sp = stringPaths(v);
      const p = pick(sp.length > 0 ? sp : nonRoot(v), n);
      return json(c, `body:unicode@${p.join('.')}`, setAt(v, p, s));
    })),
    m(1, fc.tuple(valid, fc.nat(), fc.constantFrom(1, 2, 10, 100), fc.constantFrom('a', 'é', '😀', '\u0000', ' ')).map(([c, n, factor, ch]) => {
      const v = withJson(c);
      const sp = stringPaths(v);
      const p = pick(sp.length > 0 ? sp : nonRoot(v), n);
      const length = Math.min(200_000, Math.max(1, maxLengthAt(p)) * factor + 1);
      return json(c, `body:long-string@${p.join('.')}`, setAt(v, p, ch.repeat(Math.ceil(length / ch.length))));
    })),
    m(2, fc.tuple(valid, fc.nat(), fc.constantFrom(...RAW_NUMBERS)).map(([c, n, raw]) => { const v = withJson(c); const p = pick(pathsOf(v), n); return text(c, `body:number@${p.join('.')}`, withRaw(v, p, raw)); })),
    m(1, fc.tuple(valid, fc.nat()).map(([c, n]) => { const v = withJson(c); const op = objectPaths(v); const p = pick(op.length > 0 ? op : [[]], n); return json(c, `body:array-for-object@${p.join('.')}`, setAt(v, p, [getAt(v, p)])); })),
    m(1, fc.tuple(valid, fc.nat()).map(([c, n]) => {
      const v = withJson(c);
      const ap = arrayPaths(v);
      if (ap.length === 0) return json(c, 'body:array-for-object@', [v, v]);
      const p = pick(ap, n);
      return json(c, `body:object-for-array@${p.join('.')}`, setAt(v, p, { ...(getAt(v, p) as unknown[]) }));
    })),
    m(1, fc.tuple(valid, fc.nat(), fc.constantFrom(64, 1000, 5000), fc.constantFrom<'array' | 'object'>('array', 'object')).map(([c, n, depth, kind]) => {
      const v = withJson(c);
      const p = pick(pathsOf(v), n);
      return text(c, `body:deep-${depth}@${p.join('.')}`, withRaw(v, p, deepText(depth, kind)));
    })),
    m(2, fc.tuple(valid, fc.nat(), wrongValueArbitrary, fc.boolean()).map(([c, n, w, first]) => {
      const v = withJson(c);
      const o = objectPaths(v);
      const p = pick(o.length > 0 ? o : [[]], n);
      const target = getAt(v, p);
      const keys = isObject(target) ? Object.keys(target) : [];
      const key = keys.length > 0 ? pick(keys, n) : 'name';
      const dup = `${JSON.stringify(key)}:${JSON.stringify(w) ?? 'null'}`;
      const inner = JSON.stringify(isObject(target) ? target : {}) ?? '{}';
      const grown = inner === '{}' ? `{${dup}}` : first ? `{${dup},${inner.slice(1)}` : `${inner.slice(0, -1)},${dup}}`;
      return text(c, `body:duplicate-key@${[...p, key].join('.')}`, withRaw(v, p, grown));
    })),
    m(2, fc.tuple(valid, fc.nat()).map(([c, n]) => {
      const t = JSON.stringify(withJson(c)) ?? '';
      return text(c, 'body:truncated', t.slice(0, t.length <= 1 ? 0 : n % (t.length - 1) + 1));
    })),
    m(2, fc.tuple(valid, fc.constantFrom(...SYNTAX_BREAKERS)).map(([c, f]) => text(c, 'body:syntax', f(JSON.stringify(withJson(c)) ?? '')))),
    m(2, fc.tuple(valid, fc.constantFrom(...ODD_CONTENT_TYPES)).map(([c, contentType]) => ({ ...c, label: `body:content-type=${String(contentType).slice(0, 40)}`, contentType }))),
    m(1, fc.tuple(valid, fc.constantFrom(...CONTENT_ENCODINGS)).map(([c, enc]) => ({ ...c, label: `body:content-encoding=${enc}`, headers: { ...c.headers, 'content-encoding': enc } }))),
    m(1, fc.tuple(valid, fc.nat(), fc.constantFrom(...BAD_UTF8)).map(([c, n, bytes]): FuzzCase => {
      const v = withJson(c);
      const sp = stringPaths(v);
      const p = pick(sp.length > 0 ? sp : nonRoot(v), n);
      const [before, after] = withRaw(v, p, `"${MARK}"`).split(MARK);
      const out = Buffer.concat([Buffer.from(before ?? ''), Buffer.from(bytes), Buffer.from(after ?? '')]);
      return { ...c, label: `body:invalid-utf8@${p.join('.')}`, body: { kind: 'bytes', bytes: out }, contentType: 'application/json' };
    })),
    m(1, fc.tuple(valid, fc.nat({ max: 4 })).map(([c, n]): FuzzCase => {
      const t = Buffer.from(JSON.stringify(withJson(c)) ?? '');
      const size = Math.max(1, Math.ceil(t.length / (n + 1)));
      const chunks: Uint8Array[] = [];
      for (let i = 0; i < t.length; i += size) chunks.push(t.subarray(i, i + size));
      return { ...c, label: 'body:chunked', body: { kind: 'stream', chunks } };
    })),
    m(1, valid.map((c): FuzzCase => ({ ...c, label: 'body:empty', body: { kind: 'bytes', bytes: new Uint8Array() }, contentType: 'application/json' }))),
    m(1, fc.tuple(valid, fc.jsonValue({ maxDepth: 3 })).map(([c, value]) => json(c, 'body:any-json', value))),
  ];
}
