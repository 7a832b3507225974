import { createHmac } from 'node:crypto';
import { JOB_ERROR_MESSAGES, type JobErrorCode } from '../../vocabulary/job-errors.js';
import type { NetworkFailure } from '../adapter.js';
import type { NetworkDeps, NetworkSettings } from '../network-oauth.js';

/** The parts of a Graph API error body (`{error: {message, type, code, error_subcode, is_transient}}`) we sort on. */
export interface GraphError {
  code: number | null;
  subcode: number | null;
  type: string | null;
  isTransient: boolean;
}

/** Reads the Graph error object out of a parsed body; null when the body is not a Graph error. */
export function parseGraphError(body: unknown): GraphError | null {
  if (typeof body !== 'object' || body === null || !('error' in body)) return null;
  const e = (body as { error: unknown }).error;
  if (typeof e !== 'object' || e === null) return null;
  const r = e as Record<string, unknown>;
  const num = (v: unknown) => (typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : null);
  return { code: num(r.code), subcode: num(r.error_subcode), type: typeof r.type === 'string' ? r.type : null, isTransient: r.is_transient === true };
}

/** What the table is asked about: the HTTP status, the Graph error (if any) and the raw body text. */
export interface FailureFacts {
  status: number;
  error: GraphError | null;
  raw: string;
}

interface ErrorRow {
  /** A stable name, used by the tests to prove every row is exercised. */
  name: string;
  matches(f: FailureFacts): boolean;
  code: JobErrorCode;
  retryable: boolean;
  /** Our own sentence; defaults to JOB_ERROR_MESSAGES[code]. Facebook's text is logged, never returned. */
  message?: string;
}

const code = (f: FailureFacts, ...codes: number[]) => f.error?.code != null && codes.includes(f.error.code);
const subcode = (f: FailureFacts, ...codes: number[]) => f.error?.subcode != null && codes.includes(f.error.subcode);

/**
 * Spec 7.4 for Facebook Pages, first match wins. Subcodes come before the codes because Facebook nests them
 * (1390008 "posting too fast" arrives under 368 "blocked", which is otherwise a block of the Page).
 * Sources: Graph API "Handling Errors", Pages API and Video API error-code pages, /work/shared/notes/networks.md.
 */
export const FACEBOOK_ERROR_TABLE: readonly ErrorRow[] = [
  { name: 'page_publishing_authorization', matches: (f) => subcode(f, 1404078), code: 'token_expired', retryable: false, message: 'Facebook asks the Page owner to authorize publishing again. Reconnect the Page.' },
  { name: 'posting_too_fast', matches: (f) => subcode(f, 1390008), code: 'upstream_5xx', retryable: true, message: 'Facebook asked to slow down posting on this Page; the post is retried later.' },
  { name: 'duplicate', matches: (f) => code(f, 506) || subcode(f, 1366051), code: 'upstream_unknown', retryable: false, message: 'Facebook refused the post as a duplicate of a recent post on this Page.' },
  { name: 'video_too_large', matches: (f) => subcode(f, 1363023), code: 'media_too_large', retryable: false, message: 'Facebook refused the video as too large.' },
  { name: 'photo_rejected', matches: (f) => subcode(f, 1366046), code: 'media_unsupported_format', retryable: false, message: 'Facebook refused the photo. Use a JPEG or PNG under 4 MB.' },
  { name: 'media_invalid', matches: (f) => code(f, 324, 352) || subcode(f, 2069019, 1363022), code: 'media_unsupported_format', retryable: false },
  { name: 'upload_not_allowed', matches: (f) => subcode(f, 1363042), code: 'permission_revoked', retryable: false },
  { name: 'token_invalid', matches: (f) => code(f, 102, 190), code: 'token_expired', retryable: false },
  { name: 'token_revoked_text', matches: (f) => f.raw.includes('REVOKED_ACCESS_TOKEN'), code: 'token_expired', retryable: false },
  { name: 'permission_missing', matches: (f) => code(f, 10) || (f.error?.code != null && f.error.code >= 200 && f.error.code <= 299), code: 'permission_revoked', retryable: false },
  { name: 'blocked', matches: (f) => code(f, 368), code: 'permission_revoked', retryable: false, message: 'Facebook temporarily blocked this Page from posting. Check the Page on Facebook, then reconnect it.' },
  { name: 'throttled', matches: (f) => code(f, 4, 17, 32, 613, 80001), code: 'upstream_5xx', retryable: true, message: 'Facebook is rate-limiting this app or Page; the post is retried later.' },
  { name: 'feed_limit', matches: (f) => code(f, 341), code: 'quota_exceeded', retryable: false },
  { name: 'video_upload_problem', matches: (f) => code(f, 6000), code: 'upstream_5xx', retryable: true },
  { name: 'transient', matches: (f) => code(f, 1, 2) || f.error?.isTransient === true, code: 'upstream_5xx', retryable: true },
  { name: 'http_429', matches: (f) => f.status === 429, code: 'upstream_5xx', retryable: true },
  { name: 'http_5xx', matches: (f) => f.status >= 500, code: 'upstream_5xx', retryable: true },
];

/** The row used when nothing above matches: an error nobody documented. */
export const FALLBACK_ROW_NAME = 'unknown';

export interface Classified {
  row: string;
  failure: NetworkFailure;
  /**
   * False when Facebook may have acted although it answered with an error (5xx, codes 1/2, `is_transient`):
   * a publish then looks the post up before posting again. A refusal (4xx with a code) created nothing.
   */
  outcomeKnown: boolean;
}

/** Sorts one failed Graph response into our codes (spec 7.4). */
export function classifyGraphFailure(facts: FailureFacts): Classified {
  const row = FACEBOOK_ERROR_TABLE.find((r) => r.matches(facts));
  const outcomeKnown = facts.status < 500 && facts.error !== null && !code(facts, 1, 2) && !facts.error.isTransient;
  if (!row) return { row: FALLBACK_ROW_NAME, failure: failure('upstream_unknown', false), outcomeKnown };
  return { row: row.name, failure: failure(row.code, row.retryable, row.message), outcomeKnown };
}

/** A failure value in our own words. */
export function failure(code: JobErrorCode, retryable: boolean, message?: string): NetworkFailure {
  return { ok: false, code, retryable, message: message ?? JOB_ERROR_MESSAGES[code] };
}

/** No answer at all (refused connection, reset, our timeout): transient, and whether Facebook acted is unknown. */
export const UNREACHABLE: NetworkFailure = failure('upstream_5xx', true, 'Facebook could not be reached or did not answer in time; the post is retried later.');

/** Every Graph call gets this long; a slower answer counts as "no answer" (outcome unknown). */
export const GRAPH_TIMEOUT_MS = 30_000;

export type GraphData = Record<string, unknown>;
export type GraphResult = { ok: true; data: GraphData } | ({ ok: false; status: number; error: GraphError | null } & Classified);

export interface GraphCall {
  method: 'GET' | 'POST';
  url: URL;
  /** Sent as `Authorization: Bearer`, never in the URL (URLs end up in logs). */
  token?: string;
  form?: Record<string, string>;
  /** Files sent with `form` as multipart/form-data (Graph's `source` upload), streamed from disk. */
  files?: Record<string, Blob>;
  /** A raw body (the reel upload host takes the bytes as they are). */
  body?: Blob;
  headers?: Record<string, string>;
}

function encodeBody(c: GraphCall): RequestInit['body'] {
  if (c.body) return c.body;
  if (!c.files) return c.form ? new URLSearchParams(c.form) : undefined;
  const data = new FormData();
  for (const [k, v] of Object.entries(c.form ?? {})) data.set(k, v);
  for (const [k, f] of Object.entries(c.files)) data.set(k, f, k);
  return data;
}

/**
 * The one place that talks HTTP to Facebook: adds the token (and `appsecret_proof` when the app secret is
 * configured, which Pages apps may require), applies the timeout, logs failed bodies and classifies them.
 */
export function createGraphClient(settings: NetworkSettings, deps: NetworkDeps) {
  const base = settings.apiBaseUrl.replace(/\/+$/, '');
  return {
    /** `{apiBaseUrl}{path}?{query}`: the base keeps its version segment (`/v23.0`). */
    url(path: string, query: Record<string, string> = {}): URL {
      const url = new URL(base + path);
      for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
      return url;
    },

    async call(c: GraphCall): Promise<GraphResult> {
      const headers: Record<string, string> = { ...c.headers };
      if (c.token !== undefined) {
        headers.authorization = `Bearer ${c.token}`;
        if (settings.clientSecret) c.url.searchParams.set('appsecret_proof', createHmac('sha256', settings.clientSecret).update(c.token).digest('hex'));
      }
      const where = { method: c.method, path: c.url.pathname };
      let status: number;
      let raw: string;
      try {
        const res = await deps.fetch(c.url, { method: c.method, headers, body: encodeBody(c), signal: AbortSignal.timeout(GRAPH_TIMEOUT_MS) });
        status = res.status;
        raw = await res.text();
      } catch (err) {
        deps.log('facebook: no answer', { ...where, error: err instanceof Error ? err.name : 'unknown' });
        return { ok: false, status: 0, error: null, row: 'unreachable', failure: UNREACHABLE, outcomeKnown: false };
      }
      let json: unknown = null;
      try {
        json = JSON.parse(raw);
      } catch {
        // Not JSON: classified below by status (an HTML 502 page, a proxy's text).
      }
      if (status >= 200 && status < 300 && typeof json === 'object' && json !== null && !('error' in json)) return { ok: true, data: json as GraphData };
      const error = parseGraphError(json);
      const classified = classifyGraphFailure({ status, error, raw });
      deps.log('facebook: request failed', { ...where, status, row: classified.row, body: raw });
      return { ok: false, status, error, ...classified };
    },
  };
}

export type GraphClient = ReturnType<typeof createGraphClient>;
