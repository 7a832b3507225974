/**
 * fast-check generators from the document's schemas: values valid as far as a schema (and the caller's hints)
 * can tell, the valid cases of an operation built from them, and the wrong values the mutations substitute.
 */
import fc from 'fast-check';
import type { JsonSchema, OpenApiDocument } from '../openapi.js';
import type { Body, CaseContext, FuzzCase, PathValue } from './case.js';
import { resolveSchema } from './document.js';
import { ODD_STRINGS, ODD_URLS } from './hostile-values.js';
import { queryString } from './url-encoding.js';

/** A URI that no test run will actually reach: a reserved `.invalid` name, or an address the server must refuse. */
export const uriArbitrary: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...ODD_URLS),
  fc.tuple(fc.stringMatching(/^[a-z0-9-]{1,20}$/), fc.webPath()).map(([label, path]) => `https://${label}.invalid${path}`),
);

/** A field name or parameter name → an arbitrary for it (for ids and other values the schema cannot tell). */
export type Hints = Readonly<Record<string, fc.Arbitrary<unknown>>>;

export interface GenContext {
  doc: OpenApiDocument;
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

/** The item `n` lands on, cycling through `items` (a generated number picks a place in a generated value). */
export function pick<T>(items: readonly T[], n: number): T {
  const item = items[n % items.length];
  if (item === undefined) throw new Error('pick from an empty list');
  return item;
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
export const wrongValueArbitrary: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, -0, 2 ** 53 + 2, -(2 ** 63), 1e308, '', [], {}, [null], { '': null }),
  fc.integer(),
  fc.double(),
  fc.string({ maxLength: 10 }),
  fc.jsonValue({ maxDepth: 2 }),
);
