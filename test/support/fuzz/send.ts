/** Sending one fuzz case over HTTP, as it is (raw path segments, odd headers, chunked bodies), with a timeout. */
import type { FuzzCase } from './case.js';
import type { Operation } from './document.js';
import { encodeSegment } from './url-encoding.js';

export interface Answer {
  url: string;
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
  ms: number;
}

export type Outcome = { ok: true; answer: Answer } | { ok: false; url: string; error: string; harness: boolean };

export function urlFor(baseUrl: string, op: Operation, c: FuzzCase): string {
  const path = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const p = c.pathParams[name];
    if (p === undefined) return 'missing';
    return p.raw === true ? p.value : encodeSegment(p.value);
  });
  return `${baseUrl}${path}${c.query === '' ? '' : `?${c.query}`}`;
}

/** Sends one case. `key` is the API key used unless the case brings its own Authorization or none. */
export async function send(baseUrl: string, op: Operation, c: FuzzCase, key: string | undefined, timeoutMs = 30_000): Promise<Outcome> {
  const url = urlFor(baseUrl, op, c);
  const headers: Record<string, string> = {};
  if (op.secured && key !== undefined && c.anonymous !== true) headers.authorization = `Bearer ${key}`;
  Object.assign(headers, c.headers);
  let body: Uint8Array | string | ReadableStream<Uint8Array> | undefined;
  let duplex: 'half' | undefined;
  const b = op.method === 'GET' ? undefined : c.body;
  if (b !== undefined) {
    const defaultType = b.kind === 'json' || b.kind === 'text' ? 'application/json' : op.rawBodyTypes[0];
    const type = c.contentType === undefined ? defaultType : c.contentType;
    if (type !== null && type !== undefined) headers['content-type'] = type;
    const text = b.kind === 'json' ? (JSON.stringify(b.value) ?? 'null') : b.kind === 'text' ? b.text : undefined;
    if (text !== undefined) body = Buffer.from(text); // bytes: fetch adds no content type of its own
    else if (b.kind === 'bytes') body = b.bytes;
    else if (b.kind === 'stream') {
      const chunks = [...b.chunks];
      body = new ReadableStream<Uint8Array>({
        pull(controller) {
          const next = chunks.shift();
          if (next === undefined) controller.close();
          else controller.enqueue(next);
        },
      });
      duplex = 'half';
    }
  }
  const started = performance.now();
  try {
    const res = await fetch(url, { method: op.method, headers, body, duplex, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) } as RequestInit);
    const text = Buffer.from(await res.arrayBuffer()).toString('utf8');
    let json: unknown;
    if ((res.headers.get('content-type') ?? '').includes('json') && text.length > 0) {
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
    }
    return { ok: true, answer: { url, status: res.status, headers: res.headers, text, json, ms: performance.now() - started } };
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const harness = cause?.code === 'UND_ERR_INVALID_ARG' || (err instanceof TypeError && cause === undefined);
    const name = (err as Error).name;
    const error = name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : `${(err as Error).message}: ${cause?.code ?? ''} ${cause?.message ?? ''}`.trim();
    return { ok: false, url, error, harness };
  }
}
