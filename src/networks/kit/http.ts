import { withinDeadline } from '../../outbound/deadline.js';
import type { NetworkDeps } from '../network-deps.js';

/** Every network call gets this long; a slower answer counts as no answer (its outcome is unknown). */
export const NETWORK_TIMEOUT_MS = 30_000;

/** How much of a failed answer's raw body goes to the log (enough to read any documented error envelope). */
const LOGGED_BODY_CHARS = 4_000;

/** An HTTP answer read whole, or `status: 0` when none came (refused, reset, timed out). */
export interface Answer {
  status: number;
  /** 2xx. */
  ok: boolean;
  headers: Headers;
  text: string;
}

export interface Exchange {
  /** For the log: which network (`facebook`, `linkedin`…). */
  network: string;
  /** For the log: what the call is (`POST /rest/posts`); never a query string, a token or a signed upload URL. */
  call: string;
  url: string | URL;
  init?: RequestInit;
  /** Defaults to NETWORK_TIMEOUT_MS; an upload chunk may need longer. */
  timeoutMs?: number;
}

type Io = Pick<NetworkDeps, 'fetch' | 'log'>;

/**
 * The one HTTP exchange every adapter goes through: applies the timeout, reads the body whole, and turns "no
 * answer" into a value (status 0) instead of an exception (house style 5). A hung network must not hold a job
 * past its lease. Only the error's name is logged: a fetch error's message may quote the URL and its query.
 */
export async function send(deps: Io, x: Exchange): Promise<Answer> {
  try {
    return await withinDeadline(x.timeoutMs ?? NETWORK_TIMEOUT_MS, async (signal) => {
      const res = await deps.fetch(x.url, { ...x.init, signal });
      return { status: res.status, ok: res.ok, headers: res.headers, text: await res.text() };
    });
  } catch (err) {
    deps.log(`${x.network}: no answer`, { call: x.call, error: err instanceof Error ? err.name : 'unknown' });
    return { status: 0, ok: false, headers: new Headers(), text: '' };
  }
}

/**
 * Logs a failed answer with its raw body: the network's own words go to the log only, never to a caller
 * (house style 4). `details` adds what decided (the error-table row).
 */
export function logFailedAnswer(deps: Io, x: Pick<Exchange, 'network' | 'call'>, answer: Answer, details: Record<string, unknown> = {}): void {
  deps.log(`${x.network}: error answer`, { call: x.call, status: answer.status, ...details, body: answer.text.slice(0, LOGGED_BODY_CHARS) });
}
