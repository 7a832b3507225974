import { z } from 'zod';

/**
 * The error catalogue (spec 7.2): every code the service answers with, its HTTP status and the extra body
 * fields it carries. Doors map a `ServiceError` through this table; nothing else decides a status.
 */
export const errorCatalogue = {
  validation_failed: { status: 400, description: 'The body, query or path is invalid against the schema; the message names the field path.' },
  invalid_request: { status: 400, description: 'Malformed JSON, wrong Content-Type or a missing header.' },
  invalid_api_key: { status: 401, description: 'API key missing, malformed, revoked or unknown.' },
  invalid_token: { status: 401, description: 'OAuth access token expired or revoked; re-authenticate.' },
  saldo_insuficiente: { status: 402, description: 'The credit balance does not cover the operation.' },
  saldo_fragmentado: { status: 402, description: 'The total balance suffices but no single credit batch is large enough.' },
  lote_vencido: { status: 402, description: 'The chosen credit batch expired between choice and charge; nothing was spent.' },
  operacao_sem_preco: { status: 402, description: 'The operation has no published price; it fails closed; nothing was spent.' },
  forbidden: { status: 403, description: 'The credential does not belong to the workspace in the path.' },
  limit_reached: { status: 403, description: 'The plan reached the ceiling of a meter.' },
  not_found: { status: 404, description: 'The resource does not exist or is not the caller\'s.' },
  idempotency_conflict: { status: 409, description: 'Idempotency-Key reused with a different body.' },
  payload_too_large: { status: 413, description: 'The request body exceeds the size limit.' },
  connections_required: { status: 422, description: 'The brand has several connections on a target platform and none was chosen.' },
  platform_not_supported: { status: 422, description: 'content_type is incompatible with the platform.' },
  media_too_large: { status: 422, description: 'A media file exceeds the platform limit.' },
  caption_too_long: { status: 422, description: 'The text exceeds the platform limit.' },
  rate_limited: { status: 429, description: 'More than the allowed requests per minute for the workspace; see Retry-After.' },
  server_error: { status: 500, description: 'Internal fault; retry with backoff and quote request_id.' },
} as const satisfies Record<string, { status: number; description: string }>;

export type ErrorCode = keyof typeof errorCatalogue;

export const ERROR_CODES = Object.keys(errorCatalogue) as ErrorCode[];

/** The error body of spec 2.8; rows of 7.2 add their own fields beside these three. */
export const errorBodySchema = z
  .object({
    error: z.enum(ERROR_CODES as [ErrorCode, ...ErrorCode[]]).describe('Machine-readable error code (spec 7.2).'),
    message: z.string().describe('Human-readable explanation; for validation failures it names the field path.'),
    request_id: z.string().describe('Tracing id, equal to the X-Request-Id response header.'),
  })
  .catchall(z.unknown())
  .meta({ id: 'Error', description: 'Error body. Some codes add fields documented with the code.' });

export type ErrorBody = z.infer<typeof errorBodySchema>;

/**
 * An expected failure raised by the core. `extra` holds the row's additional body fields
 * (e.g. `meter`, `limit`, `used`, `resolve` for `limit_reached`).
 */
export class ServiceError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ServiceError';
  }

  get status(): number {
    return errorCatalogue[this.code].status;
  }
}

/** The fixed text sent for faults we did not expect; details go to the log only. */
export const SERVER_ERROR_MESSAGE = 'An internal error occurred. Retry with backoff and quote the request_id if it persists.';

/** Renders a zod issue path the way integrators write it: `media[0].url`. */
export function formatIssuePath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out.length === 0 ? String(part) : `.${String(part)}`;
  }
  return out;
}

/** Turns a zod failure into `validation_failed`, naming every offending path. */
export function validationError(error: z.ZodError, where?: 'body' | 'query' | 'path' | 'header'): ServiceError {
  const parts = error.issues.slice(0, 10).map((issue) => {
    const path = formatIssuePath(issue.path);
    const label = path.length > 0 ? path : where === undefined ? '(root)' : `(${where})`;
    return `${label}: ${issue.message}`;
  });
  const fields = error.issues.map((issue) => ({ path: formatIssuePath(issue.path), message: issue.message }));
  return new ServiceError('validation_failed', parts.join('; '), { fields });
}
