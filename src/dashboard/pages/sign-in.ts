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
import type { Origin } from '../../core/principal.js';
import { csrfKeys, type DashboardDeps, problemPage, sendPlainPage, SESSION_COOKIE, SIGN_IN_REASONS } from '../page-router.js';

/** Before a session exists, CSRF is a double-submit: a random cookie that the form must repeat. */
export const SIGN_IN_CSRF_COOKIE = 'svc_signin_csrf';

/** The double-submit token of the signed-out forms (sign-in, password reset): read from its cookie or set anew. */
export function signedOutCsrf(req: Request, res: Response, deps: Pick<DashboardDeps, 'secure'>): string {
  const existing = readCookie(req, SIGN_IN_CSRF_COOKIE);
  if (existing && /^[A-Za-z0-9_-]{32}$/.test(existing)) return existing;
  const token = randomBytes(24).toString('base64url');
  setCookie(res, SIGN_IN_CSRF_COOKIE, token, { secure: deps.secure, sameSite: 'Strict' });
  return token;
}

/** Whether a signed-out form repeated its cookie's token. */
export function signedOutCsrfValid(req: Request, presented: unknown): boolean {
  const cookie = readCookie(req, SIGN_IN_CSRF_COOKIE);
  return typeof presented === 'string' && cookie !== undefined && constantTimeEqual(presented, cookie);
}

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

/** Which sign-in form an error belongs to. */
type SignInForm = 'password' | 'api_key';

/**
 * The sign-in page: a person's email and password first, then the API-key form, whose button alone is named
 * "Sign in" (scripts and tests written for the key-only page find it by that name) (spec: the dashboard accepts a key,
 * and the session acts as that key). Other ways in (passkeys, single sign-on) add their own section to `extraMethods`.
 */
function basePage(options: { csrf: string; next: string; notice?: string | undefined; error?: string | undefined; form?: SignInForm; email?: string; extraMethods?: SafeHtml }) {
  const error = options.error;
  const passwordError = options.form === 'password' ? error : undefined;
  const keyError = options.form === 'password' ? undefined : error;
  return html`<section class="card narrow">
  <h1>Sign in to the dashboard</h1>
  ${options.notice ? html`<p class="notice" role="status">${options.notice}</p>` : ''}
  ${errorBanner(error)}
  <div class="sign-in-method">
  <h2>With your email and password</h2>
  <form method="post" action="/dashboard/sign-in" novalidate>
    <input type="hidden" name="csrf" value="${options.csrf}">
    <input type="hidden" name="next" value="${options.next}">
    ${field({
      id: 'email',
      label: 'Email',
      error: passwordError,
      control: html`<input id="email" name="email" type="email" autocomplete="username" required value="${options.email ?? ''}"${describedBy('email', { error: passwordError })}>`,
    })}
    ${field({
      id: 'password',
      label: 'Password',
      control: html`<input id="password" name="password" type="password" autocomplete="current-password" required>`,
    })}
    <button type="submit" class="primary">Continue</button>
  </form>
  <p class="muted"><a href="/dashboard/forgot-password">Forgot your password?</a></p>
  </div>
  ${options.extraMethods ?? ''}
  <div class="sign-in-method">
  <h2>Use an API key instead</h2>
  <form method="post" action="/dashboard/sign-in" novalidate>
    <input type="hidden" name="csrf" value="${options.csrf}">
    <input type="hidden" name="next" value="${options.next}">
    ${field({
      id: 'api_key',
      label: 'API key',
      hint: 'An active key of your workspace (svc_live_…). It is checked once and never shown again; the session acts as this key.',
      error: keyError,
      control: html`<input id="api_key" name="api_key" type="password" autocomplete="off" required spellcheck="false"${describedBy('api_key', { hint: true, error: keyError })}>`,
    })}
    <button type="submit">Sign in</button>
  </form>
  <p class="muted">No key yet? The first start of the service prints one; operators create more with <code>npm run cli -- workspace create</code>.</p>
  </div>
</section>`;
}

/** The second step: the authenticator's code or a recovery code. */
function codePage(options: { csrf: string; next: string; error?: string | undefined }) {
  const error = options.error;
  return html`<section class="card narrow">
  <h1>Enter your sign-in code</h1>
  ${errorBanner(error)}
  <form method="post" action="/dashboard/sign-in/code" novalidate>
    <input type="hidden" name="csrf" value="${options.csrf}">
    <input type="hidden" name="next" value="${options.next}">
    ${field({
      id: 'code',
      label: 'Code',
      hint: 'The 6 digits your authenticator app shows now, or one of your recovery codes (xxxxx-xxxxx).',
      error,
      control: html`<input id="code" name="code" type="text" inputmode="text" autocomplete="one-time-code" required spellcheck="false"${describedBy('code', { hint: true, error })}>`,
    })}
    <button type="submit" class="primary">Continue</button>
  </form>
  <p class="muted"><a href="/dashboard/sign-in">Start again</a></p>
</section>`;
}

/** Where a request came from, for the audit log and the per-address throttle. */
export function originOf(req: Request, requestId: string): Origin {
  return { ip: req.ip ?? req.socket.remoteAddress ?? null, userAgent: req.get('user-agent') ?? null, requestId, via: 'dashboard' };
}

const REFUSED = 'That email and password do not match an account. Check both and try again.';

function throttledMessage(ms: number): string {
  const minutes = Math.max(1, Math.ceil(ms / 60_000));
  return `Too many failed sign-ins for this account or from this address. Wait ${minutes} ${minutes === 1 ? 'minute' : 'minutes'}, then try again, or set a new password with "Forgot your password?".`;
}

/** The short-lived proof that the password step passed, between the two steps (never a session). */
const PENDING_COOKIE = 'svc_signin_pending';

export function signInRoutes(router: Router, deps: DashboardDeps): void {
  // The other ways in (a passkey) sit under the API key form on every rendering of the page.
  const signInPage = (options: Parameters<typeof basePage>[0]) => basePage({ ...options, extraMethods: html`${ssoSignInLink(deps, options.next)}${passkeySignInForm(options.csrf, options.next)}` });
  ssoRoutes(router, deps, dashboardDestination);
  passkeySignInRoutes(router, deps, {
    csrfCookieName: SIGN_IN_CSRF_COOKIE,
    destination: dashboardDestination,
    refuse: (req, res, status, message, next) => sendPlainPage(res, deps, status, 'Sign in', signInPage({ csrf: csrfCookie(req, res), next, error: message })),
  });
  const form = express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 20 });

  const csrfCookie = (req: Request, res: Response): string => signedOutCsrf(req, res, deps);

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
    if (typeof body.email === 'string') {
      await passwordStep(req, res, cookie, next, body);
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

  /** After a sign-in by a person: the session cookie, the sign-in cookies cleared, on to `next`. */
  const signedIn = (res: Response, token: string, next: string) => {
    clearCookie(res, SIGN_IN_CSRF_COOKIE, deps.secure);
    clearCookie(res, PENDING_COOKIE, deps.secure);
    setCookie(res, SESSION_COOKIE, token, { secure: deps.secure });
    res.redirect(303, next);
  };

  async function passwordStep(req: Request, res: Response, csrf: string, next: string, body: Record<string, unknown>): Promise<void> {
    const email = typeof body.email === 'string' ? body.email.slice(0, 254) : '';
    const password = typeof body.password === 'string' ? body.password : '';
    const page = (status: number, error: string) => sendPlainPage(res, deps, status, 'Sign in', signInPage({ csrf, next, error, form: 'password', email }));
    if (email.trim() === '' || password === '' || password.length > 1024) {
      page(400, 'Enter your email and your password.');
      return;
    }
    const outcome = await deps.services.accounts.signIn.withPassword(email, password, originOf(req, locals(res).requestId));
    switch (outcome.kind) {
      case 'signed_in':
        signedIn(res, outcome.token, next);
        return;
      case 'second_factor':
        setCookie(res, PENDING_COOKIE, outcome.pending, { secure: deps.secure, sameSite: 'Strict' });
        res.redirect(303, `/dashboard/sign-in/code${next === DEFAULT_NEXT ? '' : `?next=${encodeURIComponent(next)}`}`);
        return;
      case 'throttled':
        res.setHeader('Retry-After', String(Math.max(1, Math.ceil(outcome.retryAfterMs / 1000))));
        page(429, throttledMessage(outcome.retryAfterMs));
        return;
      case 'refused':
        page(401, REFUSED);
        return;
    }
  }

  router.get('/dashboard/sign-in/code', (req, res) => {
    const next = dashboardDestination(req.query.next);
    if (!deps.services.accounts.signIn.pendingValid(readCookie(req, PENDING_COOKIE) ?? '')) {
      res.redirect(303, '/dashboard/sign-in?reason=expired');
      return;
    }
    sendPlainPage(res, deps, 200, 'Sign-in code', codePage({ csrf: csrfCookie(req, res), next }));
  });

  router.post('/dashboard/sign-in/code', form, async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const cookie = readCookie(req, SIGN_IN_CSRF_COOKIE);
    const next = dashboardDestination(body.next);
    if (typeof body.csrf !== 'string' || cookie === undefined || !constantTimeEqual(body.csrf, cookie)) {
      sendPlainPage(res, deps, 403, 'Sign-in code', codePage({ csrf: csrfCookie(req, res), next, error: 'The form expired or did not come from this page. Enter the code again.' }));
      return;
    }
    const code = typeof body.code === 'string' ? body.code.slice(0, 40) : '';
    const outcome = await deps.services.accounts.signIn.withSecondFactor(readCookie(req, PENDING_COOKIE) ?? '', code, originOf(req, locals(res).requestId));
    switch (outcome.kind) {
      case 'signed_in':
        signedIn(res, outcome.token, next);
        return;
      case 'expired':
      case 'second_factor':
        clearCookie(res, PENDING_COOKIE, deps.secure);
        res.redirect(303, '/dashboard/sign-in?reason=expired');
        return;
      case 'throttled':
        res.setHeader('Retry-After', String(Math.max(1, Math.ceil(outcome.retryAfterMs / 1000))));
        sendPlainPage(res, deps, 429, 'Sign-in code', codePage({ csrf: cookie, next, error: throttledMessage(outcome.retryAfterMs) }));
        return;
      case 'refused':
        sendPlainPage(res, deps, 401, 'Sign-in code', codePage({ csrf: cookie, next, error: 'That code is not right, or was already used. Type the code your app shows now.' }));
        return;
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
