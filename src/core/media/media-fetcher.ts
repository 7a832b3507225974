import type { MediaProbeResult } from '../contents/content-plan.js';

/** What reading an address into the library gave. Expected failures are values, as with a probe. */
export type StreamedMedia =
  | { ok: true; bytes: number; contentType: string | null }
  | { ok: false; reason: 'too_large' | 'blocked' | 'unreachable' | 'http_error'; status?: number };

/**
 * Reads a public address for the library. It is infrastructure (the outbound guard and its policy), so the
 * container injects it, as it injects the contents' media probe: `probe` learns the type and size without the
 * body, `stream` hands the body to `sink` and stops past `capBytes`. Both end when `signal` does.
 */
export interface MediaFetcher {
  probe(url: string, signal: AbortSignal): Promise<MediaProbeResult>;
  stream(url: string, capBytes: number, signal: AbortSignal, sink: (chunk: Buffer) => Promise<void>): Promise<StreamedMedia>;
}
