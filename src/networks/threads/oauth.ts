import { failure } from '../kit/failure.js';
import { str } from '../kit/json.js';
import type { NetworkDeps, NetworkSettings } from '../network-deps.js';
import type { NetworkOAuth, NetworkTokens, TokenResult } from '../network-oauth.js';
import { threadsGraph } from './graph.js';

/** Scopes: publishing, plus replies (chains reply to themselves; reply quota and reply lookups need them). */
const SCOPES = ['threads_basic', 'threads_content_publish', 'threads_manage_replies', 'threads_read_replies'];

/** An absolute URL with query parameters (the token exchange endpoints live outside the versioned path). */
function withQuery(url: string, query: Record<string, string>): URL {
  const u = new URL(url);
  for (const [k, v] of Object.entries(query)) u.searchParams.set(k, v);
  return u;
}

/**
 * Threads OAuth: authorize on threads.net, exchange the code at `tokenUrl`, swap the short-lived token for a
 * long-lived one (60 days) at `{api origin}/access_token`, and read the account with `/me`. Refresh renews the
 * long-lived token itself at `{api origin}/refresh_access_token` (Threads has no separate refresh token).
 */
export function createThreadsOAuth(settings: NetworkSettings, deps: NetworkDeps): NetworkOAuth {
  const graph = threadsGraph(settings, deps);
  const origin = new URL(settings.apiBaseUrl).origin;
  const notConfigured = failure('upstream_unknown', false, 'Threads is not configured on this service (client id and secret).');

  /** Reads `{access_token, expires_in}` from a token answer. */
  const longLived = (body: Record<string, unknown>) => {
    const accessToken = str(body.access_token);
    const expiresIn = typeof body.expires_in === 'number' ? body.expires_in : null;
    return accessToken ? { accessToken, expiresAt: expiresIn === null ? null : deps.now() + expiresIn * 1000 } : null;
  };

  return {
    authorizationUrl({ state, redirectUri }) {
      const url = new URL(settings.authorizeUrl);
      url.searchParams.set('client_id', settings.clientId ?? '');
      url.searchParams.set('redirect_uri', redirectUri);
      url.searchParams.set('scope', SCOPES.join(','));
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('state', state);
      return url.toString();
    },

    async exchangeCode({ code, redirectUri }): Promise<TokenResult> {
      if (!settings.clientId || !settings.clientSecret) return notConfigured;
      const short = await graph.call({ method: 'POST', url: new URL(settings.tokenUrl), form: {
        client_id: settings.clientId,
        client_secret: settings.clientSecret,
        grant_type: 'authorization_code',
        redirect_uri: redirectUri,
        code,
      } });
      if (!short.ok) return short.failure;
      const shortToken = str(short.data.access_token);
      if (!shortToken) return failure('upstream_unknown');
      const long = await graph.call({
        method: 'GET',
        url: withQuery(`${origin}/access_token`, { grant_type: 'th_exchange_token', client_secret: settings.clientSecret, access_token: shortToken }),
      });
      if (!long.ok) return long.failure;
      const tokens = longLived(long.data);
      if (!tokens) return failure('upstream_unknown');
      const me = await graph.call({ method: 'GET', url: graph.url('/me', { fields: 'id,username' }), token: tokens.accessToken });
      if (!me.ok) return me.failure;
      const accountId = str(me.data.id) ?? str(short.data.user_id);
      if (!accountId) return failure('upstream_unknown');
      return { ok: true, tokens: { ...tokens, refreshToken: null, accountId, accountName: str(me.data.username) ?? accountId } };
    },

    async refresh(current: NetworkTokens): Promise<TokenResult> {
      const res = await graph.call({ method: 'GET', url: withQuery(`${origin}/refresh_access_token`, { grant_type: 'th_refresh_token', access_token: current.accessToken }) });
      if (!res.ok) return res.failure;
      const tokens = longLived(res.data);
      return tokens ? { ok: true, tokens: { ...current, ...tokens } } : failure('upstream_unknown');
    },
  };
}
