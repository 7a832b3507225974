import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';

interface OperationDoc {
  responses: Record<string, { content?: Record<string, { schema: object }> }>;
}
export interface OpenApiDoc {
  openapi: string;
  paths: Record<string, Record<string, OperationDoc>>;
  components?: object;
}

/** Checks real responses against the served OpenAPI document. */
export class ResponseConformance {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly cache = new Map<string, ValidateFunction>();
  private readonly templates: { template: string; regex: RegExp }[];

  constructor(readonly doc: OpenApiDoc) {
    (addFormats as unknown as (ajv: Ajv2020) => void)(this.ajv);
    this.templates = Object.keys(doc.paths).map((template) => ({
      template,
      regex: new RegExp(`^${template.replace(/\{\w+\}/g, '[^/]+')}$`),
    }));
  }

  static fromYaml(text: string): ResponseConformance {
    return new ResponseConformance(parse(text) as OpenApiDoc);
  }

  /** The operation template for a concrete path, or undefined if the document has none. */
  templateFor(path: string): string | undefined {
    return this.templates.find((t) => t.regex.test(path))?.template;
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
    const response = op.responses[String(status)];
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
