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
