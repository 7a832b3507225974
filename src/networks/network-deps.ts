import type { MediaSource } from './media-source.js';

/**
 * What a network implementation (adapter or OAuth) is built from: its configured settings and the effects it
 * may use, all injected so tests run against local fakes with a controlled clock.
 */

/** Per-network settings from configuration; base URLs are configurable so tests run against local fakes. */
export interface NetworkSettings {
  clientId: string | undefined;
  clientSecret: string | undefined;
  /** API base, e.g. https://graph.instagram.com/v23.0 */
  apiBaseUrl: string;
  /** Authorization page base, e.g. https://www.instagram.com/oauth/authorize */
  authorizeUrl: string;
  /** Token endpoint. */
  tokenUrl: string;
  /** Dated API version where the network uses one in headers (LinkedIn-Version: YYYYMM). */
  apiVersion: string | undefined;
  /**
   * How posts are handed over, where the network offers choices (TikTok): straight to the profile or to the
   * creator's inbox; whether the app passed the network's audit (else posts are private); whether the network
   * pulls videos from their address instead of receiving the bytes.
   */
  /** A separate service the network's media go through (Bluesky's video service). */
  mediaServiceUrl?: string;
  posting?: { mode: 'direct' | 'inbox'; appAudited: boolean; pullVideosFromUrl: boolean };
}

/** What an adapter or OAuth implementation may use: an injectable fetch, a clock and a sleep. */
export interface NetworkDeps {
  /** For the network's own configured hosts. */
  fetch: typeof globalThis.fetch;
  /**
   * For hosts a user names (a Mastodon instance, a Bluesky account's data server): refuses loopback, private and
   * metadata addresses before connecting, like media and webhook addresses.
   */
  userHostFetch: typeof globalThis.fetch;
  now(): number;
  sleep(ms: number): Promise<void>;
  /** For raw network bodies (never returned to callers). */
  log(message: string, details: Record<string, unknown>): void;
  /**
   * Opens a media file for upload: in pieces (YouTube chunks, LinkedIn parts) or whole as a Blob sent from disk
   * (Facebook, LinkedIn images). A media file is never read into memory whole.
   */
  openMedia(url: string): Promise<MediaSource>;
}
