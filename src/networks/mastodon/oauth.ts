import { failure } from '../kit/failure.js';
import { obj, str } from '../kit/json.js';
import { pkceFor } from '../kit/pkce.js';
import type { NetworkDeps, NetworkSettings } from '../network-deps.js';
import type { AppRegistration, InstanceApp, NetworkOAuth, TokenResult } from '../network-oauth.js';
import { accountIdOf, BAD_ORIGIN, call, serverOrigin, unexpected } from './api.js';
import { MASTODON_OAUTH_ERROR_TABLE } from './errors.js';

/**
 * `read:accounts` reads the account (verify_credentials); `write:media` and `write:statuses` upload and post.
 * `read:statuses` too, although posting does not need it: Mastodon refuses a token without it on
 * `GET /api/v1/statuses/:id` (authorize_if_got_token!), which confirm() reads, and on the lookups that find a
 * status whose answer was lost.
 */
export const MASTODON_SCOPES = 'read:accounts read:statuses write:statuses write:media';
/** The application's name, shown by Mastodon on the consent page and under each post ("via …"). */
export const MASTODON_CLIENT_NAME = 'Multi-network publishing service';

const NO_APP = failure('upstream_unknown', false, 'This service is not registered on the Mastodon server yet. Connect again.');

/** The registration's server, checked again: it was stored, but it came from a user. */
function appOrigin(app: InstanceApp | undefined): string | null {
  return app ? serverOrigin(app.origin) : null;
}

/**
 * Mastodon's OAuth, once per server (docs: methods/apps, methods/oauth, client/token). The service registers as
 * an app on each server a user names (`registerApp`; the core keeps the registration), then runs the
 * authorization-code flow with PKCE (S256, supported since 4.3; earlier servers ignore the parameters). Mastodon
 * tokens do not expire (docs: api/oauth-tokens, "Tokens will not expire automatically"), so there is no
 * `refresh`: a revoked token answers 401 and the user connects again.
 */
export function createMastodonOAuth(_settings: NetworkSettings, deps: NetworkDeps): NetworkOAuth {
  return {
    async registerApp({ origin, redirectUri }): Promise<AppRegistration> {
      const server = serverOrigin(origin);
      if (!server) return BAD_ORIGIN;
      const form = new URLSearchParams({ client_name: MASTODON_CLIENT_NAME, redirect_uris: redirectUri, scopes: MASTODON_SCOPES });
      // The service's own address as the app's website (optional; left out when the redirect is not a URL).
      if (URL.canParse(redirectUri)) form.set('website', new URL(redirectUri).origin);
      const res = await call(deps, { origin: server, method: 'POST', path: '/api/v1/apps', body: form, table: MASTODON_OAUTH_ERROR_TABLE });
      if (!res.ok) return res.failure;
      const body = obj(res.body);
      const clientId = str(body.client_id);
      const clientSecret = str(body.client_secret);
      if (!clientId || !clientSecret) return unexpected(deps, 'POST /api/v1/apps without client_id or client_secret');
      return { ok: true, app: { origin: server, clientId, clientSecret } };
    },

    authorizationUrl({ state, redirectUri, app }) {
      const server = appOrigin(app);
      // A programming error, not an outcome: the core must pass the server's registration.
      if (!server || !app) throw new Error('mastodon: authorizationUrl needs a valid server registration (app)');
      const url = new URL('/oauth/authorize', server);
      const { challenge } = pkceFor(app.clientSecret, state);
      url.search = new URLSearchParams({
        response_type: 'code',
        client_id: app.clientId,
        redirect_uri: redirectUri,
        scope: MASTODON_SCOPES,
        state,
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }).toString();
      return url.toString();
    },

    async exchangeCode({ code, state, redirectUri, app }): Promise<TokenResult> {
      const server = appOrigin(app);
      if (!app) return NO_APP;
      if (!server) return BAD_ORIGIN;
      const form = new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        client_id: app.clientId,
        client_secret: app.clientSecret,
        redirect_uri: redirectUri,
        code_verifier: pkceFor(app.clientSecret, state).verifier,
      });
      const token = await call(deps, { origin: server, method: 'POST', path: '/oauth/token', body: form, table: MASTODON_OAUTH_ERROR_TABLE });
      if (!token.ok) return token.failure;
      const accessToken = str(obj(token.body).access_token);
      if (!accessToken) return unexpected(deps, 'POST /oauth/token without access_token');

      const me = await call(deps, { origin: server, method: 'GET', path: '/api/v1/accounts/verify_credentials', token: accessToken });
      if (!me.ok) return me.failure;
      const account = obj(me.body);
      const id = str(account.id);
      const acct = str(account.acct) ?? str(account.username);
      if (!id || !acct) return unexpected(deps, 'verify_credentials without id or acct');
      // `acct` is the bare username for the server's own accounts; the handle adds the server's host.
      const handle = acct.includes('@') ? `@${acct}` : `@${acct}@${new URL(server).host}`;
      return { ok: true, tokens: { accessToken, refreshToken: null, expiresAt: null, accountId: accountIdOf(server, id), accountName: handle } };
    },
  };
}
