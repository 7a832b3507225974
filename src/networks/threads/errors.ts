import { JOB_ERROR_MESSAGES, type JobErrorCode } from '../../vocabulary/job-errors.js';
import type { NetworkFailure } from '../adapter.js';
import type { NetworkDeps } from '../network-oauth.js';

/**
 * A failed Threads Graph API call, reduced to what the error table looks at. `status` 0 means no answer at all
 * (refused connection, reset, timeout).
 */
export interface GraphError {
  status: number;
  code: number | null;
  subcode: number | null;
  /** The network's own text: matched against, logged, never shown to a client. */
  message: string;
  transient: boolean;
}

/** One row of the error table (spec 7.4): which failures it sorts, and into what. */
export interface ErrorRow {
  name: string;
  matches(e: GraphError): boolean;
  code: JobErrorCode;
  retryable: boolean;
  /** Our own sentence when the generic one for `code` would mislead. */
  message?: string;
}

const codeIs = (...codes: number[]) => (e: GraphError) => e.code !== null && codes.includes(e.code);
const eitherCodeIs = (...codes: number[]) => (e: GraphError) => codes.some((c) => c === e.code || c === e.subcode);
const says = (re: RegExp) => (e: GraphError) => re.test(e.message);

/**
 * Threads' failures in the order they are tried (the first match wins). Sources: the Threads and Instagram
 * Graph API error references and /work/shared/notes/networks.md. Restriction and quota rows come before the
 * generic permission and throttling rows because Meta sends them with those generic codes too.
 */
export const THREADS_ERROR_TABLE: readonly ErrorRow[] = [
  { name: 'no answer (network error or timeout)', matches: (e) => e.status === 0, code: 'upstream_5xx', retryable: true },
  { name: 'access token invalid or expired (190)', matches: codeIs(190), code: 'token_expired', retryable: false },
  { name: 'account restricted (2207051, 4279013)', matches: eitherCodeIs(2207051, 4279013), code: 'permission_revoked', retryable: false },
  {
    name: 'publishing quota used up (2207042)',
    matches: (e) => e.subcode === 2207042 || says(/publishing limit|quota|maximum number of (posts|replies)/i)(e),
    code: 'quota_exceeded',
    retryable: false,
  },
  { name: 'permission missing (10, 200-299)', matches: (e) => e.code === 10 || (e.code !== null && e.code >= 200 && e.code <= 299), code: 'permission_revoked', retryable: false },
  { name: 'throttled (4, 17, 32, 613)', matches: codeIs(4, 17, 32, 613), code: 'upstream_5xx', retryable: true },
  { name: 'media could not be fetched', matches: says(/could not be fetched|FAILED_DOWNLOADING/i), code: 'media_unsupported_format', retryable: false },
  { name: 'media too large (2207004)', matches: (e) => e.subcode === 2207004 || says(/too large/i)(e), code: 'media_too_large', retryable: false },
  {
    name: 'text over 500 characters',
    matches: says(/at most 500 characters|text.*too long/i),
    code: 'upstream_unknown',
    retryable: false,
    message: "The text is over Threads' 500-character limit (emojis count as several characters).",
  },
  { name: 'media not ready yet (9007, 2207027)', matches: eitherCodeIs(9007, 2207027), code: 'upstream_5xx', retryable: true },
  { name: 'transient Graph error (is_transient, 1, 2)', matches: (e) => e.transient || e.code === 1 || e.code === 2, code: 'upstream_5xx', retryable: true },
  { name: 'HTTP 5xx', matches: (e) => e.status >= 500, code: 'upstream_5xx', retryable: true },
  { name: 'HTTP 429', matches: (e) => e.status === 429, code: 'upstream_5xx', retryable: true },
  { name: 'HTTP 401', matches: (e) => e.status === 401, code: 'token_expired', retryable: false },
  { name: 'HTTP 403', matches: (e) => e.status === 403, code: 'permission_revoked', retryable: false },
];

/** Anything no row claims: an error nobody documented. */
const FALLBACK: ErrorRow = { name: 'anything else', matches: () => true, code: 'upstream_unknown', retryable: false };

/** The row that sorts a failure (exported so tests can name the row they exercise). */
export function threadsErrorRow(e: GraphError): ErrorRow {
  return THREADS_ERROR_TABLE.find((row) => row.matches(e)) ?? FALLBACK;
}

/** Sorts a failed call into one of our codes, with our own sentence (house style 4). */
export function classifyThreadsError(e: GraphError): NetworkFailure {
  const row = threadsErrorRow(e);
  return { ok: false, code: row.code, retryable: row.retryable, message: row.message ?? JOB_ERROR_MESSAGES[row.code] };
}

/**
 * A container that ended in status ERROR. Its `error_message` is one of Threads' documented values
 * (FAILED_DOWNLOADING_VIDEO, FAILED_PROCESSING_*, INVALID_*, UNKNOWN) or free text.
 */
export function classifyContainerError(errorMessage: string | null): NetworkFailure {
  const text = errorMessage ?? '';
  if (/^(FAILED_|INVALID_)/.test(text) || /could not be fetched/i.test(text)) {
    return { ok: false, code: 'media_unsupported_format', retryable: false, message: JOB_ERROR_MESSAGES.media_unsupported_format };
  }
  return classifyThreadsError({ status: 400, code: null, subcode: null, message: text, transient: false });
}

/** A plain JSON object. */
export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A string field (Graph ids are strings; a numeric one is read as its digits). */
export const str = (o: Record<string, unknown>, key: string): string | null => {
  const v = o[key];
  return typeof v === 'string' && v !== '' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : null;
};
const numOrNull = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : null);

/** Reads Meta's error envelope `{error: {message, type, code, error_subcode, is_transient}}`, whatever came. */
export function parseGraphError(status: number, body: unknown): GraphError {
  const err = isRecord(body) && isRecord(body.error) ? body.error : null;
  if (!err) return { status, code: null, subcode: null, message: typeof body === 'string' ? body : '', transient: false };
  return {
    status,
    code: numOrNull(err.code),
    subcode: numOrNull(err.error_subcode),
    message: typeof err.message === 'string' ? err.message : '',
    transient: err.is_transient === true,
  };
}

/** Every call gets an answer or gives up: a hung network must not hold a job past its lease. */
const TIMEOUT_MS = 30_000;

export type GraphResult = { ok: true; body: Record<string, unknown> } | { ok: false; error: GraphError };

/**
 * One Graph API call. GET parameters go in the query, POST parameters in a form body (both are what the Graph
 * API documents); the token travels in the Authorization header, never in a URL or a log line. Error answers
 * are logged raw (path and status, without the query, which may hold secrets) and returned as a GraphError.
 */
export async function graphCall(
  deps: Pick<NetworkDeps, 'fetch' | 'log'>,
  method: 'GET' | 'POST',
  url: string,
  params: Record<string, string | null | undefined>,
  token?: string,
): Promise<GraphResult> {
  const target = new URL(url);
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== null && value !== undefined) (method === 'GET' ? target.searchParams : form).set(key, value);
  }
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  if (method === 'POST') headers['content-type'] = 'application/x-www-form-urlencoded';
  let status: number;
  let text: string;
  try {
    const res = await deps.fetch(target, { method, headers, body: method === 'POST' ? form.toString() : undefined, signal: AbortSignal.timeout(TIMEOUT_MS) });
    status = res.status;
    text = await res.text();
  } catch (err) {
    const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    deps.log('threads: no answer', { method, path: target.pathname, reason });
    return { ok: false, error: { status: 0, code: null, subcode: null, message: reason, transient: true } };
  }
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON (a proxy's HTML page): kept as text for the table and the log.
  }
  if (status >= 200 && status < 300 && isRecord(body)) return { ok: true, body };
  deps.log('threads: error answer', { method, path: target.pathname, status, body: text });
  return { ok: false, error: parseGraphError(status >= 200 && status < 300 ? 502 : status, body) };
}
