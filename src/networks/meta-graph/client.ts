import { createHmac } from 'node:crypto';
import type { Classified } from '../kit/failure.js';
import { logFailedAnswer, send } from '../kit/http.js';
import { isRecord, type Json, parseJson } from '../kit/json.js';
import type { NetworkDeps } from '../network-deps.js';
import { type GraphError, parseGraphError } from './errors.js';

export interface GraphCall {
  method: 'GET' | 'POST';
  url: URL;
  /** Sent as `Authorization: Bearer`, never in the URL (URLs end up in logs). */
  token?: string;
  /** POST parameters (Graph documents form bodies); null and undefined values are left out. */
  form?: Record<string, string | null | undefined>;
  /** Files sent with `form` as multipart/form-data (Facebook's `source` upload), streamed from disk. */
  files?: Record<string, Blob>;
  /** A raw body (Facebook's reel upload host takes the bytes as they are). */
  body?: Blob;
  headers?: Record<string, string>;
}

/** A success is a JSON object without an `error` member; anything else is a failure, already classified. */
export type GraphResult<C extends Classified> = { ok: true; data: Json } | ({ ok: false; error: GraphError } & C);

export interface GraphClientOptions<C extends Classified> {
  /** For the log lines. */
  network: 'facebook' | 'instagram' | 'threads';
  /** API base with its version segment, e.g. https://graph.facebook.com/v23.0 */
  apiBaseUrl: string;
  /** When set, every call with a token carries `appsecret_proof` (Facebook Pages apps may require it). */
  appSecret?: string | undefined;
  /** The network's error table: sorts a failure (spec 7.4); its row name goes to the log line with the raw body. */
  classify(e: GraphError): C;
}

function encodeBody(c: GraphCall): RequestInit['body'] {
  if (c.body) return c.body;
  const fields = Object.entries(c.form ?? {}).filter((kv): kv is [string, string] => kv[1] !== null && kv[1] !== undefined);
  if (!c.files) return c.form ? new URLSearchParams(fields) : undefined;
  const data = new FormData();
  for (const [k, v] of fields) data.set(k, v);
  for (const [k, f] of Object.entries(c.files)) data.set(k, f, k);
  return data;
}

/**
 * The one place that talks HTTP to Meta's Graph API: adds the token (and `appsecret_proof`), goes through the
 * kit's timeout, logs failed bodies raw with the deciding row, and classifies them with the network's table.
 */
export function createGraphClient<C extends Classified>(deps: Pick<NetworkDeps, 'fetch' | 'log'>, options: GraphClientOptions<C>) {
  const base = options.apiBaseUrl.replace(/\/+$/, '');
  return {
    /** `{apiBaseUrl}{path}?{query}`: the base keeps its version segment (`/v23.0`); null values are left out. */
    url(path: string, query: Record<string, string | null | undefined> = {}): URL {
      const url = new URL(base + (path.startsWith('/') ? path : `/${path}`));
      for (const [k, v] of Object.entries(query)) if (v !== null && v !== undefined) url.searchParams.set(k, v);
      return url;
    },

    async call(c: GraphCall): Promise<GraphResult<C>> {
      const headers: Record<string, string> = { accept: 'application/json', ...c.headers };
      if (c.token !== undefined) {
        headers.authorization = `Bearer ${c.token}`;
        if (options.appSecret) c.url.searchParams.set('appsecret_proof', createHmac('sha256', options.appSecret).update(c.token).digest('hex'));
      }
      const x = { network: options.network, call: `${c.method} ${c.url.pathname}` };
      const answer = await send(deps, { ...x, url: c.url, init: { method: c.method, headers, body: encodeBody(c) } });
      if (answer.status === 0) {
        const error = parseGraphError(0, null);
        return { ok: false, error, ...options.classify(error) };
      }
      const parsed = parseJson(answer.text);
      const body = parsed === undefined ? answer.text : parsed;
      if (answer.ok && isRecord(body) && !('error' in body)) return { ok: true, data: body };
      const error = parseGraphError(answer.status, body, answer.text);
      const classified = options.classify(error);
      logFailedAnswer(deps, x, answer, { row: classified.row });
      return { ok: false, error, ...classified };
    },
  };
}

export type GraphClient<C extends Classified> = ReturnType<typeof createGraphClient<C>>;
