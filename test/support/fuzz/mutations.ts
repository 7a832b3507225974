/**
 * Hostile variants of a valid request: the body's (body-mutations.ts), an upload's, each path parameter's, the
 * query string's, the headers' and the credential's; and the mix of valid and mutated cases the fuzzer sends.
 */
import fc from 'fast-check';
import { headerValueArbitrary, pick, validCaseArbitrary } from './arbitraries.js';
import { bodyMutations } from './body-mutations.js';
import type { CaseContext, FuzzCase, Mutation, PathValue } from './case.js';
import { CONTENT_ENCODINGS, EXTRA_KEYS, ODD_CONTENT_TYPES, ODD_STRINGS, PROTOTYPE_NAMES, QUERY_VALUES, RAW_QUERIES, RAW_SEGMENTS } from './hostile-values.js';
import { encodeSegment, joinQuery, queryString } from './url-encoding.js';

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
