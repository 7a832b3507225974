import type { NetworkFailure } from '../adapter.js';
import { failure } from '../kit/failure.js';
import { type Json, str } from '../kit/json.js';
import type { NetworkDeps, NetworkSettings } from '../network-deps.js';
import type { NetworkPasswordLogin, NetworkTokens, TokenResult } from '../network-oauth.js';
import { accountIdOf, jwtExpiry, originOf, parseAccountId, pdsFromDidDoc } from './account.js';
import { BLUESKY_SESSION_ERROR_TABLE } from './errors.js';
import { unexpected, xrpc } from './xrpc.js';

const SIGN_IN_AGAIN = failure('token_expired', false, 'The Bluesky session cannot be renewed. Sign in again with an app password.');
const BAD_SERVICE = failure('upstream_unknown', false, 'The Bluesky service address is not a valid http(s) address.');

/** `bsky.social` or `https://bsky.social/` → `https://bsky.social`. */
function serviceOrigin(service: string): string | null {
  const trimmed = service.trim();
  return originOf(/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `https://${trimmed}`);
}

/** An inactive account (lexicon: `active: false` with `status` takendown, suspended or deactivated) cannot post. */
function inactive(session: Json): NetworkFailure | null {
  if (session.active !== false) return null;
  const status = str(session.status) ?? 'inactive';
  return failure('permission_revoked', false, `The Bluesky account is ${status === 'takendown' ? 'taken down' : status}, so nothing can be posted on it.`);
}

/**
 * Tokens from a createSession or refreshSession answer (same output schema): the access JWT (its `exp` tells when
 * to renew), the refresh JWT, and the account: its DID, its handle, and its PDS from the DID document — the
 * service that answered when the document names none.
 */
function tokensOf(deps: NetworkDeps, session: Json, answeredBy: string, call: string): TokenResult {
  const accessToken = str(session.accessJwt);
  const refreshToken = str(session.refreshJwt);
  const did = str(session.did);
  const handle = str(session.handle);
  if (!accessToken || !refreshToken || !did || !handle) return unexpected(deps, `${call} without accessJwt, refreshJwt, did or handle`);
  const refused = inactive(session);
  if (refused) return refused;
  const pds = pdsFromDidDoc(session.didDoc, did) ?? answeredBy;
  return { ok: true, tokens: { accessToken, refreshToken, expiresAt: jwtExpiry(accessToken), accountId: accountIdOf({ pds, did }), accountName: handle } };
}

/**
 * Bluesky sign-in with an app password (no OAuth): com.atproto.server.createSession at the service the user named
 * (bsky.social by default), then com.atproto.server.refreshSession with the refresh JWT as bearer at the account's
 * PDS (which hands it on to the entryway that issued it). The password is sent once and never kept or logged.
 * Sources: the lexicons com.atproto.server.createSession / refreshSession and docs.bsky.app "API Hosts and Auth".
 */
export function createBlueskyPasswordLogin(settings: NetworkSettings, deps: NetworkDeps): NetworkPasswordLogin {
  return {
    // Access JWTs live about two hours (their `exp`): renewed when a job needs them, not by every sweep.
    refreshOnUse: true,

    async signIn({ identifier, password, service }): Promise<TokenResult> {
      const base = serviceOrigin(service ?? settings.apiBaseUrl);
      if (!base) return BAD_SERVICE;
      const res = await xrpc(deps, {
        base,
        nsid: 'com.atproto.server.createSession',
        json: { identifier: identifier.trim().replace(/^@/, ''), password },
        table: BLUESKY_SESSION_ERROR_TABLE,
      });
      if (!res.ok) return res.failure;
      return tokensOf(deps, res.data, base, 'createSession');
    },

    async refresh(tokens: NetworkTokens): Promise<TokenResult> {
      const account = parseAccountId(tokens.accountId);
      if (!account || !tokens.refreshToken) return SIGN_IN_AGAIN;
      const res = await xrpc(deps, { base: account.pds, nsid: 'com.atproto.server.refreshSession', method: 'POST', token: tokens.refreshToken, table: BLUESKY_SESSION_ERROR_TABLE });
      if (!res.ok) return res.failure;
      return tokensOf(deps, res.data, account.pds, 'refreshSession');
    },
  };
}
