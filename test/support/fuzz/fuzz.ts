/**
 * A reusable OpenAPI-driven HTTP fuzzer (OWASP API4 "unrestricted resource consumption" and API8 "security
 * misconfiguration"): it reads the served OpenAPI document, generates inputs for each operation with fast-check
 * from the operation's schemas and as mutations of valid inputs, sends them, and judges every answer:
 *
 * - never a 5xx, never a hang, never a dropped connection;
 * - a 4xx is the spec error body `{error, message, request_id}` with `request_id` equal to `X-Request-Id`, a code of
 *   the catalogue, and a status the operation documents; a 2xx matches the documented schema;
 * - a rejected request (and any GET) leaves the database as it was (row counts of the main tables, plus
 *   soft deletes, revocations, updates, meters and balances);
 * - the server stays up (`GET /healthz` is 200 after every batch).
 *
 * Nothing here knows this service's ids or business rules: the caller passes the real ids to use in paths,
 * hints for fields whose valid values are not in the schema (e.g. a brand id), and the changes it allows.
 */
import fc from 'fast-check';
import { type Kysely, sql } from 'kysely';
import { parse } from 'yaml';
import type { Database } from '../../../db/schema.js';
import type { ResponseConformance } from '../openapi.js';

// ---------------------------------------------------------------------------------------------------------------
// The document
// ---------------------------------------------------------------------------------------------------------------

export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  enum?: readonly unknown[];
  format?: string;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
}

export interface ParameterDoc {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: JsonSchema;
}

interface OperationObject {
  operationId?: string;
  parameters?: ParameterDoc[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, unknown>;
  security?: Record<string, unknown>[];
}

export interface ApiDocument {
  paths: Record<string, Record<string, OperationObject>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

/** One operation of the document, reduced to what the fuzzer needs. */
export interface Operation {
  id: string;
  /** Upper case. */
  method: string;
  /** The OpenAPI template, e.g. `/api/v1/workspaces/{wsId}/brands`. */
  path: string;
  pathParams: ParameterDoc[];
  queryParams: ParameterDoc[];
  headerParams: ParameterDoc[];
  /** Schema of the `application/json` request body, if the operation takes one. */
  jsonBody: JsonSchema | undefined;
  /** Non-JSON request content types (file uploads). */
  rawBodyTypes: string[];
  /** Whether the operation needs a bearer credential. */
  secured: boolean;
  statuses: string[];
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

export function parseDocument(yamlText: string): ApiDocument {
  return parse(yamlText) as ApiDocument;
}

/**
 * The operations that take input the fuzzer can vary: a JSON body, a raw (upload) body, query or path parameters.
 * `exclude` drops operations by path (e.g. protocol endpoints owned by a library).
 */
export function operationsOf(doc: ApiDocument, exclude: (path: string, method: string) => boolean = () => false): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      if (op === undefined || exclude(path, method.toUpperCase())) continue;
      const params = op.parameters ?? [];
      const content = op.requestBody?.content ?? {};
      const jsonBody = content['application/json']?.schema;
      const rawBodyTypes = Object.keys(content).filter((t) => t !== 'application/json');
      const operation: Operation = {
        id: op.operationId ?? `${method} ${path}`,
        method: method.toUpperCase(),
        path,
        pathParams: params.filter((p) => p.in === 'path'),
        queryParams: params.filter((p) => p.in === 'query'),
        headerParams: params.filter((p) => p.in === 'header'),
        jsonBody: jsonBody !== undefined && jsonBody.format !== 'binary' ? jsonBody : undefined,
        rawBodyTypes: jsonBody?.format === 'binary' ? ['application/json'] : rawBodyTypes,
        secured: (op.security ?? []).some((s) => Object.keys(s).length > 0),
        statuses: Object.keys(op.responses ?? {}),
      };
      const takesInput = operation.jsonBody !== undefined || operation.rawBodyTypes.length > 0 || operation.queryParams.length > 0 || operation.pathParams.length > 0;
      if (takesInput) out.push(operation);
    }
  }
  return out;
}

/** The error codes the document's `Error` schema lists. */
export function errorCodesOf(doc: ApiDocument): Set<string> {
  const codes = doc.components?.schemas?.Error?.properties?.error?.enum ?? [];
  return new Set(codes.map(String));
}

function resolveSchema(schema: JsonSchema, doc: ApiDocument): JsonSchema {
  let s = schema;
  for (let i = 0; i < 20 && s.$ref !== undefined; i++) {
    const name = s.$ref.replace('#/components/schemas/', '');
    const target = doc.components?.schemas?.[name];
    if (target === undefined) throw new Error(`unresolvable $ref ${s.$ref}`);
    s = target;
  }
  return s;
}

// ---------------------------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------------------------

/** Strings that have hurt someone somewhere: unicode edge cases, injections, separators, reserved names. */
export const ODD_STRINGS: readonly string[] = [
  '',
  ' ',
  '😀',
  '👩‍👩‍👧‍👦🏳️‍🌈',
  '\u202Eevil\u202C.txt',
  'שלום עולם',
  'مرحبا',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  'x\ud83d',
  '\ud83dx\ude00',
  '\ufeffbom',
  '\u200b\u200c\u200d',
  'e\u0301\u0301\u0301',
  '\uffff\ufffe',
  '\u2028\u2029',
  '\r\n\r\nX-Injected: 1',
  '\t',
  '%00',
  '%',
  '../../../../etc/passwd',
  "' OR '1'='1' --",
  '"; DROP TABLE brands; --',
  '<script>alert(1)</script>',
  '${7*7}{{7*7}}',
  '__proto__',
  'constructor',
  'null',
  'undefined',
  'NaN',
  '-1',
  '0',
  '1e309',
  'true',
  '[]',
  '{}',
  'Ω≈ç√∫˜µ≤≥÷',
  'Ｔｈｅ ｑｕｉｃｋ',
  '\u0130\u0131ß',
  'A'.repeat(257),
];

/** Names every plain JavaScript object answers to: a lookup by user input in a plain object finds them. */
export const PROTOTYPE_NAMES: readonly string[] = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', '__defineGetter__'];

/** Object keys worth adding where none is expected. */
export const EXTRA_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '$where', '', ' ', 'id', 'workspace_id', 'admin', 'a'.repeat(1000), '😀', '\u0000'];

/** Addresses a fuzzer may give a server that fetches them: never public, never slow (no routable host). */
export const ODD_URLS: readonly string[] = [
  'https://127.0.0.1/a.jpg',
  'https://[::1]/x',
  'https://169.254.169.254/latest/meta-data/',
  'https://10.0.0.1/hook',
  'https://localhost/x',
  'https://0x7f000001/',
  'https://2130706433/',
  'https://[::ffff:127.0.0.1]/',
  'http://media.invalid/plain-http.jpg',
  'https://user:pass@media.invalid/',
  'ftp://media.invalid/f.jpg',
  'javascript:alert(1)',
  'file:///etc/passwd',
  'data:image/png;base64,AAAA',
  'https://media.invalid:99999/',
  'https://media.invalid/%00',
  'https://xn--80ak6aa92e.invalid/',
  'https://exa mple.invalid/',
  '//media.invalid/x',
  'https://',
  'not a url',
];

/** A URI that no test run will actually reach: a reserved `.invalid` name, or an address the server must refuse. */
export const uriArbitrary: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...ODD_URLS),
  fc.tuple(fc.stringMatching(/^[a-z0-9-]{1,20}$/), fc.webPath()).map(([label, path]) => `https://${label}.invalid${path}`),
);

/** A field name or parameter name → an arbitrary for it (for ids and other values the schema cannot tell). */
export type Hints = Readonly<Record<string, fc.Arbitrary<unknown>>>;

export interface GenContext {
  doc: ApiDocument;
  hints: Hints;
}

function stringArbitrary(s: JsonSchema): fc.Arbitrary<string> {
  if (s.format === 'uri') return uriArbitrary;
  if (s.format === 'date-time') {
    return fc.date({ min: new Date('1990-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());
  }
  const min = s.minLength ?? 0;
  const max = Math.max(min, Math.min(s.maxLength ?? 24, 24));
  const odd = ODD_STRINGS.filter((x) => x.length >= min && (s.maxLength === undefined || x.length <= s.maxLength));
  const choices: fc.WeightedArbitrary<string>[] = [
    { weight: 6, arbitrary: fc.string({ minLength: min, maxLength: max }) },
    { weight: 2, arbitrary: fc.string({ minLength: min, maxLength: max, unit: 'grapheme' }) },
  ];
  if (odd.length > 0) choices.push({ weight: 1, arbitrary: fc.constantFrom(...odd) });
  return fc.oneof(...choices);
}

/** An arbitrary of values valid against `schema` (as far as the schema alone can tell). */
export function schemaArbitrary(schema: JsonSchema, ctx: GenContext, name?: string): fc.Arbitrary<unknown> {
  const hint = name === undefined ? undefined : ctx.hints[name];
  if (hint !== undefined) return hint;
  const s = resolveSchema(schema, ctx.doc);
  if (s.enum !== undefined && s.enum.length > 0) return fc.constantFrom(...s.enum);
  const variants = s.anyOf ?? s.oneOf;
  if (variants !== undefined && variants.length > 0) return fc.oneof(...variants.map((v) => schemaArbitrary(v, ctx, name)));
  const type = Array.isArray(s.type) ? s.type[0] : (s.type ?? (s.properties !== undefined ? 'object' : s.items !== undefined ? 'array' : 'string'));
  switch (type) {
    case 'integer': {
      const min = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : -1_000_000);
      const max = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 1 : 1_000_000);
      return fc.integer({ min, max });
    }
    case 'number':
      return fc.double({ min: s.minimum ?? -1e9, max: s.maximum ?? 1e9, noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const itemHint = name === undefined ? undefined : ctx.hints[`${name}[]`];
      const items = itemHint ?? (s.items === undefined ? fc.jsonValue({ maxDepth: 1 }) : schemaArbitrary(s.items, ctx));
      const minLength = s.minItems ?? 0;
      return fc.array(items, { minLength, maxLength: Math.max(minLength, Math.min(s.maxItems ?? 4, 4)) });
    }
    case 'object': {
      if (s.properties === undefined) return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 });
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [key, sub] of Object.entries(s.properties)) model[key] = schemaArbitrary(sub, ctx, key);
      return fc.record(model, { requiredKeys: s.required ?? [] });
    }
    default:
      return stringArbitrary(s);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Cases
// ---------------------------------------------------------------------------------------------------------------

/** A path parameter; `raw` ones go into the URL as they are (to send malformed percent-escapes and dot segments). */
export interface PathValue {
  value: string;
  raw?: boolean;
}

export type Body =
  | { kind: 'json'; value: unknown }
  | { kind: 'text'; text: string }
  | { kind: 'bytes'; bytes: Uint8Array }
  /** Sent with Transfer-Encoding: chunked (no Content-Length). */
  | { kind: 'stream'; chunks: Uint8Array[] };

export interface FuzzCase {
  /** `family:detail`, e.g. `body:type-swap` — failures are grouped by family. */
  label: string;
  pathParams: Record<string, PathValue>;
  /** Without the `?`; sent as is (the URL parser still percent-encodes what it must). */
  query: string;
  /** Lower-case names. An `authorization` here replaces the API key. */
  headers: Record<string, string>;
  /** Omit the credential. */
  anonymous?: boolean;
  body?: Body;
  /** undefined: application/json for JSON and text bodies, the first raw type for byte bodies; null: none. */
  contentType?: string | null;
  /**
   * The request breaks HTTP itself (e.g. headers over Node's 16 KB limit): Node's parser may answer before the
   * application, without a request id. Such answers are accepted as long as they are 4xx and the server lives.
   */
  transport?: boolean;
  /** The request names another workspace's object or brings another workspace's key: it must not succeed. */
  crossTenant?: boolean;
}

export interface CaseContext extends GenContext {
  op: Operation;
  /** Real ids by path parameter name; the first valid-looking inputs use them. */
  ids: Readonly<Record<string, readonly string[]>>;
  /** Ids that exist but are wrong here: another workspace's, another kind's. */
  foreignIds: readonly string[];
  /** Those of `foreignIds` that belong to another workspace (a 2xx naming them is a broken isolation). */
  otherTenantIds?: readonly string[];
  /** A valid credential of another workspace (answers must be 403, not data). */
  foreignAuthorization?: string;
  /** Known-good JSON bodies (coherent beyond what the schema says), mixed with the schema-generated ones. */
  bodies?: fc.Arbitrary<unknown>;
}

type JsonPath = (string | number)[];

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function pathsOf(value: unknown, at: JsonPath = [], out: JsonPath[] = []): JsonPath[] {
  out.push(at);
  if (Array.isArray(value)) value.forEach((v, i) => pathsOf(v, [...at, i], out));
  else if (isObject(value)) for (const [k, v] of Object.entries(value)) pathsOf(v, [...at, k], out);
  return out;
}

function getAt(value: unknown, path: JsonPath): unknown {
  let v = value;
  for (const p of path) v = Array.isArray(v) ? v[p as number] : isObject(v) ? v[p as string] : undefined;
  return v;
}

/** Own data property even for `__proto__`. */
function define(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

function copyShallow(v: unknown): unknown {
  if (Array.isArray(v)) return [...(v as unknown[])];
  if (isObject(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) define(out, k, x);
    return out;
  }
  return v;
}

/** A copy of `value` with `path` replaced (`remove`: deleted). */
function setAt(value: unknown, path: JsonPath, next: unknown, remove = false): unknown {
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

function pick<T>(items: readonly T[], n: number): T {
  const item = items[n % items.length];
  if (item === undefined) throw new Error('pick from an empty list');
  return item;
}

const MARK = '\u0001fuzz-mark\u0001';
const MARK_JSON = JSON.stringify(MARK);

/** JSON text of `value` with the value at `path` replaced by raw text (e.g. `1e309`, or 5,000 nested arrays). */
function withRaw(value: unknown, path: JsonPath, raw: string): string {
  const text = JSON.stringify(setAt(value, path, MARK)) ?? '';
  return text.replace(MARK_JSON, () => raw);
}

function deepText(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

/** Lone surrogates cannot be encoded by encodeURIComponent; send their (invalid) UTF-8 form instead. */
export function encodeSegment(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const cu = value.charCodeAt(i);
    const isHigh = cu >= 0xd800 && cu <= 0xdbff;
    const isLow = cu >= 0xdc00 && cu <= 0xdfff;
    const next = value.charCodeAt(i + 1);
    if (isHigh && next >= 0xdc00 && next <= 0xdfff) {
      out += encodeURIComponent(value.slice(i, i + 2));
      i++;
    } else if (isHigh || isLow) {
      out += [0xe0 | (cu >> 12), 0x80 | ((cu >> 6) & 0x3f), 0x80 | (cu & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    } else {
      out += encodeURIComponent(value[i] ?? '');
    }
  }
  return out;
}

function queryString(pairs: readonly (readonly [string, string])[]): string {
  return pairs.map(([k, v]) => `${encodeSegment(k)}=${encodeSegment(v)}`).join('&');
}

function joinQuery(a: string, b: string): string {
  return a === '' ? b : b === '' ? a : `${a}&${b}`;
}

/** Header values fetch can send and Node's parser accepts: HTAB, visible ASCII, space and obs-text (0x80–0xFF). */
export const headerValueArbitrary = (maxLength: number): fc.Arbitrary<string> =>
  fc.string({
    maxLength,
    unit: fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) }, { weight: 2, arbitrary: fc.integer({ min: 0x80, max: 0xff }) }, { weight: 1, arbitrary: fc.constant(0x09) }).map((c) => String.fromCharCode(c)),
  });

function asString(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v) ?? '';
}

/** Inputs valid as far as the document (and the hints) can tell. */
export function validCaseArbitrary(ctx: CaseContext): fc.Arbitrary<FuzzCase> {
  const { op } = ctx;
  const pathModel: Record<string, fc.Arbitrary<PathValue>> = {};
  for (const p of op.pathParams) {
    const ids = ctx.ids[p.name];
    const arb = ids !== undefined && ids.length > 0 ? fc.constantFrom(...ids) : schemaArbitrary(p.schema ?? {}, ctx, p.name).map(asString);
    pathModel[p.name] = arb.map((value) => ({ value }));
  }
  const queryArb = fc
    .tuple(
      ...op.queryParams.map((p) => {
        const value = schemaArbitrary(p.schema ?? {}, ctx, p.name).map((v): [string, string] => [p.name, asString(v)]);
        return p.required === true ? value.map((v) => [v]) : fc.option(value, { nil: undefined }).map((v) => (v === undefined ? [] : [v]));
      }),
    )
    .map((groups) => queryString(groups.flat()));
  const headerArb = fc
    .tuple(
      ...op.headerParams.map((p) => {
        const value = schemaArbitrary(p.schema ?? {}, ctx, p.name).map((v): [string, string] => [p.name.toLowerCase(), asString(v)]);
        return p.required === true ? value.map((v) => [v]) : fc.option(value, { nil: undefined }).map((v) => (v === undefined ? [] : [v]));
      }),
    )
    .map((groups) => Object.fromEntries(groups.flat()));
  let bodyArb: fc.Arbitrary<{ body?: Body; contentType?: string | null }> = fc.constant({});
  if (op.jsonBody !== undefined) {
    const generated = schemaArbitrary(op.jsonBody, ctx);
    const values = ctx.bodies === undefined ? generated : fc.oneof(generated, ctx.bodies);
    bodyArb = values.map((value) => ({ body: { kind: 'json', value } }));
  } else if (op.rawBodyTypes.length > 0) {
    bodyArb = fc
      .tuple(fc.constantFrom(...op.rawBodyTypes), fc.uint8Array({ minLength: 1, maxLength: 2048 }))
      .map(([contentType, bytes]) => ({ body: { kind: 'bytes', bytes }, contentType }));
  }
  return fc.record({ pathParams: fc.record(pathModel), query: queryArb, headers: headerArb, body: bodyArb }).map(
    ({ pathParams, query, headers, body }): FuzzCase => ({ label: 'valid', pathParams, query, headers, ...body }),
  );
}

/** Values of the wrong type, or of the right type but out of any sane range. */
const wrongValueArbitrary: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, -0, 2 ** 53 + 2, -(2 ** 63), 1e308, '', [], {}, [null], { '': null }),
  fc.integer(),
  fc.double(),
  fc.string({ maxLength: 10 }),
  fc.jsonValue({ maxDepth: 2 }),
);

const RAW_NUMBERS = ['1e309', '-1e309', '-0', '1e-400', '9007199254740993', '123456789012345678901234567890123456789', '0.1e1', '1.0', '-1', '2147483648', '-2147483649', '4294967296', 'NaN', 'Infinity', '-Infinity', '0x10', '1_000', '01', '+1', '.5', '5.'];

const SYNTAX_BREAKERS: readonly ((text: string) => string)[] = [
  (t) => `${t},`,
  (t) => t.replace(/}$/, ',}'),
  (t) => t.replace(/"/g, "'"),
  (t) => `/* c */${t}`,
  (t) => `${t}// c`,
  (t) => `\ufeff${t}`,
  (t) => `)]}',\n${t}`,
  (t) => `${t}${t}`,
  (t) => `${t}\u0000`,
  (t) => t.replace(/"([a-z_]+)":/, '$1:'),
  () => '',
  () => ' \n\t ',
  () => 'null',
  () => '[]',
  () => '"string"',
  () => '0',
  () => 'true',
  () => '{',
  () => '}',
  () => '{"a":1}}',
  () => '{"a":"\\x41"}',
  () => '{"a":"\\u12"}',
  () => '{"a":"\\ud800\\u0041"}',
];

const BAD_UTF8: readonly number[][] = [[0xff], [0xfe, 0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82], [0x00]];

export const ODD_CONTENT_TYPES: readonly (string | null)[] = [
  null,
  '',
  'text/plain',
  'text/json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=fuzz',
  'application/xml',
  'application/json; charset=utf-16',
  'application/json; charset=utf-32le',
  'application/json; charset=latin1',
  'application/json; charset=bogus',
  'application/json; charset=utf-8',
  'application/json; charset="UTF-8"',
  'application/vnd.api+json',
  'application/merge-patch+json',
  'APPLICATION/JSON',
  'application/json;;;',
  'application/json; a',
  'application/json, text/plain',
  'application/jsonx',
  '*/*',
  'json',
  'image/png',
  `application/json; x=${'y'.repeat(4000)}`,
];

const CONTENT_ENCODINGS = ['gzip', 'x-gzip', 'deflate', 'br', 'identity', 'compress', 'zstd', 'gzip, gzip', 'bogus', '*', 'IDENTITY'];

const RAW_SEGMENTS = ['%', '%zz', '%E0%A4%A', '%C0%AF', '%ED%A0%80', '%FF', '%00', '%2e%2e', '..', '.', '%2F', '%5C', ';', ';a=b', '%252F', '~', '*', '%20', '%u0041'];

const RAW_QUERIES = ['%', '%zz', '%E0%A4%A', '&&&', '=', '==x', 'a=%00', ';', '+', '%2B=%2B', '?', 'a[b]=1', 'a[]=1&a[]=2', '__proto__=x', '__proto__[admin]=1', 'constructor[prototype][x]=1', 'toString=1', 'hasOwnProperty=1', '&=&=', 'a=1&a=2&a=3'];

const QUERY_VALUES: readonly string[] = [...RAW_NUMBERS, 'true', 'false', 'yes', '', ' ', '[]', '{}', 'null', '2026-02-30T25:61:61Z', '0000-00-00T00:00:00Z', '9999-12-31T23:59:59.999Z', '-271821-04-20T00:00:00Z', '2026-01-01', '1700000000', 'eyJ4IjoxfQ', 'Li4v', '!@#$'];

function authorizationVariants(ctx: CaseContext): fc.Arbitrary<{ label: string; anonymous?: boolean; authorization?: string }> {
  const fixed: { label: string; anonymous?: boolean; authorization?: string }[] = [
    { label: 'none', anonymous: true },
    { label: 'empty', authorization: '' },
    { label: 'scheme-only', authorization: 'Bearer' },
    { label: 'basic', authorization: 'Basic dXNlcjpwYXNz' },
    { label: 'unknown-key', authorization: `Bearer svc_live_${'0'.repeat(32)}` },
    { label: 'short-key', authorization: 'Bearer svc_live_' },
    { label: 'not-a-token', authorization: 'Bearer not-a-token' },
    { label: 'jwt-none', authorization: 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.' },
    { label: 'two-tokens', authorization: 'Bearer a b' },
    { label: 'huge-token', authorization: `Bearer ${'x'.repeat(8000)}` },
  ];
  if (ctx.foreignAuthorization !== undefined) fixed.push({ label: 'other-workspace', authorization: ctx.foreignAuthorization });
  return fc.oneof(
    fc.constantFrom(...fixed),
    headerValueArbitrary(200).map((t) => ({ label: 'random', authorization: `Bearer ${t}` })),
    headerValueArbitrary(60).map((t) => ({ label: 'random-oauth', authorization: `Bearer ${t.replace(/\s/g, '') || 'x'}` })),
  );
}

type Mutation = fc.Arbitrary<FuzzCase>;

function bodyMutations(ctx: CaseContext, valid: fc.Arbitrary<FuzzCase>): { weight: number; arbitrary: Mutation }[] {
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

function uploadMutations(ctx: CaseContext, valid: fc.Arbitrary<FuzzCase>): { weight: number; arbitrary: Mutation }[] {
  const types = ctx.op.rawBodyTypes;
  return [
    { weight: 2, arbitrary: fc.tuple(valid, fc.oneof(fc.constantFrom(...ODD_CONTENT_TYPES), fc.constantFrom(...types).map((t) => `${t.toUpperCase()}; charset=utf-8`), headerValueArbitrary(60))).map(([c, contentType]) => ({ ...c, label: `upload:content-type=${String(contentType).slice(0, 40)}`, contentType })) },
    { weight: 1, arbitrary: valid.map((c): FuzzCase => ({ ...c, label: 'upload:empty', body: { kind: 'bytes', bytes: new Uint8Array() } })) },
    { weight: 1, arbitrary: fc.tuple(valid, fc.array(fc.uint8Array({ maxLength: 512 }), { maxLength: 5 })).map(([c, chunks]): FuzzCase => ({ ...c, label: 'upload:chunked', body: { kind: 'stream', chunks } })) },
    { weight: 1, arbitrary: fc.tuple(valid, fc.jsonValue({ maxDepth: 2 })).map(([c, value]): FuzzCase => ({ ...c, label: 'upload:json', body: { kind: 'json', value } })) },
    { weight: 1, arbitrary: fc.tuple(valid, fc.constantFrom(...CONTENT_ENCODINGS)).map(([c, enc]) => ({ ...c, label: `upload:content-encoding=${enc}`, headers: { ...c.headers, 'content-encoding': enc } })) },
  ];
}

function pathMutations(ctx: CaseContext, valid: fc.Arbitrary<FuzzCase>): { weight: number; arbitrary: Mutation }[] {
  const names = ctx.op.pathParams.map((p) => p.name);
  const variants = fc.oneof(
    {
      weight: 3,
      arbitrary: fc
        .constantFrom<(id: string) => string>((id) => `${id}x`, (id) => id.slice(0, -1), (id) => id.toUpperCase(), (id) => `${id}${id}`, (id) => ` ${id} `, (id) => `${id}\u0000`, (id) => `${id}%`, (id) => `${id}/`, (id) => id.replace(/_/, '-'), (id) => id.replace(/[a-z]/, 'é'))
        .map((transform) => ({ transform, fixed: undefined as PathValue | undefined })),
    },
    { weight: 2, arbitrary: fc.constantFrom(...(ctx.foreignIds.length > 0 ? ctx.foreignIds : ['none'])).map((value) => ({ transform: undefined, fixed: { value } as PathValue | undefined })) },
    { weight: 3, arbitrary: fc.oneof(fc.constantFrom(...ODD_STRINGS), fc.constantFrom(...PROTOTYPE_NAMES), fc.string({ maxLength: 30, unit: 'binary' }), fc.uuid()).map((value) => ({ transform: undefined, fixed: { value } as PathValue | undefined })) },
    { weight: 1, arbitrary: fc.constantFrom(300, 2000, 6000).map((n) => ({ transform: undefined, fixed: { value: 'a'.repeat(n) } as PathValue | undefined })) },
    { weight: 2, arbitrary: fc.constantFrom(...RAW_SEGMENTS).map((value) => ({ transform: undefined, fixed: { value, raw: true } as PathValue | undefined })) },
  );
  return [
    {
      weight: 4,
      arbitrary: fc.tuple(valid, fc.nat(), variants).map(([c, n, v]): FuzzCase => {
        const name = pick(names, n);
        const current = c.pathParams[name]?.value ?? '';
        const next: PathValue = v.fixed ?? { value: v.transform === undefined ? current : v.transform(current) };
        const crossTenant = ctx.otherTenantIds?.includes(next.value) === true ? true : c.crossTenant;
        return { ...c, label: `path:${next.raw === true ? 'raw' : 'value'}@${name}`, pathParams: { ...c.pathParams, [name]: next }, crossTenant };
      }),
    },
  ];
}

function queryMutations(ctx: CaseContext, valid: fc.Arbitrary<FuzzCase>): { weight: number; arbitrary: Mutation }[] {
  const known = ctx.op.queryParams.map((p) => p.name);
  const keyArb = fc.oneof(fc.constantFrom(...(known.length > 0 ? known : ['limit']), ...EXTRA_KEYS.filter((k) => k.length < 50)), fc.string({ maxLength: 10 }));
  const valueArb = fc.oneof(fc.constantFrom(...QUERY_VALUES, ...ODD_STRINGS), fc.constantFrom(...PROTOTYPE_NAMES), fc.string({ maxLength: 20, unit: 'binary' }), fc.integer().map(String));
  const out: { weight: number; arbitrary: Mutation }[] = [
    { weight: 2, arbitrary: fc.tuple(valid, fc.array(fc.tuple(keyArb, valueArb), { minLength: 1, maxLength: 5 })).map(([c, pairs]) => ({ ...c, label: 'query:random', query: joinQuery(c.query, queryString(pairs)) })) },
    { weight: 1, arbitrary: fc.tuple(valid, fc.constantFrom(...RAW_QUERIES)).map(([c, raw]) => ({ ...c, label: 'query:raw', query: joinQuery(c.query, raw) })) },
    { weight: 1, arbitrary: fc.tuple(valid, keyArb, fc.constantFrom(1000, 8000)).map(([c, k, n]) => ({ ...c, label: 'query:long', query: joinQuery(c.query, queryString([[k, 'q'.repeat(n)]])) })) },
  ];
  if (known.length > 0) {
    out.push({
      weight: 4,
      arbitrary: fc.tuple(valid, fc.constantFrom(...known), fc.array(valueArb, { minLength: 1, maxLength: 3 })).map(([c, k, values]) => {
        const kept = c.query.split('&').filter((pair) => pair !== '' && !pair.startsWith(`${encodeSegment(k)}=`)).join('&');
        return { ...c, label: `query:known@${k}`, query: joinQuery(kept, queryString(values.map((v) => [k, v]))) };
      }),
    });
  }
  return out;
}

function headerMutations(ctx: CaseContext, valid: fc.Arbitrary<FuzzCase>): { weight: number; arbitrary: Mutation }[] {
  const out: { weight: number; arbitrary: Mutation }[] = [
    {
      weight: 2,
      arbitrary: fc
        .tuple(valid, fc.oneof(headerValueArbitrary(300), fc.constantFrom('x'.repeat(255), 'x'.repeat(256), 'y'.repeat(8000), '', ' ', 'a b', 'é', '\u00ff'.repeat(10))))
        .map(([c, key]) => ({ ...c, label: 'header:idempotency-key', headers: { ...c.headers, 'idempotency-key': key } })),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(valid, fc.oneof(fc.stringMatching(/^[A-Za-z0-9._:-]{8,128}$/), headerValueArbitrary(200), fc.constantFrom('short', 'r'.repeat(129), 'r'.repeat(8000), 'req_"><script>', 'a\tb c', '\u00e9'.repeat(20))))
        .map(([c, id]) => ({ ...c, label: 'header:x-request-id', headers: { ...c.headers, 'x-request-id': id } })),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(valid, fc.constantFrom('accept', 'accept-charset', 'accept-encoding', 'x-http-method-override', 'x-forwarded-for', 'x-forwarded-host', 'origin', 'cookie', 'range', 'if-none-match'), headerValueArbitrary(100)).map(([c, name, value]) => ({ ...c, label: `header:${name}`, headers: { ...c.headers, [name]: value } })),
    },
  ];
  if (ctx.op.secured) {
    out.push({
      weight: 2,
      arbitrary: fc.tuple(valid, authorizationVariants(ctx)).map(([c, a]): FuzzCase => {
        const headers = { ...c.headers };
        if (a.authorization !== undefined) headers.authorization = a.authorization;
        const crossTenant = a.label === 'other-workspace' ? true : c.crossTenant;
        return { ...c, label: `auth:${a.label}`, headers, anonymous: a.anonymous === true ? true : c.anonymous, crossTenant };
      }),
    });
  }
  return out;
}

/** Mutations of valid inputs: wrong types, odd strings, bad syntax, odd headers, paths and query strings. */
export function mutatedCaseArbitrary(ctx: CaseContext): fc.Arbitrary<FuzzCase> {
  const valid = validCaseArbitrary(ctx);
  const families = [
    ...(ctx.op.jsonBody !== undefined ? bodyMutations(ctx, valid) : []),
    ...(ctx.op.rawBodyTypes.length > 0 ? uploadMutations(ctx, valid) : []),
    ...(ctx.op.pathParams.length > 0 ? pathMutations(ctx, valid) : []),
    ...queryMutations(ctx, valid),
    ...headerMutations(ctx, valid),
  ];
  return fc.oneof(...families);
}

/** A quarter valid inputs, three quarters mutations. */
export function caseArbitrary(ctx: CaseContext): fc.Arbitrary<FuzzCase> {
  return fc.oneof({ weight: 1, arbitrary: validCaseArbitrary(ctx) }, { weight: 3, arbitrary: mutatedCaseArbitrary(ctx) });
}

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

// ---------------------------------------------------------------------------------------------------------------
// Sending and judging
// ---------------------------------------------------------------------------------------------------------------

export interface Answer {
  url: string;
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
  ms: number;
}

export type Outcome = { ok: true; answer: Answer } | { ok: false; url: string; error: string; harness: boolean };

export function urlFor(baseUrl: string, op: Operation, c: FuzzCase): string {
  const path = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const p = c.pathParams[name];
    if (p === undefined) return 'missing';
    return p.raw === true ? p.value : encodeSegment(p.value);
  });
  return `${baseUrl}${path}${c.query === '' ? '' : `?${c.query}`}`;
}

/** Sends one case. `key` is the API key used unless the case brings its own Authorization or none. */
export async function send(baseUrl: string, op: Operation, c: FuzzCase, key: string | undefined, timeoutMs = 30_000): Promise<Outcome> {
  const url = urlFor(baseUrl, op, c);
  const headers: Record<string, string> = {};
  if (op.secured && key !== undefined && c.anonymous !== true) headers.authorization = `Bearer ${key}`;
  Object.assign(headers, c.headers);
  let body: Uint8Array | string | ReadableStream<Uint8Array> | undefined;
  let duplex: 'half' | undefined;
  const b = op.method === 'GET' ? undefined : c.body;
  if (b !== undefined) {
    const defaultType = b.kind === 'json' || b.kind === 'text' ? 'application/json' : op.rawBodyTypes[0];
    const type = c.contentType === undefined ? defaultType : c.contentType;
    if (type !== null && type !== undefined) headers['content-type'] = type;
    const text = b.kind === 'json' ? (JSON.stringify(b.value) ?? 'null') : b.kind === 'text' ? b.text : undefined;
    if (text !== undefined) body = Buffer.from(text); // bytes: fetch adds no content type of its own
    else if (b.kind === 'bytes') body = b.bytes;
    else if (b.kind === 'stream') {
      const chunks = [...b.chunks];
      body = new ReadableStream<Uint8Array>({
        pull(controller) {
          const next = chunks.shift();
          if (next === undefined) controller.close();
          else controller.enqueue(next);
        },
      });
      duplex = 'half';
    }
  }
  const started = performance.now();
  try {
    const res = await fetch(url, { method: op.method, headers, body, duplex, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) } as RequestInit);
    const text = Buffer.from(await res.arrayBuffer()).toString('utf8');
    let json: unknown;
    if ((res.headers.get('content-type') ?? '').includes('json') && text.length > 0) {
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
    }
    return { ok: true, answer: { url, status: res.status, headers: res.headers, text, json, ms: performance.now() - started } };
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const harness = cause?.code === 'UND_ERR_INVALID_ARG' || (err instanceof TypeError && cause === undefined);
    const name = (err as Error).name;
    const error = name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : `${(err as Error).message}: ${cause?.code ?? ''} ${cause?.message ?? ''}`.trim();
    return { ok: false, url, error, harness };
  }
}

export interface JudgeContext {
  conformance: ResponseConformance;
  errorCodes: ReadonlySet<string>;
}

/** Problems with one answer (empty when it is acceptable). */
export function judge(op: Operation, c: FuzzCase, a: Answer, ctx: JudgeContext): string[] {
  const problems: string[] = [];
  if (a.status >= 500) problems.push(`answered ${a.status}`);
  else if (a.status < 200 || (a.status >= 300 && a.status < 400)) problems.push(`answered ${a.status}, neither 2xx nor 4xx`);
  if (c.crossTenant === true && a.status >= 200 && a.status < 300) problems.push(`another workspace's object or key answered ${a.status} (tenant isolation)`);
  const rid = a.headers.get('x-request-id');
  if (rid === null) {
    // Node's own parser answers a request that breaks HTTP before the application sees it.
    if (c.transport === true && a.status >= 400 && a.status < 500) return problems;
    problems.push('no X-Request-Id header');
  } else if (!/^[\x21-\x7e]{1,128}$/.test(rid)) {
    problems.push(`X-Request-Id ${JSON.stringify(rid.slice(0, 60))} is not plain`);
  }
  const sent = c.headers['x-request-id'];
  if (sent !== undefined && rid === sent && !/^[\x21-\x7e]{1,128}$/.test(sent)) problems.push('an unsafe X-Request-Id was reflected');
  if (a.status >= 400) {
    if (!(a.headers.get('content-type') ?? '').startsWith('application/json')) problems.push(`error answer with content-type ${a.headers.get('content-type')}`);
    const body = a.json;
    if (!isObject(body)) problems.push(`error body is not a JSON object: ${a.text.slice(0, 120)}`);
    else {
      if (typeof body.error !== 'string' || !ctx.errorCodes.has(body.error)) problems.push(`error code ${JSON.stringify(body.error)} is not in the catalogue`);
      if (typeof body.message !== 'string' || body.message.length === 0) problems.push('error message missing');
      if (typeof body.request_id !== 'string' || body.request_id !== rid) problems.push(`request_id ${JSON.stringify(body.request_id)} differs from X-Request-Id ${JSON.stringify(rid)}`);
    }
  }
  // A request the HTTP parser refuses never reaches the operation: its answer (431, 400) is in the error shape
  // checked above and documented once for the whole API, not per operation.
  if (c.transport === true && a.status >= 400 && a.status < 500) return problems;
  // The documented statuses and schemas apply when the URL still names this operation (a dot segment in a path
  // parameter, for instance, is resolved away by the URL parser and lands elsewhere).
  const pathname = new URL(a.url).pathname;
  if (ctx.conformance.templateFor(pathname) === op.path && (a.status < 300 || a.status >= 400)) {
    const found = ctx.conformance.check(op.method, pathname, a.status, a.json);
    problems.push(...found.map((p) => (p.length > 300 ? `${p.slice(0, 300)}…` : p)));
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------------------------
// The database
// ---------------------------------------------------------------------------------------------------------------

/**
 * What a rejected request must not change: the row counts of the main tables, and beyond counts the soft
 * deletes, revocations, last updates (the clock moves between cases), meters and balances.
 */
export const FINGERPRINT_PROBES: Readonly<Record<string, string>> = {
  contents: 'select count(*) from contents',
  jobs: 'select count(*) from jobs',
  brands: 'select count(*) from brands',
  connections: 'select count(*) from connections',
  webhooks: 'select count(*) from webhooks',
  api_keys: 'select count(*) from api_keys',
  media: 'select count(*) from media',
  credit_ledger: 'select count(*) from credit_ledger',
  idempotency_keys: 'select count(*) from idempotency_keys',
  idempotency_in_flight: "select count(*) from idempotency_keys where state <> 'done'",
  brands_live: 'select count(*) from brands where deleted_at is null',
  webhooks_live: 'select count(*) from webhooks where deleted_at is null',
  api_keys_live: 'select count(*) from api_keys where revoked_at is null',
  connections_active: "select count(*) from connections where status = 'active'",
  oauth_clients: 'select count(*) from oauth_clients',
  network_oauth_states: 'select count(*) from network_oauth_states',
  events: 'select count(*) from events',
  deliveries: 'select count(*) from deliveries',
  delivery_attempts: 'select count(*) from delivery_attempts',
  credit_batches: 'select count(*) from credit_batches',
  credit_remaining: 'select coalesce(sum(remaining), 0) from credit_batches',
  meters_used: 'select coalesce(sum(used), 0) from meter_counters',
  brands_updated: 'select max(updated_at) from brands',
  connections_updated: 'select max(updated_at) from connections',
  contents_updated: 'select max(updated_at) from contents',
  jobs_updated: 'select max(updated_at) from jobs',
  webhooks_updated: 'select max(updated_at) from webhooks',
  deliveries_updated: 'select max(updated_at) from deliveries',
  oauth_clients_updated: 'select max(updated_at) from oauth_clients',
};

const FINGERPRINT_SQL = `select ${Object.entries(FINGERPRINT_PROBES)
  .map(([name, query]) => `(${query}) as "${name}"`)
  .join(', ')}`;

export type Fingerprint = Record<string, string>;

export async function fingerprint(db: Kysely<Database>): Promise<Fingerprint> {
  const { rows } = await sql<Record<string, unknown>>`${sql.raw(FINGERPRINT_SQL)}`.execute(db);
  const row = rows[0] ?? {};
  return Object.fromEntries(Object.keys(FINGERPRINT_PROBES).map((k) => [k, row[k] === null || row[k] === undefined ? '-' : String(Number(row[k]))]));
}

export function fingerprintChanges(before: Fingerprint, after: Fingerprint, allowed: readonly string[] = []): string[] {
  return Object.keys(before)
    .filter((k) => before[k] !== after[k] && !allowed.includes(k))
    .map((k) => `${k}: ${before[k]} → ${after[k]}`);
}

// ---------------------------------------------------------------------------------------------------------------
// The runner
// ---------------------------------------------------------------------------------------------------------------

export interface Failure {
  /** Status, code and mutation family: failures with the same signature are one finding. */
  signature: string;
  count: number;
  example: string;
}

export interface FuzzReport {
  op: Operation;
  runs: number;
  seed: number;
  ms: number;
  /** `201`, `400 validation_failed`, … → count. */
  answers: Record<string, number>;
  failures: Failure[];
}

export interface FuzzOptions {
  baseUrl: string;
  db: Kysely<Database>;
  op: Operation;
  cases: fc.Arbitrary<FuzzCase>;
  /** Run once each, before the generated cases. */
  slow?: readonly FuzzCase[];
  numRuns: number;
  seed?: number;
  /** The API key to send (it may change during a run, e.g. after a key rotation). */
  key(): string | undefined;
  judge: JudgeContext;
  /** Called before each case (e.g. to move a manual clock so updates are visible). */
  beforeCase?(): void;
  /** Called after each answer (e.g. to follow a key rotation). */
  afterAnswer?(c: FuzzCase, a: Answer): Promise<void>;
  /** Fingerprint entries a rejected case may legitimately change (e.g. an idempotency record of the rejection). */
  allowedChanges?(c: FuzzCase, a: Answer): readonly string[];
  /** GET /healthz every this many cases (and at the end). */
  healthEvery?: number;
  /** The server's own account of a 5xx (e.g. from its error log), by request id; added to the finding. */
  explain?(requestId: string): string | undefined;
}

function excerpt(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s;
}

export function describeCase(op: Operation, c: FuzzCase, url: string): string {
  const body =
    c.body === undefined || op.method === 'GET'
      ? ''
      : c.body.kind === 'json'
        ? (JSON.stringify(c.body.value) ?? '')
        : c.body.kind === 'text'
          ? c.body.text
          : c.body.kind === 'bytes'
            ? `bytes ${Buffer.from(c.body.bytes).toString('hex').slice(0, 200)}`
            : `chunked ${c.body.chunks.length} chunks`;
  const headers = { ...c.headers, ...(c.contentType !== undefined ? { 'content-type': c.contentType } : {}) };
  return [
    `${op.method} ${excerpt(url, 300)}`,
    `  case: ${c.label}${c.anonymous === true ? ' (no credential)' : ''}`,
    Object.keys(headers).length > 0 ? `  headers: ${excerpt(JSON.stringify(headers), 300)}` : '',
    body !== '' ? `  body: ${excerpt(JSON.stringify(body), 400)}` : '',
  ]
    .filter((l) => l !== '')
    .join('\n');
}

async function healthy(baseUrl: string): Promise<string | null> {
  try {
    const res = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(10_000) });
    await res.arrayBuffer();
    return res.status === 200 ? null : `GET /healthz answered ${res.status}`;
  } catch (err) {
    return `GET /healthz failed: ${(err as Error).message}`;
  }
}

/** Runs the slow cases, then `numRuns` generated cases, judging each; collects failures instead of stopping. */
export async function fuzzOperation(o: FuzzOptions): Promise<FuzzReport> {
  const started = performance.now();
  const seed = o.seed ?? (Date.now() ^ (Math.random() * 0x100000000)) | 0;
  const answers: Record<string, number> = {};
  const failures = new Map<string, Failure>();
  const healthEvery = o.healthEvery ?? 50;
  let before = await fingerprint(o.db);
  let n = 0;

  const record = (signature: string, example: string) => {
    const f = failures.get(signature);
    if (f) f.count++;
    else failures.set(signature, { signature, count: 1, example });
  };

  const runCase = async (c: FuzzCase): Promise<void> => {
    o.beforeCase?.();
    const outcome = await send(o.baseUrl, o.op, c, o.key());
    const family = c.label.split(/[@=]/)[0] ?? c.label;
    if (!outcome.ok) {
      if (outcome.harness) throw new Error(`the fuzzer built a request fetch refuses (${outcome.error}):\n${describeCase(o.op, c, outcome.url)}`);
      record(`no answer (${outcome.error.slice(0, 80)}) [${family}]`, `${describeCase(o.op, c, outcome.url)}\n  → ${outcome.error}`);
      before = await fingerprint(o.db);
    } else {
      const a = outcome.answer;
      const code = isObject(a.json) && typeof a.json.error === 'string' ? ` ${a.json.error}` : '';
      answers[`${a.status}${code}`] = (answers[`${a.status}${code}`] ?? 0) + 1;
      const problems = judge(o.op, c, a, o.judge);
      await o.afterAnswer?.(c, a);
      const after = await fingerprint(o.db);
      const rejected = a.status < 200 || a.status >= 300;
      if (rejected || o.op.method === 'GET') {
        const changes = fingerprintChanges(before, after, rejected ? (o.allowedChanges?.(c, a) ?? []) : []);
        if (changes.length > 0) problems.push(`database changed: ${changes.join(', ')}`);
      }
      before = after;
      if (problems.length > 0) {
        const rid = a.headers.get('x-request-id');
        const why = a.status >= 500 && rid !== null ? o.explain?.(rid) : undefined;
        const cause = why === undefined ? '' : ` ${why.replace(/(["'`]).*?\1/g, '…').replace(/\d+/g, 'N').slice(0, 100)}`;
        const logged = why === undefined ? '' : `\n  server log: ${why}`;
        record(`${a.status}${code} [${family}]${cause}`, `${describeCase(o.op, c, a.url)}\n  → ${a.status} ${excerpt(a.text, 300)}${logged}\n  problems: ${problems.join('; ')}`);
      }
    }
    n++;
    if (n % healthEvery === 0) {
      const sick = await healthy(o.baseUrl);
      if (sick !== null) record('server unhealthy', `${sick} after ${describeCase(o.op, c, outcome.ok ? outcome.answer.url : outcome.url)}`);
    }
  };

  for (const c of o.slow ?? []) await runCase(c);
  await fc.assert(
    fc.asyncProperty(o.cases, async (c) => {
      await runCase(c);
    }),
    { numRuns: o.numRuns, seed, endOnFailure: true },
  );
  const sick = await healthy(o.baseUrl);
  if (sick !== null) record('server unhealthy', `${sick} at the end of the run`);
  return { op: o.op, runs: n, seed, ms: performance.now() - started, answers, failures: [...failures.values()] };
}

export function formatFailures(report: FuzzReport): string {
  const lines = [`${report.op.method} ${report.op.path}: ${report.failures.length} finding(s) in ${report.runs} cases (FUZZ_SEED=${report.seed})`];
  for (const f of report.failures) lines.push(`\n● ${f.signature} ×${f.count}\n${f.example}`);
  return lines.join('\n');
}

export function formatAnswers(report: FuzzReport): string {
  const answers = Object.entries(report.answers)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k}×${v}`)
    .join(', ');
  return `${report.op.id}: ${report.runs} cases in ${(report.ms / 1000).toFixed(1)} s — ${answers}`;
}
