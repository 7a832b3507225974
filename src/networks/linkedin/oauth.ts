import { failure } from '../kit/failure.js';
import { obj, parseJson, str } from '../kit/json.js';
import type { NetworkDeps, NetworkSettings } from '../network-deps.js';
import type { NetworkOAuth, TokenResult } from '../network-oauth.js';
import { LINKEDIN_OAUTH_ERROR_TABLE } from './errors.js';
import { exchange, unexpected } from './rest.js';

/** `openid profile` read the member (GET /v2/userinfo); `w_member_social` posts as them. */
const SCOPES = ['openid', 'profile', 'w_member_social'];

/**
 * LinkedIn's 3-legged OAuth (authorization code). Access tokens last 60 days; refresh tokens exist only for
 * approved partners, so there is no `refresh`: members reconnect. The member is read with OpenID's
 * GET /v2/userinfo; the account id is their author URN `urn:li:person:{sub}`.
 */
export function createLinkedinOAuth(settings: NetworkSettings, deps: NetworkDeps): NetworkOAuth {
  return {
    authorizationUrl({ state, redirectUri }) {
      const query = new URLSearchParams({ response_type: 'code', client_id: settings.clientId ?? '', redirect_uri: redirectUri, state, scope: SCOPES.join(' ') });
      return `${settings.authorizeUrl}?${query.toString().replace(/\+/g, '%20')}`;
    },

    async exchangeCode({ code, redirectUri }): Promise<TokenResult> {
      if (!settings.clientId || !settings.clientSecret) {
        deps.log('linkedin: client id or secret is not configured', {});
        return failure('upstream_unknown', false, 'LinkedIn is not configured on this service (client id and secret).');
      }
      const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: settings.clientId, client_secret: settings.clientSecret });
      const token = await exchange(deps, 'POST accessToken', settings.tokenUrl, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: form }, LINKEDIN_OAUTH_ERROR_TABLE);
      if (!token.ok) return token.failure;
      const t = obj(parseJson(token.text));
      const accessToken = str(t.access_token);
      if (!accessToken) return unexpected(deps, 'accessToken without access_token');

      const me = await exchange(deps, 'GET /v2/userinfo', `${settings.apiBaseUrl}/v2/userinfo`, { headers: { Authorization: `Bearer ${accessToken}` } });
      if (!me.ok) return me.failure;
      const user = obj(parseJson(me.text));
      const sub = str(user.sub);
      if (!sub) return unexpected(deps, 'userinfo without sub');
      const name = str(user.name) || [str(user.given_name), str(user.family_name)].filter(Boolean).join(' ') || sub;
      return {
        ok: true,
        tokens: {
          accessToken,
          refreshToken: str(t.refresh_token) || null,
          expiresAt: typeof t.expires_in === 'number' ? deps.now() + t.expires_in * 1000 : null,
          accountId: `urn:li:person:${sub}`,
          accountName: name,
        },
      };
    },
  };
}
