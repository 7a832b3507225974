/**
 * The served document reduced to what the fuzzer varies: per operation its parameters, its JSON or raw body and
 * whether it needs a credential; and the error codes the catalogue allows.
 */
import { documentOperations, type JsonSchema, type OpenApiDocument, type ParameterDoc } from '../openapi.js';

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

/**
 * The fuzz suite's order within a path, whatever order the document writes the methods in: GET, POST, PUT, PATCH,
 * DELETE (a list runs before the creations add to what it lists).
 */
const METHOD_ORDER = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * The operations that take input the fuzzer can vary: a JSON body, a raw (upload) body, query or path parameters.
 * `exclude` drops operations by path (e.g. protocol endpoints owned by a library).
 */
export function operationsTakingInput(doc: OpenApiDocument, exclude: (path: string, method: string) => boolean = () => false): Operation[] {
  const paths = Object.keys(doc.paths);
  const rank = (o: { path: string; method: string }) => paths.indexOf(o.path) * METHOD_ORDER.length + METHOD_ORDER.indexOf(o.method);
  const out: Operation[] = [];
  for (const { method, path, operationId, doc: op } of documentOperations(doc).sort((a, b) => rank(a) - rank(b))) {
    if (exclude(path, method)) continue;
    const params = op.parameters ?? [];
    const content = op.requestBody?.content ?? {};
    const jsonBody = content['application/json']?.schema;
    const rawBodyTypes = Object.keys(content).filter((t) => t !== 'application/json');
    const operation: Operation = {
      id: operationId,
      method,
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
  return out;
}

/** The error codes the document's `Error` schema lists. */
export function errorCodesOf(doc: OpenApiDocument): Set<string> {
  const codes = doc.components?.schemas?.Error?.properties?.error?.enum ?? [];
  return new Set(codes.map(String));
}

/** The schema a `$ref` names (followed up to 20 times). */
export function resolveSchema(schema: JsonSchema, doc: OpenApiDocument): JsonSchema {
  let s = schema;
  for (let i = 0; i < 20 && s.$ref !== undefined; i++) {
    const name = s.$ref.replace('#/components/schemas/', '');
    const target = doc.components?.schemas?.[name];
    if (target === undefined) throw new Error(`unresolvable $ref ${s.$ref}`);
    s = target;
  }
  return s;
}
