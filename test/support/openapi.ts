import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';

/**
 * The served /openapi.yaml as the tests read it: one reader of its operations (the authorization matrix and the
 * fuzzer both start from it) and a checker of real answers against it.
 */

/** The part of JSON Schema the document's schemas use (zod's OpenAPI 3.1 output). */
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

/** An operation object as the document writes it. */
export interface OperationDoc {
  operationId?: string;
  parameters?: ParameterDoc[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>;
  security?: Record<string, string[]>[];
}

export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, OperationDoc>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

export function parseOpenApi(yamlText: string): OpenApiDocument {
  return parse(yamlText) as OpenApiDocument;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** One operation of the document, named; `doc` is the operation object as written. */
export interface DocumentOperation {
  /** `METHOD /template`. */
  key: string;
  /** Upper case. */
  method: string;
  /** The OpenAPI template, e.g. `/api/v1/workspaces/{wsId}/brands`. */
  path: string;
  /** The document's operationId, else `key`. */
  operationId: string;
  doc: OperationDoc;
}

/** Every operation of the document, in the document's order (paths, then methods as written). */
export function documentOperations(doc: OpenApiDocument): DocumentOperation[] {
  const out: DocumentOperation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      const key = `${method.toUpperCase()} ${path}`;
      out.push({ key, method: method.toUpperCase(), path, operationId: op.operationId ?? key, doc: op });
    }
  }
  return out;
}

/** Checks real responses against the served OpenAPI document. */
export class ResponseConformance {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly cache = new Map<string, ValidateFunction>();
  private readonly templates: { template: string; regex: RegExp }[];

  constructor(readonly doc: OpenApiDocument) {
    (addFormats as unknown as (ajv: Ajv2020) => void)(this.ajv);
    this.templates = Object.keys(doc.paths).map((template) => ({
      template,
      regex: new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`),
    }));
  }

  static fromYaml(text: string): ResponseConformance {
    return new ResponseConformance(parseOpenApi(text));
  }

  /** The operation template for a concrete path, or undefined if the document has none. */
  templateFor(path: string): string | undefined {
    return this.templates.find((t) => t.regex.test(path))?.template;
  }

  /** Problems of `value` against `schema` (a schema of the document, its `$ref`s resolved in it); empty when valid. */
  checkValue(schema: JsonSchema, value: unknown, label: string): string[] {
    const validate = this.ajv.compile({ ...schema, components: this.doc.components });
    if (validate(value)) return [];
    return (validate.errors ?? []).map((e) => `${label}: ${e.instancePath} ${e.message ?? ''}`);
  }

  /**
   * Returns a list of problems (empty when the response conforms): the path and method must be documented,
   * the status must be among the operation's responses, and a JSON body must match its schema.
   */
  check(method: string, path: string, status: number, body: unknown): string[] {
    const template = this.templateFor(path);
    if (!template) return [`${method} ${path}: path not in the document`];
    const op = this.doc.paths[template]?.[method.toLowerCase()];
    if (!op) return [`${method} ${template}: method not in the document`];
    const response = op.responses?.[String(status)];
    if (!response) return [`${method} ${template}: status ${status} not documented`];
    const schema = response.content?.['application/json']?.schema;
    if (!schema) return body === undefined ? [] : [`${method} ${template} ${status}: body not documented`];
    const key = `${method} ${template} ${status}`;
    let validate = this.cache.get(key);
    if (!validate) {
      validate = this.ajv.compile({ ...schema, components: this.doc.components });
      this.cache.set(key, validate);
    }
    if (validate(body)) return [];
    return (validate.errors ?? []).map((e) => `${key}: ${e.instancePath} ${e.message ?? ''}`);
  }
}
