import { CONSENT_COOKIE_PATH, CONSENT_SESSION_COOKIE, OAUTH_MOUNT } from '../../core/oauth-clients/oauth-clients.service.js';
import { setCookie } from '../cookies.js';
import type { PageRouter } from '../page-router.js';

/** oidc-provider's interaction ids: URL-safe random strings. */
const INTERACTION_UID = /^[A-Za-z0-9_-]{1,100}$/;

/**
 * The way from the dashboard to an app's consent page. The consent page lives under /api/oauth/mcp, where the
 * dashboard's session cookie (scoped to /dashboard) is never sent; a person who signed in (the page router sends
 * anyone else to sign-in first, with this address as `next`) gets their session handed to the consent pages in a
 * cookie scoped to them, then goes back to the consent page, which now shows who they are. A session opened with
 * an API key is not handed over: the consent page asks for the key itself, as it always has.
 */
export function authorizeAppPages(pages: PageRouter): void {
  pages.page('/dashboard/authorize/:uid', async (ctx) => {
    const uid = ctx.params.uid ?? '';
    if (!INTERACTION_UID.test(uid)) return { redirect: '/dashboard' };
    if (ctx.principal.kind === 'user') {
      setCookie(ctx.res, CONSENT_SESSION_COOKIE, ctx.sessionToken, { secure: ctx.deps.secure, path: CONSENT_COOKIE_PATH });
    }
    return { redirect: `${OAUTH_MOUNT}/interaction/${uid}` };
  });
}
