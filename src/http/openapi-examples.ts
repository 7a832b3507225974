import { sample } from 'openapi-sampler';

/** The parts of a generated document this step reads and writes. */
interface MediaType {
  schema?: object;
  example?: unknown;
  examples?: unknown;
}
interface Operation {
  requestBody?: { content?: Record<string, MediaType> } | { $ref: string };
  responses?: Record<string, { content?: Record<string, MediaType> } | { $ref: string }>;
}
type Document = { paths?: Record<string, Record<string, unknown>> };

const METHODS = new Set(['get', 'put', 'post', 'patch', 'delete']);

/** Only bodies a reader types or reads as text get an example; a file upload is shown by its description. */
function sampled(type: string): boolean {
  return type === 'application/json' || type === 'application/x-www-form-urlencoded';
}

function fill(content: Record<string, MediaType> | undefined, document: object): void {
  for (const [type, media] of Object.entries(content ?? {})) {
    if (!sampled(type) || media.schema === undefined || media.example !== undefined || media.examples !== undefined) continue;
    // Read-only and write-only do not occur in our schemas; `quiet` keeps the sampler from warning on the console.
    media.example = sample(media.schema as Parameters<typeof sample>[0], { quiet: true }, document);
  }
}

/**
 * Gives every request body and every success answer that has no hand-written example one generated from its
 * schema (Redocly's openapi-sampler), so each operation in the reference shows what to send and what comes
 * back. Mutates `document`, which the caller has just generated.
 */
export function fillMissingExamples(document: object): void {
  for (const item of Object.values((document as Document).paths ?? {})) {
    for (const [method, value] of Object.entries(item)) {
      if (!METHODS.has(method)) continue;
      const op = value as Operation;
      if (op.requestBody !== undefined && !('$ref' in op.requestBody)) fill(op.requestBody.content, document);
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        if (status.startsWith('2') && !('$ref' in response)) fill(response.content, document);
      }
    }
  }
}
