import type { Router } from 'express';
import type { SsoRefusal } from '../../core/accounts/sso.service.js';
import { html, type SafeHtml } from '../../web/html.js';
import { locals } from '../../web/request-context.js';
import { clearCookie, readCookie, setCookie } from '../cookies.js';
import { type DashboardDeps, problemPage, sendPlainPage, SESSION_COOKIE } from '../page-router.js';

/** Holds the id of a sign-in under way at the provider; Lax, since the provider's redirect back is a cross-site navigation. */
const SSO_REQUEST_COOKIE = 'svc_sso';

/** "Sign in with …" on the sign-in page, when single sign-on is configured. */
export function ssoSignInLink(deps: DashboardDeps, next: string): SafeHtml {
  const sso = deps.services.sso;
  if (sso === null) return html``;
  const query = next === '/dashboard' ? '' : `?${new URLSearchParams({ next })}`;
  return html`<section class="card narrow" aria-labelledby="sso-h">
  <h2 id="sso-h">With your organisation's account</h2>
  <p><a class="button" href="/dashboard/sso/start${query}">Sign in with ${sso.label}</a></p>
</section>`;
}

const REFUSALS: Record<SsoRefusal, { title: string; message: (email?: string) => string }> = {
  expired: { title: 'Sign-in took too long', message: () => 'The sign-in started too long ago, was already used, or began in another browser. Start again from the sign-in page.' },
  state_mismatch: { title: 'Sign-in refused', message: () => 'The answer from the sign-in provider does not belong to the sign-in this browser started. Nothing was signed in; start again from the sign-in page.' },
  provider_error: { title: 'Sign-in failed', message: () => 'The sign-in provider did not confirm who you are. Start again from the sign-in page; if it keeps failing, tell your operator.' },
  email_unverified: { title: 'Email not verified', message: () => 'The sign-in provider did not confirm your email address, so it cannot be matched to an account here. Verify it with the provider, or sign in another way.' },
  not_allowed: {
    title: 'No access here yet',
    message: (email) => `${email ?? 'Your account'} is not a member of any workspace here, and its email domain does not join one by itself. Ask a workspace owner to invite this address, then sign in again.`,
  },
};

/**
 * Single sign-on's two addresses: `/dashboard/sso/start` sends the browser to the provider, and
 * `/dashboard/sso/callback` (the redirect URI registered with it) finishes the sign-in.
 */
export function ssoRoutes(router: Router, deps: DashboardDeps, destination: (next: unknown) => string): void {
  const refuse = (res: Parameters<typeof sendPlainPage>[0], status: number, title: string, message: string) =>
    sendPlainPage(res, deps, status, title, problemPage(title, message, locals(res).requestId, { href: '/dashboard/sign-in', label: 'Back to sign-in' }));

  router.get('/dashboard/sso/start', async (req, res) => {
    const sso = deps.services.sso;
    if (sso === null) {
      refuse(res, 404, 'Single sign-on is not set up', 'This service has no single sign-on provider configured. Sign in another way.');
      return;
    }
    let started: { requestId: string; url: string };
    try {
      started = await sso.begin(destination(req.query.next));
    } catch {
      // Discovery failed (the provider is unreachable or misconfigured); the adapter logged why.
      refuse(res, 502, 'Sign-in provider unavailable', 'The sign-in provider could not be reached. Try again in a moment, or sign in another way.');
      return;
    }
    setCookie(res, SSO_REQUEST_COOKIE, started.requestId, { secure: deps.secure, sameSite: 'Lax', maxAge: 600 });
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(303, started.url);
  });

  router.get('/dashboard/sso/callback', async (req, res) => {
    const sso = deps.services.sso;
    if (sso === null) {
      refuse(res, 404, 'Single sign-on is not set up', 'This service has no single sign-on provider configured. Sign in another way.');
      return;
    }
    const requestId = readCookie(req, SSO_REQUEST_COOKIE) ?? '';
    clearCookie(res, SSO_REQUEST_COOKIE, deps.secure);
    res.setHeader('Cache-Control', 'no-store');
    const result = await sso.complete(requestId, `${deps.baseUrl}${req.originalUrl}`, { ip: req.ip ?? null, userAgent: req.get('user-agent') ?? null, requestId: locals(res).requestId });
    if (!result.ok) {
      const words = REFUSALS[result.reason];
      refuse(res, result.reason === 'not_allowed' || result.reason === 'email_unverified' ? 403 : 400, words.title, words.message(result.email));
      return;
    }
    setCookie(res, SESSION_COOKIE, result.token, { secure: deps.secure });
    res.redirect(303, destination(result.next));
  });
}
