import type { NetworkFailure } from '../adapter.js';
import { type Answer, logFailedAnswer, send } from '../kit/http.js';
import type { NetworkDeps } from '../network-deps.js';
import { classifyYoutubeError, parseGoogleError } from './errors.js';

/** YouTube Data API v3 and Google's token endpoint: the exchange and the failure mapping both sides share. */

export const trimBase = (url: string) => url.replace(/\/+$/, '');
export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** One exchange through the kit; `manual`: a 308 here means "resume incomplete", never a redirect to follow. */
export function exchange(deps: NetworkDeps, url: string, init: RequestInit, timeoutMs?: number): Promise<Answer> {
  // The call is named by its path only: an upload session URI carries its id in the query.
  const call = `${init.method ?? 'GET'} ${URL.canParse(url) ? new URL(url).pathname : ''}`;
  return send(deps, { network: 'youtube', call, url, init: { ...init, redirect: 'manual' }, ...(timeoutMs !== undefined ? { timeoutMs } : {}) });
}

/** Logs the raw answer (never returned) and sorts it with the error table. */
export function refused(deps: NetworkDeps, what: string, a: Answer): NetworkFailure {
  const sorted = classifyYoutubeError(parseGoogleError(a.status, a.text));
  logFailedAnswer(deps, { network: 'youtube', call: what }, a, { row: sorted.row });
  return sorted.failure;
}
