import type { NetworkFailure } from '../adapter.js';
import { classify, failure } from '../kit/failure.js';
import { logFailedAnswer, send } from '../kit/http.js';
import { type Json, jsonObject, num, obj, str } from '../kit/json.js';
import type { NetworkDeps, NetworkSettings } from '../network-deps.js';
import type { NetworkOAuth, NetworkTokens, TokenResult } from '../network-oauth.js';
import { exchange } from './api.js';
import { TIKTOK_OAUTH_ERROR_TABLE, tiktokErrorInfo } from './errors.js';

/**
 * Scopes (comma-separated, Login Kit for Web): the account's open_id and display name, Direct Post, and Upload
 * (inbox drafts). `username` is not read from /v2/user/info/: that field needs user.info.profile, which this
 * service does not ask for; the handle comes from creator_info/query (video.publish) instead.
 */
const SCOPES = ['user.info.basic', 'video.publish', 'video.upload'];
const PUBLISHING_SCOPES = ['video.publish', 'video.upload'];
const USER_FIELDS = 'open_id,union_id,avatar_url,display_name';

const NOT_CONFIGURED = failure('upstream_unknown', false, 'TikTok is not configured on this service (client key and secret).');

/**
 * TikTok Login Kit (OAuth 2.0 v2): authorize on www.tiktok.com/v2/auth/authorize/ with `client_key`, exchange the
 * code at /v2/oauth/token/ (form: client_key, client_secret, code, grant_type, redirect_uri), read the account
 * with /v2/user/info/. Access tokens are short-lived (24 hours in the token reference, 2 hours in its newest
 * revision: the answer's `expires_in` decides); `refresh` renews them with the refresh token, which TikTok may
 * rotate — the returned one replaces the old, which then stops working.
 */
export function createTiktokOAuth(settings: NetworkSettings, deps: NetworkDeps): NetworkOAuth {
  const api = settings.apiBaseUrl.replace(/\/+$/, '');

  /** One call on the token endpoint; TikTok's OAuth errors are `{error, error_description, log_id}`. */
  async function tokenCall(form: Record<string, string>, what: string): Promise<{ ok: true; json: Json; accessToken: string } | NetworkFailure> {
    if (!settings.clientId || !settings.clientSecret) return NOT_CONFIGURED;
    const body = new URLSearchParams({ client_key: settings.clientId, client_secret: settings.clientSecret, ...form });
    const answer = await send(deps, {
      network: 'tiktok',
      call: `POST /v2/oauth/token/ (${what})`,
      url: settings.tokenUrl,
      init: { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Cache-Control': 'no-cache' }, body },
    });
    const json = jsonObject(answer.text);
    const accessToken = json ? str(json.access_token) : null;
    if (answer.ok && json && accessToken && json.error === undefined) return { ok: true, json, accessToken };
    // The token reference gives error bodies but not their HTTP status: the body's `error` decides.
    const status = answer.ok && !json ? 502 : answer.status;
    const sorted = classify(TIKTOK_OAUTH_ERROR_TABLE, answer.status === 0 ? { status: 0, code: '', text: '' } : tiktokErrorInfo(status, answer.text));
    if (answer.status !== 0) logFailedAnswer(deps, { network: 'tiktok', call: `POST /v2/oauth/token/ (${what})` }, answer, { row: sorted.row });
    return sorted.failure;
  }

  const expiresAt = (json: Json) => {
    const seconds = num(json.expires_in);
    return seconds === null ? null : deps.now() + seconds * 1000;
  };

  /** The account: open_id and display name from /v2/user/info/, the handle from creator_info (best effort). */
  async function readAccount(accessToken: string, openIdFromToken: string | null): Promise<{ ok: true; id: string; name: string } | NetworkFailure> {
    const headers = { Authorization: `Bearer ${accessToken}` };
    const me = await exchange(deps, 'GET /v2/user/info/', `${api}/v2/user/info/?fields=${USER_FIELDS}`, { headers });
    if (!me.ok) return me.failure;
    const user = obj(me.data.user);
    const id = str(user.open_id) ?? openIdFromToken;
    if (!id) {
      deps.log('tiktok: unexpected answer', { call: 'user/info without open_id' });
      return failure('upstream_unknown');
    }
    const creator = await exchange(deps, 'POST /v2/post/publish/creator_info/query/', `${api}/v2/post/publish/creator_info/query/`, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/json; charset=UTF-8' },
    });
    // Without the handle the account is still usable: its display name labels it.
    const handle = creator.ok ? str(creator.data.creator_username) : null;
    return { ok: true, id, name: handle ?? str(user.display_name) ?? id };
  }

  return {
    // Access tokens live hours: renewed when a job needs one, not by the sweep (see NetworkOAuth.refreshOnUse).
    refreshOnUse: true,
    authorizationUrl({ state, redirectUri }) {
      const url = new URL(settings.authorizeUrl);
      url.searchParams.set('client_key', settings.clientId ?? '');
      url.searchParams.set('scope', SCOPES.join(','));
      url.searchParams.set('response_type', 'code');
      url.searchParams.set('redirect_uri', redirectUri);
      url.searchParams.set('state', state);
      return url.toString();
    },

    async exchangeCode({ code, redirectUri }): Promise<TokenResult> {
      const t = await tokenCall({ code, grant_type: 'authorization_code', redirect_uri: redirectUri }, 'authorization_code');
      if (!t.ok) return t;
      // Scopes are toggleable on TikTok's consent page: without a publishing one the connection could never post.
      const granted = (str(t.json.scope) ?? '').split(',').map((s) => s.trim());
      if (str(t.json.scope) !== null && !PUBLISHING_SCOPES.some((s) => granted.includes(s))) {
        return failure('permission_revoked', false, 'The TikTok account did not allow this service to post. Connect it again and allow posting.');
      }
      const account = await readAccount(t.accessToken, str(t.json.open_id));
      if (!account.ok) return account;
      const tokens: NetworkTokens = {
        accessToken: t.accessToken,
        refreshToken: str(t.json.refresh_token),
        expiresAt: expiresAt(t.json),
        accountId: account.id,
        accountName: account.name,
      };
      return { ok: true, tokens };
    },

    async refresh(current: NetworkTokens): Promise<TokenResult> {
      if (!current.refreshToken) return failure('token_expired');
      const t = await tokenCall({ grant_type: 'refresh_token', refresh_token: current.refreshToken }, 'refresh_token');
      if (!t.ok) return t;
      const refreshToken = str(t.json.refresh_token) ?? current.refreshToken;
      return { ok: true, tokens: { ...current, accessToken: t.accessToken, refreshToken, expiresAt: expiresAt(t.json) } };
    },
  };
}
