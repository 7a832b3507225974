import type { NetworkFailure } from '../adapter.js';
import { watchedUserHostFetch } from '../kit/user-host.js';
import type { ErrorRow } from '../kit/failure.js';
import { failure, waitingFor } from '../kit/failure.js';
import { logFailedAnswer, send } from '../kit/http.js';
import { type Json, jsonObject } from '../kit/json.js';
import type { NetworkDeps } from '../network-deps.js';
import { BLUESKY_ERROR_TABLE, classifyXrpc, OUTBOUND_BLOCKED, type XrpcErrorInfo, xrpcErrorInfo } from './errors.js';

/**
 * XRPC over HTTP (atproto.com/specs/xrpc): `GET /xrpc/{nsid}?params` for queries, `POST /xrpc/{nsid}` with a JSON
 * or binary body for procedures. Every Bluesky host is named by the user (the sign-in service, the account's data
 * server from its DID document), so every call goes through `deps.userHostFetch`, the outbound-address guard.
 */

export type XrpcReply =
  | { ok: true; data: Json; headers: Headers }
  | { ok: false; status: number; info: XrpcErrorInfo; row: string; failure: NetworkFailure; body: Json | null };

export interface XrpcCall {
  /** The service's origin (`https://bsky.social`, a PDS, the video service). */
  base: string;
  nsid: string;
  method?: 'GET' | 'POST';
  params?: Record<string, string | undefined>;
  /** A JSON body (procedures). */
  json?: unknown;
  /** A binary body (uploadBlob, uploadVideo), sent as `contentType`. */
  body?: Blob;
  contentType?: string;
  /** Bearer token: the access JWT, the refresh JWT (refreshSession), or a service-auth token. */
  token?: string;
  table?: readonly ErrorRow<XrpcErrorInfo>[];
  timeoutMs?: number;
}

const NETWORK = 'bluesky';

/** The URL of a method on a service (any trailing slash of the base is dropped). */
export function xrpcUrl(base: string, nsid: string, params: Record<string, string | undefined> = {}): string {
  const url = new URL(`${base.replace(/\/+$/, '')}/xrpc/${nsid}`);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  return url.toString();
}

/**
 * One XRPC exchange through the kit (deadline, no answer as a value). A failure is sorted with `table` (the
 * publishing table by default) and its raw body logged, never returned; tokens and passwords are never logged
 * (only the method's name is).
 */
export async function xrpc(deps: NetworkDeps, x: XrpcCall): Promise<XrpcReply> {
  const method = x.method ?? (x.json !== undefined || x.body !== undefined ? 'POST' : 'GET');
  const headers: Record<string, string> = {};
  if (x.token) headers.Authorization = `Bearer ${x.token}`;
  let body: RequestInit['body'];
  if (x.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(x.json);
  } else if (x.body !== undefined) {
    headers['Content-Type'] = x.contentType ?? 'application/octet-stream';
    body = x.body;
  }
  const call = `${method} ${x.nsid}`;
  const watched = watchedUserHostFetch(deps);
  const answer = await send(
    { fetch: watched.fetch, log: deps.log },
    { network: NETWORK, call, url: xrpcUrl(x.base, x.nsid, x.params), init: { method, headers, ...(body === undefined ? {} : { body }) }, ...(x.timeoutMs ? { timeoutMs: x.timeoutMs } : {}) },
  );
  const table = x.table ?? BLUESKY_ERROR_TABLE;
  if (answer.ok) {
    const data = jsonObject(answer.text);
    if (data) return { ok: true, data, headers: answer.headers };
    // A success we cannot read: whether the service acted is unknown, so it counts as a bad gateway (retried,
    // and a create is looked up before it is sent again).
    deps.log(`${NETWORK}: unexpected answer`, { call, status: answer.status, body: answer.text.slice(0, 500) });
    const info = xrpcErrorInfo(502, '');
    return { ok: false, status: 502, info, row: 'unreadable success', failure: failure('upstream_5xx', true), body: null };
  }
  const info = watched.blocked() ? { ...xrpcErrorInfo(0, ''), error: OUTBOUND_BLOCKED } : xrpcErrorInfo(answer.status, answer.text, answer.headers, deps.now());
  const sorted = classifyXrpc(table, info);
  if (watched.blocked()) deps.log(`${NETWORK}: address refused`, { call, row: sorted.row });
  if (answer.status !== 0) logFailedAnswer({ fetch: deps.userHostFetch, log: deps.log }, { network: NETWORK, call }, answer, { row: sorted.row, error: info.error });
  // The parsed body goes back too: the video service answers a known video with an error that carries its job.
  return { ok: false, status: answer.status, info, row: sorted.row, failure: waitingFor(sorted.failure, info.resetInMs), body: jsonObject(answer.text) };
}

/** An answer without a field we need: logged, and our own sentence returned. */
export function unexpected(deps: NetworkDeps, what: string): NetworkFailure {
  deps.log(`${NETWORK}: unexpected answer`, { call: what });
  return failure('upstream_unknown', false);
}
