import type { NetworkFailure } from '../adapter.js';
import { failure } from '../kit/failure.js';
import { num, str } from '../kit/json.js';
import type { NetworkDeps, NetworkSettings } from '../network-deps.js';
import type { NetworkOAuth, NetworkTokens, TargetList, TokenResult } from '../network-oauth.js';
import { bodyOf, exchange, unexpected, v5 } from './api.js';
import { chooseBoard, usableBoards } from './boards.js';
import { PINTEREST_OAUTH_ERROR_TABLE } from './errors.js';

/**
 * Read the account and its boards, create a board when there is none, read and create pins. Pinterest joins
 * scopes with commas (developers.pinterest.com/docs/getting-started/set-up-authentication-and-authorization).
 */
export const PINTEREST_SCOPES = ['boards:read', 'boards:write', 'pins:read', 'pins:write', 'user_accounts:read'];
/** Without these, publishing can never work: refuse the connection rather than fail every job later. */
const NEEDED = ['boards:read', 'pins:read', 'pins:write'];

const NOT_CONFIGURED = failure('upstream_unknown', false, 'Pinterest is not configured on this service (app id and secret).');

/**
 * Pinterest OAuth 2.0 (authorization code; www.pinterest.com/oauth/, POST /v5/oauth/token with HTTP Basic client
 * authentication). Access tokens last `expires_in` seconds (30 days in practice); refresh tokens are "continuous": 60 days, renewed
 * with every refresh, so a connection refreshed regularly never ends. Apps created before 2025-09-25 must ask for
 * them with `continuous_refresh=true` on the code exchange (the legacy 365-day refresh token is no longer
 * supported); newer apps get them anyway, so the parameter is always sent.
 *
 * At connect the board is chosen (boards.ts): the account id is the board id (the adapter posts to it) and the
 * name reads `username · board`.
 */
export function createPinterestOAuth(settings: NetworkSettings, deps: NetworkDeps): NetworkOAuth {
  async function tokenCall(form: Record<string, string>): Promise<{ ok: true; json: Record<string, unknown>; accessToken: string } | NetworkFailure> {
    if (!settings.clientId || !settings.clientSecret) {
      deps.log('pinterest: client id or secret is not configured', {});
      return NOT_CONFIGURED;
    }
    const basic = Buffer.from(`${settings.clientId}:${settings.clientSecret}`).toString('base64');
    const init: RequestInit = {
      method: 'POST',
      headers: { Authorization: `Basic ${basic}`, 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body: new URLSearchParams(form).toString(),
    };
    const res = await exchange(deps, 'POST /v5/oauth/token', settings.tokenUrl, init, PINTEREST_OAUTH_ERROR_TABLE);
    if (!res.ok) return res.failure;
    const json = bodyOf(res);
    const accessToken = str(json.access_token);
    if (!accessToken) return unexpected(deps, 'oauth/token without access_token');
    return { ok: true, json, accessToken };
  }

  const expiresAt = (json: Record<string, unknown>) => {
    const seconds = num(json.expires_in);
    return seconds === null ? null : deps.now() + seconds * 1000;
  };

  return {
    authorizationUrl({ state, redirectUri }) {
      const query = new URLSearchParams({ client_id: settings.clientId ?? '', redirect_uri: redirectUri, response_type: 'code', scope: PINTEREST_SCOPES.join(','), state });
      return `${settings.authorizeUrl}?${query.toString()}`;
    },

    async exchangeCode({ code, redirectUri }): Promise<TokenResult> {
      const t = await tokenCall({ grant_type: 'authorization_code', code, redirect_uri: redirectUri, continuous_refresh: 'true' });
      if (!t.ok) return t;
      const granted = str(t.json.scope)?.split(/[\s,]+/);
      if (granted && !NEEDED.every((s) => granted.includes(s))) {
        return failure('permission_revoked', false, 'Pinterest did not grant the permissions needed to publish pins. Connect again and allow them all.');
      }
      const io = { deps, base: settings.apiBaseUrl, token: t.accessToken };
      const me = await v5(io, 'GET', '/user_account');
      if (!me.ok) return me.failure;
      const account = bodyOf(me);
      const username = str(account.username) ?? str(account.id);
      if (!username) return unexpected(deps, 'user_account without username');
      const chosen = await chooseBoard(io, username);
      if (!chosen.ok) return chosen;
      return {
        ok: true,
        tokens: {
          accessToken: t.accessToken,
          refreshToken: str(t.json.refresh_token),
          expiresAt: expiresAt(t.json),
          accountId: chosen.board.id,
          accountName: `${username} · ${chosen.board.name}`,
        },
      };
    },

    async listTargets(tokens: NetworkTokens): Promise<TargetList> {
      const listed = await usableBoards({ deps, base: settings.apiBaseUrl, token: tokens.accessToken });
      return listed.ok ? { ok: true, targets: listed.boards.map((b) => ({ id: b.id, name: b.name })) } : listed;
    },

    async retarget(tokens: NetworkTokens, targetId: string): Promise<TokenResult> {
      const listed = await usableBoards({ deps, base: settings.apiBaseUrl, token: tokens.accessToken });
      if (!listed.ok) return listed;
      const board = listed.boards.find((b) => b.id === targetId);
      if (!board) return failure('permission_revoked', false, 'That board is not one this account can publish public pins to.');
      // The name keeps the account part (`username · board`) and takes the new board's.
      const username = tokens.accountName.split(' · ')[0] ?? tokens.accountName;
      return { ok: true, tokens: { ...tokens, accountId: board.id, accountName: `${username} · ${board.name}` } };
    },

    async refresh(tokens: NetworkTokens): Promise<TokenResult> {
      if (!tokens.refreshToken) return failure('token_expired');
      const t = await tokenCall({ grant_type: 'refresh_token', refresh_token: tokens.refreshToken });
      if (!t.ok) return t;
      // A continuous refresh answers a new refresh token (60 days from now); keep the old one if it does not.
      const refreshToken = str(t.json.refresh_token) ?? tokens.refreshToken;
      return { ok: true, tokens: { ...tokens, accessToken: t.accessToken, refreshToken, expiresAt: expiresAt(t.json) } };
    },
  };
}
