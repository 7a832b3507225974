import { z } from 'zod';
import { issuePredicate, possiblePredicates } from './validation-messages.js';
import { PLATFORM_SLUGS } from '../vocabulary/platforms.js';
import { CONTENT_STATUSES } from '../vocabulary/content-statuses.js';
import { METERS } from './meters/plans.js';
import { PAYMENT_MODES } from './wallet/wallet.schema.js';

// Every door (REST, MCP, dashboard forms, configuration) reads zod's messages; they are ours wherever a schema
// has none of its own (zod gives a schema's message precedence over customError).
z.config({ customError: (issue) => issuePredicate(issue) });

const platformSlug = z.enum(PLATFORM_SLUGS).describe('The platform the refusal is about.');
const recoverable = z.literal(true).describe('The same request can succeed later (after buying credit, changing modo, or at once for a retry).');
const fieldsSchema = z
  .array(z.object({ path: z.string().describe('The field path, as in the message: `media[0].url`, `Idempotency-Key`.'), message: z.string() }))
  .describe('Every offending field with what is wrong with it.');
const none = z.object({});

/**
 * The error catalogue (spec 7.2): every code the service answers with, its HTTP status and the extra body
 * fields it carries (`extra`, a zod object). Doors map a `ServiceError` through this table; nothing else decides a
 * status, and `ServiceError`'s constructor only accepts the extra fields of its code's row.
 */
export const errorCatalogue = {
  validation_failed: {
    status: 400,
    description: 'The body, query or path is invalid against the schema; the message names the field path.',
    extra: z.object({ fields: fieldsSchema.optional() }),
  },
  invalid_request: { status: 400, description: 'Malformed JSON, wrong Content-Type or a missing header.', extra: none },
  invalid_api_key: { status: 401, description: 'API key missing, malformed, revoked or unknown.', extra: none },
  invalid_token: { status: 401, description: 'OAuth access token expired or revoked; re-authenticate.', extra: none },
  saldo_insuficiente: {
    status: 402,
    description: 'The credit balance does not cover the operation.',
    extra: z.object({
      meter: z.string().describe('The meter the operation is paid on instead of the plan (e.g. publicacoes).'),
      modo: z.enum(PAYMENT_MODES).describe('The modo the request used.'),
      preco_unitario: z.number().int().describe('Credits per unit of the operation.'),
      custo_estimado: z.number().int().describe('Credits the whole request needs.'),
      saldo_disponivel: z.number().int().describe('Credits available now, all batches together.'),
      recoverable,
    }),
  },
  saldo_fragmentado: {
    status: 402,
    description: 'The total balance suffices but no single credit batch is large enough.',
    extra: z.object({
      meter: z.string().describe('The meter the operation is paid on instead of the plan (e.g. publicacoes).'),
      modo: z.enum(PAYMENT_MODES).describe('The modo the request used.'),
      custo_estimado: z.number().int().describe('Credits the whole request needs, from one batch.'),
      saldo_disponivel: z.number().int().describe('Credits available now, all batches together.'),
      maior_lote_disponivel: z.number().int().describe('Credits left in the largest single batch.'),
      recoverable,
    }),
  },
  lote_vencido: {
    status: 402,
    description: 'The chosen credit batch expired between choice and charge; nothing was spent.',
    extra: z.object({ lote_id: z.string().describe('The batch that expired.'), recoverable }),
  },
  operacao_sem_preco: {
    status: 402,
    description: 'The operation has no published price; it fails closed; nothing was spent.',
    extra: z.object({ operacao: z.string().describe('The operation without a price.') }),
  },
  forbidden: {
    status: 403,
    description: "The credential does not belong to the workspace in the path, or its role or brands do not allow the operation.",
    extra: z.object({ permission: z.string().optional().describe("The permission the credential's role or brands lack (e.g. contents.publish); absent for another workspace.") }),
  },
  limit_reached: {
    status: 403,
    description: 'The plan reached the ceiling of a meter.',
    // spec 7.3: the same body for stock and per-cycle meters.
    extra: z.object({
      meter: z.enum(METERS).describe('The meter at its ceiling (spec 7.3).'),
      limit: z.number().int().describe("The plan's ceiling for the meter."),
      used: z.number().int().describe('How much of it is used.'),
      resolve: z
        .enum(['upgrade', 'desativar_outra'])
        .describe('upgrade: a larger plan raises the ceiling; desativar_outra: free a slot by deactivating another item.'),
    }),
  },
  not_found: { status: 404, description: 'The resource does not exist or is not the caller\'s.', extra: none },
  idempotency_conflict: { status: 409, description: 'Idempotency-Key reused with a different body.', extra: none },
  content_not_editable: {
    status: 409,
    description:
      'The content is no longer a draft or scheduled (publishing started, it finished, or it was canceled): it cannot be edited, canceled or published now. Also a review step asked of a content not waiting for it (approving one that is not pending_approval, or that changed meanwhile; publishing now one that waits for approval).',
    extra: z.object({ status: z.enum(CONTENT_STATUSES).describe('The content status that refused the change (a review step also refuses a content that is not waiting for it).') }),
  },
  media_in_use: {
    status: 409,
    description: 'The upload is used by a content that may still publish (draft, scheduled or publishing): delete or edit those first, or wait until they finish.',
    extra: z.object({
      contents: z
        .array(z.object({ content_id: z.string(), status: z.enum(CONTENT_STATUSES) }))
        .describe('The contents that still need the file.'),
    }),
  },
  last_owner: {
    status: 409,
    description: 'The change would leave the workspace without an owner: make another member owner first.',
    extra: none,
  },
  payload_too_large: { status: 413, description: 'The request body exceeds the size limit.', extra: none },
  connections_required: {
    status: 422,
    description: 'The brand has several connections on a target platform and none was chosen.',
    extra: z.object({
      connections: z
        .array(z.object({ id: z.string().describe('Connection id (conn_…).'), name: z.string(), platform_slug: z.string().describe('Platform identifier.') }))
        .describe('The candidate connections; resend with target_connections naming one per platform.'),
    }),
  },
  platform_not_supported: {
    status: 422,
    description: 'content_type is incompatible with the platform.',
    extra: z.object({ platform_slug: platformSlug }),
  },
  media_too_large: {
    status: 422,
    description: 'A media file exceeds the platform limit.',
    extra: z.object({ platform_slug: platformSlug, limit: z.number().int().describe('The largest size accepted, in bytes.'), fields: fieldsSchema }),
  },
  media_unsupported_format: {
    // 422 as media_too_large (spec 7.2): the request is well formed, the target network cannot take the file.
    status: 422,
    description: "A media file's type is one the target platform refuses for this content type (e.g. a PNG for an Instagram photo); nothing was created or charged.",
    extra: z.object({
      platform_slug: platformSlug,
      accepted: z.array(z.string()).describe('The media types (MIME) the platform accepts here.'),
      fields: fieldsSchema,
    }),
  },
  caption_too_long: {
    status: 422,
    description: 'The text exceeds the platform limit.',
    extra: z.object({ platform_slug: platformSlug, limit: z.number().int().describe('The most characters accepted.'), fields: fieldsSchema }),
  },
  rate_limited: { status: 429, description: 'More than the allowed requests per minute for the workspace; see Retry-After.', extra: none },
  server_error: { status: 500, description: 'Internal fault; retry with backoff and quote request_id.', extra: none },
} as const satisfies Record<string, { status: number; description: string; extra: z.ZodObject }>;

export type ErrorCode = keyof typeof errorCatalogue;

export const ERROR_CODES = Object.keys(errorCatalogue) as ErrorCode[];

/** The extra body fields of `code`'s row, as the core passes them. */
export type ErrorExtra<C extends ErrorCode> = z.input<(typeof errorCatalogue)[C]['extra']>;

const errorField = z.enum(ERROR_CODES as [ErrorCode, ...ErrorCode[]]).describe('Machine-readable error code (spec 7.2).');
const messageField = z.string().describe('Human-readable explanation; for validation failures it names the field path.');
const requestIdField = z.string().describe('Tracing id, equal to the X-Request-Id response header.');

/** The error body of spec 2.8 whatever the code; rows of 7.2 add their own fields beside these three. */
export const errorBodySchema = z
  .object({ error: errorField, message: messageField, request_id: requestIdField })
  .catchall(z.unknown())
  .meta({ id: 'Error', description: 'Error body. Some codes add fields documented with the code.' });

export type ErrorBody = z.infer<typeof errorBodySchema>;

/** `limit_reached` → `LimitReachedError`, the name of the code's body in the OpenAPI document. */
function componentName(code: ErrorCode): string {
  return `${code.replace(/(^|_)([a-z])/g, (_m, _sep: string, c: string) => c.toUpperCase())}Error`;
}

function bodyOf<C extends ErrorCode>(code: C) {
  const row = errorCatalogue[code];
  return z
    .strictObject({ error: z.literal(code).describe(errorField.description ?? ''), message: messageField, request_id: requestIdField, ...row.extra.shape })
    .meta({ id: componentName(code), description: `${row.status} \`${code}\`: ${row.description}` });
}

/** Each code's exact body (spec 7.2): the three common fields and the row's `extra`, nothing else. */
export const errorBodySchemas = Object.fromEntries(ERROR_CODES.map((code) => [code, bodyOf(code)])) as {
  [C in ErrorCode]: ReturnType<typeof bodyOf<C>>;
};

/** The body every door sends for an error (spec 7.1): `{error, message, request_id, ...extra}`. */
export function errorBody(code: ErrorCode, message: string, requestId: string, extra: Readonly<Record<string, unknown>> = {}): ErrorBody {
  return { ...extra, error: code, message, request_id: requestId };
}

/** The extra argument: optional where the row has no required field. */
type ExtraArg<C extends ErrorCode> = Record<string, never> extends ErrorExtra<C> ? [extra?: ErrorExtra<C>] : [extra: ErrorExtra<C>];

/**
 * An expected failure raised by the core. `extra` holds the row's additional body fields
 * (e.g. `meter`, `limit`, `used`, `resolve` for `limit_reached`); the compiler holds them to the catalogue.
 */
export class ServiceError<C extends ErrorCode = ErrorCode> extends Error {
  readonly extra: Readonly<Record<string, unknown>>;

  constructor(
    readonly code: C,
    message: string,
    ...[extra]: ExtraArg<C>
  ) {
    super(message);
    this.name = 'ServiceError';
    this.extra = extra ?? {};
  }

  get status(): number {
    return errorCatalogue[this.code].status;
  }

  /** The body every door sends for this error (spec 7.1), REST as JSON, MCP as the result's text. */
  toBody(requestId: string): ErrorBody {
    return errorBody(this.code, this.message, requestId, this.extra);
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

const ROOT_LABELS = { body: 'the request body', query: 'the query string', path: 'the path', header: 'the headers' } as const;

/**
 * Turns a zod failure into `validation_failed`, naming every offending path in a sentence a person can act on
 * ("brand_id is required; content_type must be one of text, photo, video, reel, thread; unknown field foo").
 * `fields` keeps one entry per field with its path; an unknown field is named by its own path.
 */
export function validationError(error: z.ZodError, where?: 'body' | 'query' | 'path' | 'header'): ServiceError {
  const parts: string[] = [];
  const fields: { path: string; message: string }[] = [];
  for (const issue of error.issues) {
    const path = formatIssuePath(issue.path);
    const ours = possiblePredicates(issue).includes(issue.message);
    if (issue.code === 'unrecognized_keys' && ours) {
      for (const key of issue.keys) {
        const keyPath = formatIssuePath([...issue.path, key]);
        parts.push(`unknown field ${keyPath}`);
        fields.push({ path: keyPath, message: 'unknown field' });
      }
      continue;
    }
    const label = path.length > 0 ? path : where === undefined ? 'the input' : ROOT_LABELS[where];
    // A schema's own sentence names its subject already; ours is a predicate that needs the field in front.
    parts.push(ours ? `${label} ${issue.message}` : path.length > 0 ? `${path}: ${issue.message}` : issue.message);
    fields.push({ path, message: issue.message });
  }
  return new ServiceError('validation_failed', parts.slice(0, 10).join('; '), { fields });
}
