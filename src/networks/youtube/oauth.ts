import type { NetworkFailure } from '../adapter.js';
import { failure } from '../kit/failure.js';
import { jsonObject } from '../kit/json.js';
import type { NetworkDeps, NetworkSettings } from '../network-deps.js';
import type { NetworkOAuth, NetworkTokens, TokenResult } from '../network-oauth.js';
import { YOUTUBE_MESSAGES } from './errors.js';
import { bearer, exchange, refused, trimBase } from './http.js';

const UPLOAD_SCOPE = 'https://www.googleapis.com/auth/youtube.upload';
/** Read-only is needed for `channels?mine=true` (the account id and name); upload alone cannot read it. */
const SCOPES = [UPLOAD_SCOPE, 'https://www.googleapis.com/auth/youtube.readonly'];

/**
 * Google OAuth 2.0 for YouTube: offline access with a consent prompt (so Google returns a refresh token each
 * time), the channel read with `channels?mine=true` for the account id and name, and `refresh`.
 */
export function createYoutubeOAuth(settings: NetworkSettings, deps: NetworkDeps): NetworkOAuth {
  const api = trimBase(settings.apiBaseUrl);

  async function tokenCall(form: Record<string, string>, what: string): Promise<{ ok: true; json: Record<string, unknown>; accessToken: string } | NetworkFailure> {
    if (!settings.clientId || !settings.clientSecret) return failure('upstream_unknown', false, YOUTUBE_MESSAGES.clientConfig);
    const body = new URLSearchParams({ ...form, client_id: settings.clientId, client_secret: settings.clientSecret });
    const a = await exchange(deps, settings.tokenUrl, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' }, body: body.toString() });
    const json = a.status === 200 ? jsonObject(a.text) : null;
    const accessToken = json?.access_token;
    if (!json || typeof accessToken !== 'string') return refused(deps, what, a);
    return { ok: true, json, accessToken };
  }

  const expiresAt = (json: Record<string, unknown>) => (typeof json.expires_in === 'number' ? deps.now() + json.expires_in * 1000 : null);

  async function readChannel(accessToken: string): Promise<{ ok: true; id: string; name: string } | NetworkFailure> {
    const a = await exchange(deps, `${api}/youtube/v3/channels?part=snippet&mine=true`, { headers: { ...bearer(accessToken), Accept: 'application/json' } });
    if (a.status !== 200) return refused(deps, 'reading the channel', a);
    const items = jsonObject(a.text)?.items;
    const channel = Array.isArray(items) ? (items[0] as { id?: unknown; snippet?: { title?: unknown } } | undefined) : undefined;
    if (typeof channel?.id !== 'string') return failure('permission_revoked', false, YOUTUBE_MESSAGES.noChannel);
    const title = channel.snippet?.title;
    return { ok: true, id: channel.id, name: typeof title === 'string' && title !== '' ? title : channel.id };
  }

  return {
    authorizationUrl({ state, redirectUri }) {
      if (!settings.clientId) throw new Error('youtube: clientId is not configured');
      const q = new URLSearchParams({
        client_id: settings.clientId,
        redirect_uri: redirectUri,
        response_type: 'code',
        scope: SCOPES.join(' '),
        // offline + consent: Google gives a refresh token only on a consent screen.
        access_type: 'offline',
        prompt: 'consent',
        include_granted_scopes: 'true',
        state,
      });
      return `${settings.authorizeUrl}?${q.toString()}`;
    },

    async exchangeCode({ code, redirectUri }): Promise<TokenResult> {
      const t = await tokenCall({ grant_type: 'authorization_code', code, redirect_uri: redirectUri }, 'exchanging the code');
      if (!t.ok) return t;
      // Google's consent screen lets the user untick a scope; without upload, publishing could never work.
      if (typeof t.json.scope === 'string' && !t.json.scope.split(' ').includes(UPLOAD_SCOPE)) return failure('permission_revoked');
      const channel = await readChannel(t.accessToken);
      if (!channel.ok) return channel;
      const refreshToken = typeof t.json.refresh_token === 'string' ? t.json.refresh_token : null;
      return { ok: true, tokens: { accessToken: t.accessToken, refreshToken, expiresAt: expiresAt(t.json), accountId: channel.id, accountName: channel.name } };
    },

    async refresh(tokens: NetworkTokens): Promise<TokenResult> {
      if (!tokens.refreshToken) return failure('token_expired');
      const t = await tokenCall({ grant_type: 'refresh_token', refresh_token: tokens.refreshToken }, 'refreshing the token');
      if (!t.ok) return t;
      // Google usually omits refresh_token on refresh: the old one stays valid.
      const refreshToken = typeof t.json.refresh_token === 'string' ? t.json.refresh_token : tokens.refreshToken;
      return { ok: true, tokens: { ...tokens, accessToken: t.accessToken, refreshToken, expiresAt: expiresAt(t.json) } };
    },
  };
}
