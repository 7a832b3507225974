import type { Dispatcher, Response } from 'undici';
import type { MediaFetcher } from '../core/media/media-fetcher.js';
import { withinDeadline } from '../outbound/deadline.js';
import { OutboundBlockedError, safeFetch, type OutboundPolicy, type SafeFetchInit } from '../outbound/safe-fetch.js';

/** What a media URL says about itself, without downloading it. Expected failures are values. */
export type MediaProbe =
  | { ok: true; size: number | null; contentType: string | null }
  | { ok: false; reason: 'blocked' | 'unreachable' | 'http_error'; status?: number };

export type CappedMedia =
  | { ok: true; bytes: number; contentType: string | null; body: Buffer }
  | { ok: false; reason: 'too_large' | 'blocked' | 'unreachable' | 'http_error'; status?: number };

export interface MediaFetchOptions {
  /** Budget for the whole operation, redirects and body included; default 10 s. */
  timeoutMs?: number;
  /** Ends the operation early, e.g. at a deadline shared by several probes of one request. */
  signal?: AbortSignal;
  /** Normally omitted; must come from `createSafeDispatcher` to keep the connect-time address check. */
  dispatcher?: Dispatcher;
}

const DEFAULT_TIMEOUT_MS = 10_000;

type Attempt = { ok: true; res: Response } | { ok: false; reason: 'blocked' | 'unreachable' };

/** safeFetch with its throws turned into values: a refusal is `blocked`, anything else (DNS, connect, timeout) `unreachable`. */
async function attempt(url: string, init: SafeFetchInit, policy: OutboundPolicy, options: MediaFetchOptions | undefined): Promise<Attempt> {
  try {
    return { ok: true, res: await safeFetch(url, init, policy, options?.dispatcher) };
  } catch (err) {
    return { ok: false, reason: err instanceof OutboundBlockedError ? 'blocked' : 'unreachable' };
  }
}

/** Discards a body we do not want; cancelling closes the connection instead of downloading the rest. */
async function discard(res: Response): Promise<void> {
  await res.body?.cancel().catch(() => undefined);
}

function parseSize(value: string | null): number | null {
  if (value === null || !/^\d+$/.test(value.trim())) return null;
  const n = Number(value.trim());
  return Number.isSafeInteger(n) ? n : null;
}

/** The complete length from `Content-Range: bytes 0-0/<total>`; null for `/*` or anything unparsable. */
function totalFromContentRange(value: string | null): number | null {
  const match = value === null ? null : /^bytes\s+(?:\d+-\d+|\*)\/(\d+)\s*$/i.exec(value.trim());
  return match?.[1] === undefined ? null : parseSize(match[1]);
}

/**
 * Learns a media file's size and type: HEAD first, then, when HEAD is refused (405/501) or gives no
 * `Content-Length`, a one-byte ranged GET whose `Content-Range` carries the total. `size` is null
 * when the server does not tell.
 */
export async function probeMedia(url: string, policy: OutboundPolicy, options?: MediaFetchOptions): Promise<MediaProbe> {
  return withinDeadline(options?.timeoutMs ?? DEFAULT_TIMEOUT_MS, (signal) => probe(url, policy, options, signal), options?.signal).catch(
    (): MediaProbe => ({ ok: false, reason: 'unreachable' }),
  );
}

async function probe(url: string, policy: OutboundPolicy, options: MediaFetchOptions | undefined, signal: AbortSignal): Promise<MediaProbe> {
  const head = await attempt(url, { method: 'HEAD', signal }, policy, options);
  if (!head.ok) return head;
  await discard(head.res);
  const headType = head.res.headers.get('content-type');
  if (head.res.ok) {
    const size = parseSize(head.res.headers.get('content-length'));
    if (size !== null) return { ok: true, size, contentType: headType };
  } else if (head.res.status !== 405 && head.res.status !== 501) {
    return { ok: false, reason: 'http_error', status: head.res.status };
  }

  const ranged = await attempt(url, { method: 'GET', headers: { range: 'bytes=0-0' }, signal }, policy, options);
  if (!ranged.ok) return ranged;
  const res = ranged.res;
  // A server that ignores Range answers 200 with the whole file: cancelling stops that download.
  await discard(res);
  if (!res.ok) {
    // HEAD already vouched for the resource; a server that cannot do ranges just leaves the size unknown.
    return head.res.ok ? { ok: true, size: null, contentType: headType } : { ok: false, reason: 'http_error', status: res.status };
  }
  const size = res.status === 206 ? totalFromContentRange(res.headers.get('content-range')) : parseSize(res.headers.get('content-length'));
  return { ok: true, size, contentType: res.headers.get('content-type') ?? headType };
}

/**
 * Downloads a media file into memory, never holding more than `capBytes`: a declared
 * `Content-Length` over the cap is refused unread, and an undeclared or lying length is cut off
 * (the connection aborted) as soon as one byte more than the cap has arrived.
 */
export async function fetchMediaCapped(
  url: string,
  capBytes: number,
  policy: OutboundPolicy,
  options?: MediaFetchOptions,
): Promise<CappedMedia> {
  const chunks: Buffer[] = [];
  const got = await streamMediaCapped(url, capBytes, policy, options, (chunk) => void chunks.push(chunk));
  return got.ok ? { ok: true, bytes: got.bytes, contentType: got.contentType, body: Buffer.concat(chunks, got.bytes) } : got;
}

export type StreamedMedia =
  | { ok: true; bytes: number; contentType: string | null }
  | { ok: false; reason: 'too_large' | 'blocked' | 'unreachable' | 'http_error'; status?: number };

/**
 * Downloads a media file through the guard, handing each piece to `sink` as it arrives (to memory or to a
 * file), and stops at `capBytes`, whether the server declared the size or not.
 */
export async function streamMediaCapped(
  url: string,
  capBytes: number,
  policy: OutboundPolicy,
  options: MediaFetchOptions | undefined,
  sink: (chunk: Buffer) => void | Promise<void>,
): Promise<StreamedMedia> {
  return withinDeadline(options?.timeoutMs ?? DEFAULT_TIMEOUT_MS, (signal) => stream(url, capBytes, policy, options, sink, signal), options?.signal).catch(
    (): StreamedMedia => ({ ok: false, reason: 'unreachable' }),
  );
}

async function stream(
  url: string,
  capBytes: number,
  policy: OutboundPolicy,
  options: MediaFetchOptions | undefined,
  sink: (chunk: Buffer) => void | Promise<void>,
  signal: AbortSignal,
): Promise<StreamedMedia> {
  const got = await attempt(url, { method: 'GET', signal }, policy, options);
  if (!got.ok) return got;
  const res = got.res;
  if (!res.ok) {
    await discard(res);
    return { ok: false, reason: 'http_error', status: res.status };
  }
  const contentType = res.headers.get('content-type');
  const declared = parseSize(res.headers.get('content-length'));
  if (declared !== null && declared > capBytes) {
    await discard(res);
    return { ok: false, reason: 'too_large' };
  }

  let bytes = 0;
  const reader = res.body?.getReader();
  try {
    for (;;) {
      const chunk = reader ? await reader.read() : { done: true as const };
      if (chunk.done) break;
      bytes += chunk.value.byteLength;
      if (bytes > capBytes) {
        // Cancelling destroys the socket, so a server streaming without end cannot make us read on.
        void reader?.cancel().catch(() => undefined);
        return { ok: false, reason: 'too_large' };
      }
      await sink(Buffer.from(chunk.value.buffer, chunk.value.byteOffset, chunk.value.byteLength));
    }
  } catch {
    void reader?.cancel().catch(() => undefined);
    return { ok: false, reason: 'unreachable' };
  }
  return { ok: true, bytes, contentType };
}

/**
 * The core's media fetcher (`importFromUrl`) on these helpers: the outbound guard under `policy` (public addresses
 * only unless ALLOW_LOCAL_URLS, checked again at every connection and redirect), through `dispatcher` when given
 * (one from `createSafeDispatcher` for that policy).
 */
export function guardedMediaFetcher(policy: OutboundPolicy, dispatcher?: Dispatcher): MediaFetcher {
  return {
    probe: (url, signal) => probeMedia(url, policy, { signal, dispatcher }),
    stream: (url, capBytes, signal, sink) => streamMediaCapped(url, capBytes, policy, { signal, dispatcher }, sink),
  };
}
