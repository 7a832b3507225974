import { randomBytes } from 'node:crypto';
import express, { type Request, type Response, type Router } from 'express';
import { ServiceError } from '../../core/errors.js';
import { constantTimeEqual } from '../../core/ids.js';
import { locals } from '../../web/request-context.js';
import { clearCookie, readCookie, setCookie } from '../cookies.js';
import { html, type SafeHtml } from '../../web/html.js';
import { passkeySignInForm, passkeySignInRoutes } from './passkeys.js';
import { ssoRoutes, ssoSignInLink } from './sso.js';
import { describedBy, errorBanner, field } from '../layout.js';
import { csrfKeys, type DashboardDeps, problemPage, sendPlainPage, SESSION_COOKIE, SIGN_IN_REASONS } from '../page-router.js';

/** Before a session exists, CSRF is a double-submit: a random cookie that the form must repeat. */
export const SIGN_IN_CSRF_COOKIE = 'svc_signin_csrf';

/** Where sign-in leads when `next` is absent or refused. */
const DEFAULT_NEXT = '/dashboard';
/** A stand-in origin to resolve `next` against; only its path and query are ever used. */
const RESOLVE_BASE = 'http://dashboard.invalid';
/** Path characters our dashboard addresses use; no `%` (so no encoded `.`, `/` or `\`), no `\`, no space. */
const PATH = /^\/dashboard(?:\/[A-Za-z0-9/_.-]*)?$/;
/** Query text: printable ASCII without `\` or `#` (a URL-encoded query may hold `%`). */
const QUERY = /^[\x21-\x7e]*$/;

/**
 * The dashboard address sign-in may redirect to after `next` (no open redirect: SECURITY.md, RFC 9700 §4.11.2).
 * `next` is accepted only if it is already in its normal form and the WHATWG URL parser, resolving it the way a
 * browser will, lands on `/dashboard` or below on our own origin: dot segments (`/dashboard/../api/…`), encoded
 * ones (`%2e%2e`), backslashes, doubled slashes, control characters and absolute or scheme-relative URLs are all
 * refused. The value returned is the re-serialised resolution, so what is redirected to is what was checked.
 */
export function dashboardDestination(next: unknown): string {
  if (typeof next !== 'string' || next.length > 2048) return DEFAULT_NEXT;
  const q = next.indexOf('?');
  const path = q === -1 ? next : next.slice(0, q);
  const query = q === -1 ? '' : next.slice(q);
  if (!PATH.test(path) || !QUERY.test(query) || query.includes('\\') || query.includes('#')) return DEFAULT_NEXT;
  // A segment `.` or `..`, or an empty one (`//`): the browser would normalise it away, so it is not a plain path.
  if (path.split('/').slice(1).some((segment, i, all) => segment === '.' || segment === '..' || (segment === '' && i < all.length - 1))) return DEFAULT_NEXT;
  let url: URL;
  try {
    url = new URL(next, RESOLVE_BASE);
  } catch {
    return DEFAULT_NEXT;
  }
  const inDashboard = url.pathname === '/dashboard' || url.pathname.startsWith('/dashboard/');
  if (url.origin !== RESOLVE_BASE || !inDashboard || url.pathname !== path || url.username !== '' || url.password !== '' || url.hash !== '') return DEFAULT_NEXT;
  return `${url.pathname}${url.search}`;
}

function basePage(options: { csrf: string; next: string; notice?: string | undefined; error?: string | undefined; others?: SafeHtml }) {
  const error = options.error;
  return html`<section class="card narrow">
  <h1>Sign in to the dashboard</h1>
  ${options.notice ? html`<p class="notice" role="status">${options.notice}</p>` : ''}
  ${errorBanner(error)}
  <form method="post" action="/dashboard/sign-in" novalidate>
    <input type="hidden" name="csrf" value="${options.csrf}">
    <input type="hidden" name="next" value="${options.next}">
    ${field({
      id: 'api_key',
      label: 'API key',
      hint: 'An active key of your workspace (svc_live_…). It is checked once and never shown again; the session acts as this key.',
      error,
      control: html`<input id="api_key" name="api_key" type="password" autocomplete="current-password" required spellcheck="false"${describedBy('api_key', { hint: true, error })}>`,
    })}
    <button type="submit" class="primary">Sign in</button>
  </form>
  <p class="muted">No key yet? The first start of the service prints one; operators create more with <code>npm run cli -- workspace create</code>.</p>
</section>
${options.others ?? ''}`;
}

export function signInRoutes(router: Router, deps: DashboardDeps): void {
  // The other ways in (a passkey) sit under the API key form on every rendering of the page.
  const signInPage = (options: Parameters<typeof basePage>[0]) => basePage({ ...options, others: html`${ssoSignInLink(deps, options.next)}${passkeySignInForm(options.csrf, options.next)}` });
  ssoRoutes(router, deps, dashboardDestination);
  passkeySignInRoutes(router, deps, {
    csrfCookieName: SIGN_IN_CSRF_COOKIE,
    destination: dashboardDestination,
    refuse: (req, res, status, message, next) => sendPlainPage(res, deps, status, 'Sign in', signInPage({ csrf: csrfCookie(req, res), next, error: message })),
  });
  const form = express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 20 });

  const csrfCookie = (req: Request, res: Response): string => {
    const existing = readCookie(req, SIGN_IN_CSRF_COOKIE);
    if (existing && /^[A-Za-z0-9_-]{32}$/.test(existing)) return existing;
    const token = randomBytes(24).toString('base64url');
    setCookie(res, SIGN_IN_CSRF_COOKIE, token, { secure: deps.secure, sameSite: 'Strict' });
    return token;
  };

  router.get('/dashboard/sign-in', async (req, res) => {
    const current = await deps.services.sessions.resolve(readCookie(req, SESSION_COOKIE) ?? '');
    const next = dashboardDestination(req.query.next);
    if (current.state === 'active') {
      res.redirect(303, next);
      return;
    }
    // `none` is the page's own purpose, not news: no notice for it.
    const reason = typeof req.query.reason === 'string' && req.query.reason !== 'none' ? SIGN_IN_REASONS[req.query.reason] : undefined;
    sendPlainPage(res, deps, 200, 'Sign in', signInPage({ csrf: csrfCookie(req, res), next, notice: reason }));
  });

  router.post('/dashboard/sign-in', form, async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const cookie = readCookie(req, SIGN_IN_CSRF_COOKIE);
    const next = dashboardDestination(body.next);
    if (typeof body.csrf !== 'string' || cookie === undefined || !constantTimeEqual(body.csrf, cookie)) {
      const fresh = csrfCookie(req, res);
      sendPlainPage(res, deps, 403, 'Sign in', signInPage({ csrf: fresh, next, error: 'The sign-in form expired or did not come from this page. Nothing was sent; enter your key again.' }));
      return;
    }
    try {
      const { token } = await deps.services.sessions.signIn(typeof body.api_key === 'string' ? body.api_key : '');
      clearCookie(res, SIGN_IN_CSRF_COOKIE, deps.secure);
      setCookie(res, SESSION_COOKIE, token, { secure: deps.secure });
      res.redirect(303, next);
    } catch (err) {
      if (!(err instanceof ServiceError) || err.code !== 'invalid_api_key') throw err;
      sendPlainPage(res, deps, 401, 'Sign in', signInPage({ csrf: cookie, next, error: 'That API key is not valid. Use an active key of your workspace: svc_live_ followed by 32 characters.' }));
    }
  });

  router.post('/dashboard/sign-out', form, async (req, res) => {
    const token = readCookie(req, SESSION_COOKIE) ?? '';
    const body = (req.body ?? {}) as Record<string, unknown>;
    const expected = csrfKeys(deps.secretKey).forSession(token);
    if (token === '' || typeof body.csrf !== 'string' || !constantTimeEqual(body.csrf, expected)) {
      sendPlainPage(res, deps, 403, 'Form refused', problemPage('This form could not be accepted', 'The sign-out form was missing its security token or came from an older session. You may already be signed out.', locals(res).requestId, { href: '/dashboard/sign-in', label: 'Go to sign-in' }));
      return;
    }
    await deps.services.sessions.signOut(token);
    clearCookie(res, SESSION_COOKIE, deps.secure);
    res.redirect(303, '/dashboard/sign-in?reason=signed_out');
  });
}
