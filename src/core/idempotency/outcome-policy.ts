import type { ErrorCode, ServiceError } from '../errors.js';

/**
 * Errors that are not stored as a key's outcome: the key is released instead, so the natural retry with the same
 * key and the same body runs again once the caller fixed the cause.
 * - `saldo_insuficiente`, `lote_vencido`: spec 7.2 marks them `recoverable: true` ("retry works after buying
 *   credit"; "retry"). Any other error whose body says `recoverable: true` (e.g. `saldo_fragmentado`) likewise.
 * - `limit_reached`: its `resolve` tells the caller to upgrade or free a slot and try again (spec 7.3).
 * - `rate_limited`: the request was refused before it ran; Retry-After says when to come back.
 * - `server_error`: a fault of ours, not an answer to the request; "retry with backoff" (spec 7.2).
 * Releasing is always safe: none of these created anything, so running the request again cannot double it.
 */
const RELEASED_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['saldo_insuficiente', 'lote_vencido', 'limit_reached', 'rate_limited', 'server_error']);

/** True when `err` must release the key rather than be replayed for a day (see RELEASED_CODES). */
export function releasesKey(err: ServiceError): boolean {
  return RELEASED_CODES.has(err.code) || err.extra.recoverable === true;
}
