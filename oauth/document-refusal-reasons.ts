import { OutboundBlockedError } from '../src/outbound/safe-fetch.js';

/** The short reasons a client metadata document is refused with, in our words (never the network library's). */

/** Whole seconds, at least 1, for "retry in N s". */
export const seconds = (ms: number): number => Math.max(1, Math.ceil(ms / 1000));

/** TLS verification failures as Node and undici name them, anywhere in an error's cause chain. */
const TLS_CODES = /^(CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|ERR_TLS_|ERR_SSL_|HOSTNAME_MISMATCH)/;

/** The short reason a fetch failed before any answer, in our words (never the network library's). */
export function unreachableReason(err: unknown, timeoutMs: number): string {
  if (err instanceof OutboundBlockedError) {
    if (err.reason === 'redirect_limit') return 'redirects are not followed';
    // Which address a name resolved to stays in the log: the caller is anonymous.
    return err.reason === 'address' ? 'its host is not a public address' : err.message;
  }
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) return `no answer within ${timeoutMs} ms`;
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && TLS_CODES.test(code)) return 'its TLS certificate was not accepted';
  }
  return 'unreachable';
}

/** The short reason a document answered with `status` (not 200) is refused. */
export function statusReason(status: number): string {
  if (status >= 300 && status < 400) return 'redirects are not followed';
  return status === 404 ? 'not found (HTTP 404)' : `answered HTTP ${status}`;
}
