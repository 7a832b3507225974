/** Spec 3.3 and 6.3: what an attempt's result means, and when the next one is due. */

/** Delay after attempt n (1-based) before attempt n + 1: +1 min, +5 min, +30 min, +2 h, +12 h. */
export const RETRY_DELAYS_MS = [60_000, 300_000, 1_800_000, 7_200_000, 43_200_000] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

export type TransportError = 'timeout' | 'refused' | 'reset' | 'dns' | 'blocked' | 'other';

export type AttemptResult = { kind: 'response'; status: number } | { kind: 'error'; error: TransportError };

export type Verdict = 'delivered' | 'retry' | 'stop';

/**
 * 2xx delivers; 5xx, 408, 429, any 3xx (redirects are never followed), timeouts, refused or reset connections and
 * DNS failures are retried; any other 4xx stops. An address refused by the outbound guard stops too: retrying
 * cannot make it public.
 */
export function classify(result: AttemptResult): Verdict {
  if (result.kind === 'error') return result.error === 'blocked' ? 'stop' : 'retry';
  const { status } = result;
  if (status >= 200 && status < 300) return 'delivered';
  if (status >= 500 || status === 408 || status === 429 || (status >= 300 && status < 400)) return 'retry';
  return 'stop';
}

/** The delivery's state after attempt number `attempt` ended with `verdict` at `now`. */
export function afterAttempt(attempt: number, verdict: Verdict, now: number): { status: 'delivered' | 'pending' | 'failed' | 'dead'; nextAttemptAt: number | null } {
  if (verdict === 'delivered') return { status: 'delivered', nextAttemptAt: null };
  if (verdict === 'stop') return { status: 'failed', nextAttemptAt: null };
  if (attempt >= MAX_ATTEMPTS) return { status: 'dead', nextAttemptAt: null };
  return { status: 'pending', nextAttemptAt: now + RETRY_DELAYS_MS[attempt - 1]! };
}

/** A duration in words, exact to the millisecond: 30000 → "30 seconds", 1000 → "1 second", 2500 → "2.5 seconds". */
export function durationWords(ms: number): string {
  if (ms < 1000) return `${ms} milliseconds`;
  const seconds = ms / 1000;
  return `${seconds} ${seconds === 1 ? 'second' : 'seconds'}`;
}

const ERROR_WORDS: Record<Exclude<TransportError, 'timeout'>, string> = {
  refused: 'The connection was refused.',
  reset: 'The connection was closed before an answer arrived.',
  dns: 'The host name could not be resolved.',
  blocked: 'The address is not a public HTTPS address; the request was not sent.',
  other: 'The request could not be completed.',
};

/**
 * A one-line summary of an attempt in our own words (never the receiver's body). `timeoutMs` is the limit the
 * attempt actually ran under (`WEBHOOK_TIMEOUT`), so the record states the configured value, not the default.
 */
export function describeAttempt(result: AttemptResult, timeoutMs: number): string | null {
  if (result.kind === 'error') {
    return result.error === 'timeout' ? `The endpoint did not answer within ${durationWords(timeoutMs)}.` : ERROR_WORDS[result.error];
  }
  const { status } = result;
  if (status >= 200 && status < 300) return null;
  if (status >= 300 && status < 400) return `The endpoint answered ${status} (a redirect); redirects are not followed.`;
  return `The endpoint answered HTTP ${status}.`;
}
