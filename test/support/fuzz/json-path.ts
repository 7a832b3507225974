/**
 * Addressing and rewriting places inside a JSON value (to mutate one field of a valid body), and splicing raw text
 * into its serialization (for what `JSON.stringify` cannot write: `1e309`, deep nesting, duplicate keys).
 */

export type JsonPath = (string | number)[];

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function pathsOf(value: unknown, at: JsonPath = [], out: JsonPath[] = []): JsonPath[] {
  out.push(at);
  if (Array.isArray(value)) value.forEach((v, i) => pathsOf(v, [...at, i], out));
  else if (isObject(value)) for (const [k, v] of Object.entries(value)) pathsOf(v, [...at, k], out);
  return out;
}

export function getAt(value: unknown, path: JsonPath): unknown {
  let v = value;
  for (const p of path) v = Array.isArray(v) ? v[p as number] : isObject(v) ? v[p as string] : undefined;
  return v;
}

/** Own data property even for `__proto__`. */
export function define(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

export function copyShallow(v: unknown): unknown {
  if (Array.isArray(v)) return [...(v as unknown[])];
  if (isObject(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) define(out, k, x);
    return out;
  }
  return v;
}

/** A copy of `value` with `path` replaced (`remove`: deleted). */
export function setAt(value: unknown, path: JsonPath, next: unknown, remove = false): unknown {
  if (path.length === 0) return next;
  const [head, ...rest] = path;
  const out = copyShallow(value);
  if (Array.isArray(out)) {
    const i = head as number;
    if (rest.length > 0) out[i] = setAt(out[i], rest, next, remove);
    else if (remove) out.splice(i, 1);
    else out[i] = next;
  } else if (isObject(out)) {
    const k = String(head);
    if (rest.length > 0) define(out, k, setAt(out[k], rest, next, remove));
    else if (remove) delete out[k];
    else define(out, k, next);
  }
  return out;
}

/** A string no generated value contains: it marks where raw text goes. */
export const MARK = '\u0001fuzz-mark\u0001';
const MARK_JSON = JSON.stringify(MARK);

/** JSON text of `value` with the value at `path` replaced by raw text (e.g. `1e309`, or 5,000 nested arrays). */
export function withRaw(value: unknown, path: JsonPath, raw: string): string {
  const text = JSON.stringify(setAt(value, path, MARK)) ?? '';
  return text.replace(MARK_JSON, () => raw);
}

export function deepText(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}
