import { failure } from '../kit/failure.js';
import { list, obj, str } from '../kit/json.js';
import type { NetworkDeps, NetworkSettings } from '../network-deps.js';
import type { NetworkOAuth, TokenResult } from '../network-oauth.js';
import { facebookGraph } from './graph.js';

/** Publishing as a Page (Pages API): list the Pages, post as them, read the posts back. */
const SCOPES = ['pages_show_list', 'pages_manage_posts', 'pages_read_engagement'];

/**
 * Facebook Login for a Page: code → short-lived user token → long-lived user token (`fb_exchange_token`) →
 * `/me/accounts`. The connection publishes as the FIRST Page the user granted (one connection per Page; a user
 * with several Pages picks the Page in Facebook's dialog). The stored token is that Page's token, which has no
 * timer when made from a long-lived user token — so `expiresAt` is null and there is no `refresh`.
 */
export function createFacebookOAuth(settings: NetworkSettings, deps: NetworkDeps): NetworkOAuth {
  const graph = facebookGraph(settings, deps);
  const tokenCall = async (query: Record<string, string>) => {
    const url = new URL(settings.tokenUrl);
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    return graph.call({ method: 'GET', url });
  };

  return {
    authorizationUrl({ state, redirectUri }) {
      const url = new URL(settings.authorizeUrl);
      url.searchParams.set('client_id', settings.clientId ?? '');
      url.searchParams.set('redirect_uri', redirectUri);
      url.searchParams.set('state', state);
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('scope', SCOPES.join(','));
      return url.toString();
    },

    async exchangeCode({ code, redirectUri }): Promise<TokenResult> {
      const { clientId, clientSecret } = settings;
      if (!clientId || !clientSecret) return failure('upstream_unknown', false, 'Facebook is not configured on this service (client id and secret).');
      const short = await tokenCall({ client_id: clientId, client_secret: clientSecret, redirect_uri: redirectUri, code });
      if (!short.ok) return short.failure;
      const shortToken = str(short.data.access_token);
      if (!shortToken) return failure('upstream_unknown', false);
      const long = await tokenCall({ grant_type: 'fb_exchange_token', client_id: clientId, client_secret: clientSecret, fb_exchange_token: shortToken });
      if (!long.ok) return long.failure;
      const userToken = str(long.data.access_token);
      if (!userToken) return failure('upstream_unknown', false);
      const pages = await graph.call({ method: 'GET', url: graph.url('/me/accounts', { fields: 'id,name,access_token', limit: '100' }), token: userToken });
      if (!pages.ok) return pages.failure;
      const page = list(pages.data.data).map(obj)[0];
      const id = page && str(page.id);
      const pageToken = page && str(page.access_token);
      if (!page || !id || !pageToken) return failure('permission_revoked', false, 'The Facebook account granted access to no Page. Reconnect and choose a Page.');
      return { ok: true, tokens: { accessToken: pageToken, refreshToken: null, expiresAt: null, accountId: id, accountName: str(page.name) ?? id } };
    },
  };
}
