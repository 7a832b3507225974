import { failure } from '../kit/failure.js';
import { num, obj, str } from '../kit/json.js';
import { pkceFor } from '../kit/pkce.js';
import type { NetworkDeps, NetworkSettings } from '../network-deps.js';
import type { NetworkOAuth, NetworkTokens, TokenResult } from '../network-oauth.js';
import { api, exchange, unexpected } from './api.js';
import { X_OAUTH_ERROR_TABLE } from './errors.js';

/**
 * Read and write posts, read the account, upload media; `offline.access` is what makes X issue a refresh token
 * (docs.x.com "OAuth 2.0 Authorization Code Flow with PKCE", Scopes).
 */
const SCOPES = ['tweet.read', 'tweet.write', 'users.read', 'offline.access', 'media.write'];

/** RFC 6749 2.3.1: a confidential client authenticates with HTTP Basic, id and secret form-encoded first. */
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/**
 * X's OAuth 2.0 authorization code flow with PKCE (S256), as a confidential client: the verifier is derived from
 * our single-use `state` (kit/pkce.ts), so nothing is stored between the redirect and the callback. Access
 * tokens last two hours; `refresh` trades the refresh token for new ones, and X rotates it: the new refresh
 * token replaces the old, which stops working. The account is read with GET /2/users/me.
 */
export function createXOAuth(settings: NetworkSettings, deps: NetworkDeps): NetworkOAuth {
  const base = settings.apiBaseUrl.replace(/\/+$/, '');
  const notConfigured = () => {
    deps.log('x: client id or secret is not configured', {});
    return failure('upstream_unknown', false, 'X is not configured on this service (client id and secret).');
  };

  /** POST to the token endpoint with Basic client authentication; reads `{access_token, refresh_token, expires_in}`. */
  async function token(form: Record<string, string>) {
    const { clientId, clientSecret } = settings;
    if (!clientId || !clientSecret) return notConfigured();
    const res = await exchange(deps, `POST token (${form.grant_type ?? ''})`, settings.tokenUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Authorization: basic(clientId, clientSecret) },
      body: new URLSearchParams(form),
    }, X_OAUTH_ERROR_TABLE);
    if (!res.ok) return res.failure;
    const accessToken = str(res.body.access_token);
    if (!accessToken) return unexpected(deps, 'token answer without access_token');
    const expiresIn = num(res.body.expires_in);
    return { ok: true as const, accessToken, refreshToken: str(res.body.refresh_token), expiresAt: expiresIn === null ? null : deps.now() + expiresIn * 1000 };
  }

  return {
    // Access tokens live hours: renewed when a job needs one, not by the sweep (see NetworkOAuth.refreshOnUse).
    refreshOnUse: true,
    authorizationUrl({ state, redirectUri }) {
      const { challenge } = pkceFor(settings.clientSecret ?? '', state);
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: settings.clientId ?? '',
        redirect_uri: redirectUri,
        scope: SCOPES.join(' '),
        state,
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });
      return `${settings.authorizeUrl}?${query.toString().replace(/\+/g, '%20')}`;
    },

    async exchangeCode({ code, state, redirectUri }): Promise<TokenResult> {
      if (!settings.clientSecret) return notConfigured();
      const t = await token({ code, grant_type: 'authorization_code', redirect_uri: redirectUri, code_verifier: pkceFor(settings.clientSecret, state).verifier });
      if (!t.ok) return t;
      const me = await api({ deps, base, token: t.accessToken }, 'GET', '/2/users/me');
      if (!me.ok) return me.failure;
      const user = obj(me.body.data);
      const id = str(user.id);
      if (!id) return unexpected(deps, 'users/me without data.id');
      const username = str(user.username);
      return {
        ok: true,
        tokens: { accessToken: t.accessToken, refreshToken: t.refreshToken, expiresAt: t.expiresAt, accountId: id, accountName: username ? `@${username}` : (str(user.name) ?? id) },
      };
    },

    async refresh(current: NetworkTokens): Promise<TokenResult> {
      // Connected without offline.access (or before it was asked): nothing to refresh with, the user reconnects.
      if (!current.refreshToken) return failure('token_expired', false);
      const t = await token({ grant_type: 'refresh_token', refresh_token: current.refreshToken });
      if (!t.ok) return t;
      // Rotation: the answer's refresh token is the one that works from now on.
      return { ok: true, tokens: { ...current, accessToken: t.accessToken, refreshToken: t.refreshToken ?? current.refreshToken, expiresAt: t.expiresAt } };
    },
  };
}
