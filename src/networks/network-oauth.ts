import type { MediaSource } from './media-source.js';
import type { NetworkFailure } from './adapter.js';

/** Tokens of a live connection, as stored (sealed) on the connection. */
export interface NetworkTokens {
  accessToken: string;
  refreshToken: string | null;
  /** Epoch ms; null when the network does not say. */
  expiresAt: number | null;
  /** The account publishing happens as (see LiveCredentials.accountId). */
  accountId: string;
  /** A human label for the account (handle, page name, channel title). */
  accountName: string;
}

export type TokenResult = { ok: true; tokens: NetworkTokens } | NetworkFailure;

/** A network's OAuth 2.0 authorization-code flow, used to connect or reconnect an account. */
export interface NetworkOAuth {
  /** Where to send the user; `state` is ours and single-use. */
  authorizationUrl(args: { state: string; redirectUri: string }): string;
  /** Exchanges the code (and, where the network has them, for a long-lived token) and reads the account. */
  exchangeCode(args: { code: string; redirectUri: string }): Promise<TokenResult>;
  /** Renews tokens before they expire; absent when the network offers no refresh (LinkedIn outside partners). */
  refresh?(tokens: NetworkTokens): Promise<TokenResult>;
}

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
}

/** What an adapter or OAuth implementation may use: an injectable fetch, a clock and a sleep. */
export interface NetworkDeps {
  fetch: typeof globalThis.fetch;
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
