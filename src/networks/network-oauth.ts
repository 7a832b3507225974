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

/**
 * This service registered as an app on a server the user named (a Mastodon instance). Registered once per
 * server and kept (sealed), because the server issues its client id and secret to that registration alone.
 */
export interface InstanceApp {
  /** The server's origin, e.g. `https://mastodon.social`. */
  origin: string;
  clientId: string;
  clientSecret: string;
}

/** A place of an account a connection can publish to (a Pinterest board). */
export interface PublishTarget {
  id: string;
  name: string;
}

export type TargetList = { ok: true; targets: PublishTarget[] } | NetworkFailure;

export type AppRegistration = { ok: true; app: InstanceApp } | NetworkFailure;

/** A network's OAuth 2.0 authorization-code flow, used to connect or reconnect an account. */
export interface NetworkOAuth {
  /**
   * Where to send the user; `state` is ours, single-use and secret until the user returns. Networks that
   * require PKCE derive the challenge from it (kit/pkce.ts). `app` is given for per-server networks.
   */
  authorizationUrl(args: { state: string; redirectUri: string; app?: InstanceApp }): string;
  /** Exchanges the code (and, where the network has them, for a long-lived token) and reads the account. */
  exchangeCode(args: { code: string; state: string; redirectUri: string; app?: InstanceApp }): Promise<TokenResult>;
  /** Renews tokens before they expire; absent when the network offers no refresh (LinkedIn outside partners). */
  refresh?(tokens: NetworkTokens): Promise<TokenResult>;
  /**
   * Access tokens live hours, not weeks (X, TikTok): renewed when a job needs them rather than ahead of time by
   * the maintenance sweep, which would otherwise renew every such connection on each run.
   */
  refreshOnUse?: boolean;
  /** Networks that publish to one of several places of an account (Pinterest's boards): the places it may use. */
  listTargets?(tokens: NetworkTokens): Promise<TargetList>;
  /** The same account's tokens, publishing to `targetId` (one of listTargets) instead. */
  retarget?(tokens: NetworkTokens, targetId: string): Promise<TokenResult>;
  /**
   * Per-server networks (Mastodon): registers this service as an app on `origin` (a server the user named, so
   * reached through the outbound-address guard).
   */
  registerApp?(args: { origin: string; redirectUri: string }): Promise<AppRegistration>;
}

/**
 * Signing in with an account's app password (Bluesky): no redirect; the account's service answers with a
 * session whose tokens are then kept like OAuth ones. The password itself is never stored.
 */
export interface NetworkPasswordLogin {
  /** `identifier` is the handle or e-mail; `service` the account's entryway when not the network's default. */
  signIn(args: { identifier: string; password: string; service?: string }): Promise<TokenResult>;
  refresh(tokens: NetworkTokens): Promise<TokenResult>;
  /** See NetworkOAuth.refreshOnUse. */
  refreshOnUse?: boolean;
}
