import * as oidc from 'openid-client';
import type { SsoClaims, SsoProvider, SsoRequest } from '../core/accounts/sso.service.js';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The core's single sign-on port over `openid-client`: discovery of the issuer (once, retried after a failure),
 * the authorization code flow with PKCE (S256), state and nonce, and the ID token's validation (signature,
 * issuer, audience, expiry, nonce). The client authenticates with its secret in HTTP Basic (RFC 6749 §2.3.1,
 * which every provider supports). Plain http is accepted for a loopback issuer only (a provider on this machine).
 */
export function createOpenIdRelyingParty(
  settings: { issuer: string; clientId: string; clientSecret: string; redirectUri: string },
  onError: (err: unknown, step: string) => void = () => undefined,
): SsoProvider {
  const issuer = new URL(settings.issuer);
  const insecure = issuer.protocol === 'http:' && LOOPBACK.has(issuer.hostname);
  let discovered: Promise<oidc.Configuration> | undefined;
  const configuration = () => {
    discovered ??= oidc
      .discovery(issuer, settings.clientId, undefined, oidc.ClientSecretBasic(settings.clientSecret), insecure ? { execute: [oidc.allowInsecureRequests] } : undefined)
      .catch((err: unknown) => {
        onError(err, 'discovery');
        discovered = undefined;
        throw err;
      });
    return discovered;
  };

  return {
    issuer: settings.issuer,

    async start(): Promise<SsoRequest> {
      const config = await configuration();
      const codeVerifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: settings.redirectUri,
        scope: 'openid email profile',
        code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      });
      return { url: url.href, state, nonce, codeVerifier };
    },

    async finish(callbackUrl, expected) {
      const config = await configuration();
      const url = new URL(callbackUrl);
      // Checked here too, so a mismatch reads as what it is rather than as a provider failure.
      if (url.searchParams.get('state') !== expected.state) return { ok: false, reason: 'state_mismatch' };
      try {
        const tokens = await oidc.authorizationCodeGrant(config, url, { pkceCodeVerifier: expected.codeVerifier, expectedState: expected.state, expectedNonce: expected.nonce, idTokenExpected: true });
        const claims = tokens.claims();
        if (!claims) return { ok: false, reason: 'provider_error' };
        // Providers may keep scope claims out of the ID token (OpenID Connect Core §5.4): the UserInfo endpoint
        // has them then, checked to be about the same subject.
        const source = typeof claims.email === 'string' ? claims : await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
        const result: SsoClaims = {
          subject: claims.sub,
          email: typeof source.email === 'string' ? source.email : null,
          emailVerified: source.email_verified === true,
        };
        return { ok: true, claims: result };
      } catch (err) {
        onError(err, 'code exchange');
        return { ok: false, reason: 'provider_error' };
      }
    },
  };
}
