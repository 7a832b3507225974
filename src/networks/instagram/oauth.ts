import { failure } from '../kit/failure.js';
import { type Json, obj, str } from '../kit/json.js';
import type { NetworkDeps, NetworkSettings } from '../network-deps.js';
import type { NetworkOAuth, TokenResult } from '../network-oauth.js';
import { instagramGraph } from './graph.js';

const SCOPES = ['instagram_business_basic', 'instagram_business_content_publish'];

/**
 * Business Login for Instagram: authorization code → short-lived token (1 h) → long-lived token (60 days),
 * refreshed with `ig_refresh_token` (the token must be at least 24 h old). The account is read with
 * `GET /me?fields=user_id,username`; `user_id` is the professional account id used for publishing.
 */
export function createInstagramOAuth(settings: NetworkSettings, deps: NetworkDeps): NetworkOAuth {
  const graph = instagramGraph(settings, deps);
  const api = settings.apiBaseUrl.replace(/\/+$/, '');
  // The token exchange and refresh endpoints live at the host root, outside the versioned path.
  const root = api.replace(/\/v\d+(\.\d+)?$/, '');
  const notConfigured = () => failure('upstream_unknown', false, 'Instagram is not configured on this service (client id and secret).');

  function longLived(data: Json): { token: string; expiresAt: number | null } | undefined {
    const token = str(data.access_token);
    if (token === null) return undefined;
    const expiresIn = Number(data.expires_in);
    return { token, expiresAt: Number.isFinite(expiresIn) ? deps.now() + expiresIn * 1000 : null };
  }

  return {
    authorizationUrl({ state, redirectUri }) {
      if (!settings.clientId) throw new Error('instagram: clientId is not configured');
      const q = new URLSearchParams({ client_id: settings.clientId, redirect_uri: redirectUri, response_type: 'code', scope: SCOPES.join(','), state });
      return `${settings.authorizeUrl}?${q.toString()}`;
    },

    async exchangeCode({ code, redirectUri }): Promise<TokenResult> {
      if (!settings.clientId || !settings.clientSecret) return notConfigured();
      const form = { client_id: settings.clientId, client_secret: settings.clientSecret, grant_type: 'authorization_code', redirect_uri: redirectUri, code };
      const short = await graph.call({ method: 'POST', url: new URL(settings.tokenUrl), form });
      if (!short.ok) return short.failure;
      // Business Login answers {data: [{access_token, user_id, permissions}]}; older apps get the flat object.
      const first = Array.isArray(short.data.data) ? obj(short.data.data[0]) : short.data;
      const shortToken = str(first.access_token);
      if (shortToken === null) return failure('upstream_unknown');
      const granted = first.permissions;
      const grantedList = Array.isArray(granted) ? granted.map(String) : typeof granted === 'string' ? granted.split(',') : null;
      if (grantedList !== null && !grantedList.map((s) => s.trim()).includes('instagram_business_content_publish')) {
        return failure('permission_revoked', false, 'The Instagram account did not grant the publishing permission. Connect it again and allow publishing.');
      }

      const q = new URLSearchParams({ grant_type: 'ig_exchange_token', client_secret: settings.clientSecret, access_token: shortToken });
      const exchanged = await graph.call({ method: 'GET', url: new URL(`${root}/access_token?${q.toString()}`) });
      if (!exchanged.ok) return exchanged.failure;
      const long = longLived(exchanged.data);
      if (!long) return failure('upstream_unknown');

      const me = await graph.call({ method: 'GET', url: graph.url('/me', { fields: 'user_id,username' }), token: long.token });
      if (!me.ok) return me.failure;
      const accountId = str(me.data.user_id) ?? str(first.user_id);
      if (accountId === null) return failure('upstream_unknown');
      const accountName = str(me.data.username) ?? accountId;
      return { ok: true, tokens: { accessToken: long.token, refreshToken: null, expiresAt: long.expiresAt, accountId, accountName } };
    },

    async refresh(tokens): Promise<TokenResult> {
      const q = new URLSearchParams({ grant_type: 'ig_refresh_token', access_token: tokens.accessToken });
      const r = await graph.call({ method: 'GET', url: new URL(`${root}/refresh_access_token?${q.toString()}`) });
      if (!r.ok) return r.failure;
      const long = longLived(r.data);
      if (!long) return failure('upstream_unknown');
      return { ok: true, tokens: { ...tokens, accessToken: long.token, expiresAt: long.expiresAt } };
    },
  };
}
