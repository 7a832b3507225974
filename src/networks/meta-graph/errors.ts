import { isRecord } from '../kit/json.js';

/**
 * A failed Meta Graph API call (Facebook Pages, Instagram, Threads), reduced to what the error tables match on.
 * Meta's envelope is `{error: {message, type, code, error_subcode, is_transient}}`; the Instagram token host
 * answers `{error_type, code, error_message}` instead (its `code` is only the HTTP status), which reads as no
 * envelope so the status rows decide.
 */
export interface GraphError {
  /** HTTP status; 0 when no answer came (refused connection, reset, timeout). */
  status: number;
  code: number | null;
  subcode: number | null;
  type: string | null;
  /** Graph's `is_transient` hint. */
  transient: boolean;
  /** Meta's text: the envelope's `message`, or the whole body when it has no envelope. Matched and logged, never shown. */
  message: string;
  /** The raw body as received. */
  raw: string;
  /** Whether the body carried Meta's error envelope (a refusal with a code, rather than a bare status). */
  envelope: boolean;
}

/** Graph sends codes as numbers, some proxies as digit strings. */
const codeOf = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : null);

/**
 * Reads Meta's error envelope out of a parsed body, whatever came. `body` is the parsed JSON, or the text when
 * it was not JSON; `raw` is the body as received (defaults to `body` when that is text).
 */
export function parseGraphError(status: number, body: unknown, raw: string = typeof body === 'string' ? body : ''): GraphError {
  const err = isRecord(body) && isRecord(body.error) ? body.error : null;
  if (!err) return { status, code: null, subcode: null, type: null, transient: false, message: raw, raw, envelope: false };
  return {
    status,
    code: codeOf(err.code),
    subcode: codeOf(err.error_subcode),
    type: typeof err.type === 'string' ? err.type : null,
    transient: err.is_transient === true,
    message: typeof err.message === 'string' ? err.message : '',
    raw,
    envelope: true,
  };
}
