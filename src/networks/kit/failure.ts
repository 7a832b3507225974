import { JOB_ERROR_MESSAGES, type JobErrorCode } from '../../vocabulary/job-errors.js';
import type { NetworkFailure } from '../adapter.js';

/**
 * A failure value in our own words (house style 4 and 5): the catalogue's sentence for `code` unless a more
 * precise one of ours is given. A network's own text never goes here; it is logged.
 */
export function failure(code: JobErrorCode, retryable = false, message: string = JOB_ERROR_MESSAGES[code]): NetworkFailure {
  return { ok: false, code, retryable, message };
}

/**
 * `f` with the wait the network announced (a rate limit's reset, in ms from now), when `f` is retried and the
 * wait is known; the worker's retry then comes no sooner.
 */
export function waitingFor(f: NetworkFailure, waitMs: number | null): NetworkFailure {
  return f.retryable && waitMs !== null && waitMs > 0 ? { ...f, retryAfterMs: waitMs } : f;
}

/**
 * One row of a network's error table (spec 7.4): which failures it sorts, and into what. `E` is what the
 * network's parser reads out of an answer (a Graph error, a Google error, a LinkedIn error).
 */
export interface ErrorRow<E> {
  /** A stable name saying why the row exists; tests use it to prove every row is exercised, logs to say which decided. */
  name: string;
  matches(e: E): boolean;
  code: JobErrorCode;
  retryable: boolean;
  /** Our own sentence when the catalogue's one for `code` would mislead. */
  message?: string;
}

/** The name given to "no row matched": an error nobody documented (upstream_unknown, not retried). */
export const FALLBACK_ROW_NAME = 'anything else';

/** The first row of `table` that matches (tables are ordered: first match wins), or the fallback row. */
export function rowFor<E>(table: readonly ErrorRow<E>[], e: E, fallbackName = FALLBACK_ROW_NAME): ErrorRow<E> {
  return table.find((row) => row.matches(e)) ?? { name: fallbackName, matches: () => true, code: 'upstream_unknown', retryable: false };
}

/** A classified failure: the deciding row's name (for the log) and the value the worker branches on. */
export interface Classified {
  row: string;
  failure: NetworkFailure;
}

/** Sorts one failure with `table` into spec 7.4's codes, with our own sentence. */
export function classify<E>(table: readonly ErrorRow<E>[], e: E, fallbackName = FALLBACK_ROW_NAME): Classified {
  const row = rowFor(table, e, fallbackName);
  return { row: row.name, failure: failure(row.code, row.retryable, row.message) };
}
