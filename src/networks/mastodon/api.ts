import type { NetworkFailure } from '../adapter.js';
import { watchedUserHostFetch } from '../kit/user-host.js';
import { classify, type ErrorRow, failure, waitingFor } from '../kit/failure.js';
import { logFailedAnswer, send } from '../kit/http.js';
import { parseJson } from '../kit/json.js';
import type { NetworkDeps } from '../network-deps.js';
import { MASTODON_ERROR_TABLE, mastodonErrorInfo, type MastodonErrorInfo } from './errors.js';

/**
 * Mastodon's HTTP plumbing. Every server is one a user named, so every request goes through
 * `deps.userHostFetch` (the outbound-address guard), never `deps.fetch`.
 */

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * The origin of a server the user named, or null when it is not a plain origin: https with no path, query,
 * fragment or credentials. Plain http is accepted for loopback hosts only (tests run fakes there); in production
 * the guarded fetch refuses loopback, so a token never travels in clear text.
 */
export function serverOrigin(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  const plain = url.pathname === '/' && url.search === '' && url.hash === '' && url.username === '' && url.password === '';
  const scheme = url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname));
  return plain && scheme ? url.origin : null;
}

export const BAD_ORIGIN = failure('upstream_unknown', false, 'The Mastodon server must be given as https://host (no path).');

/** `accountId` is `{origin}|{account id on that server}` (LiveCredentials): the server and the account in one. */
export function accountIdOf(origin: string, id: string): string {
  return `${origin}|${id}`;
}
export function parseAccountId(accountId: string): { origin: string; id: string } | null {
  const at = accountId.lastIndexOf('|');
  const origin = at > 0 ? serverOrigin(accountId.slice(0, at)) : null;
  const id = accountId.slice(at + 1);
  return origin && /^[\w-]+$/.test(id) ? { origin, id } : null;
}

/** An answer: the parsed body of a success, or a classified failure (status 0: no answer at all). */
export type Reply =
  | { ok: true; status: number; headers: Headers; body: unknown }
  | { ok: false; status: number; info: MastodonErrorInfo; failure: NetworkFailure };

export interface Call {
  origin: string;
  method: 'GET' | 'POST';
  /** Path and query; the query never reaches the log. */
  path: string;
  token?: string;
  /** A form (URLSearchParams) or a multipart upload (undici's FormData: see media.ts). */
  body?: RequestInit['body'];
  headers?: Record<string, string>;
  table?: readonly ErrorRow<MastodonErrorInfo>[];
  timeoutMs?: number;
}

/**
 * One exchange with a server: bearer token, the kit's deadline, failures sorted with the table (the raw body is
 * logged with the deciding row, never returned). A refusal by the outbound guard is told apart from silence.
 */
export async function call(deps: NetworkDeps, c: Call): Promise<Reply> {
  const watched = watchedUserHostFetch(deps);
  const callName = `${c.method} ${c.path.split('?')[0] ?? c.path}`;
  const headers: Record<string, string> = { Accept: 'application/json', ...(c.token ? { Authorization: `Bearer ${c.token}` } : {}), ...c.headers };
  const answer = await send(
    { fetch: watched.fetch, log: deps.log },
    { network: 'mastodon', call: callName, url: `${c.origin}${c.path}`, init: { method: c.method, headers, ...(c.body ? { body: c.body } : {}) }, ...(c.timeoutMs ? { timeoutMs: c.timeoutMs } : {}) },
  );
  if (answer.ok) return { ok: true, status: answer.status, headers: answer.headers, body: parseJson(answer.text) };
  const info = mastodonErrorInfo(answer.status, answer.text, answer.headers, deps.now(), watched.blocked());
  const sorted = classify(c.table ?? MASTODON_ERROR_TABLE, info);
  if (answer.status !== 0) logFailedAnswer(deps, { network: 'mastodon', call: callName }, answer, { row: sorted.row });
  else deps.log('mastodon: no answer sorted', { call: callName, row: sorted.row });
  // A rate limit retried once it resets waits for the reset the server announced (X-RateLimit-Reset).
  return { ok: false, status: answer.status, info, failure: waitingFor(sorted.failure, info.status === 429 ? info.resetInMs : null) };
}

/** A 2xx whose body lacks what the docs promise: logged, and failed in our words. */
export function unexpected(deps: NetworkDeps, what: string): NetworkFailure {
  deps.log('mastodon: unexpected answer', { call: what });
  return failure('upstream_unknown', false);
}
