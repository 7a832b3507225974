import express, { type Router } from 'express';
import { PASSWORD_LENGTH } from '../../core/accounts/password.js';
import { ServiceError } from '../../core/errors.js';
import { html } from '../../web/html.js';
import { locals } from '../../web/request-context.js';
import { describedBy, errorBanner, field } from '../layout.js';
import { type DashboardDeps, problemPage, sendPlainPage } from '../page-router.js';
import { originOf, signedOutCsrf, signedOutCsrfValid } from './sign-in.js';

function forgotPage(options: { csrf: string; mail: boolean; sent?: boolean; error?: string | undefined }) {
  if (!options.mail) {
    return html`<section class="card narrow">
  <h1>Forgot your password?</h1>
  <p>This service sends no mail. Ask an operator of this service for a one-time link to set a new password; they create one with <code>npm run cli -- user reset-password you@example.com</code>.</p>
  <p><a href="/dashboard/sign-in">Back to sign-in</a></p>
</section>`;
  }
  if (options.sent) {
    return html`<section class="card narrow">
  <h1>Check your mail</h1>
  <p class="notice" role="status">If an account has this email, a link to set a new password is on its way. It works once, for an hour.</p>
  <p><a href="/dashboard/sign-in">Back to sign-in</a></p>
</section>`;
  }
  return html`<section class="card narrow">
  <h1>Forgot your password?</h1>
  ${errorBanner(options.error)}
  <form method="post" action="/dashboard/forgot-password" novalidate>
    <input type="hidden" name="csrf" value="${options.csrf}">
    ${field({ id: 'email', label: 'Email', hint: 'We mail a one-time link to set a new password.', error: options.error, control: html`<input id="email" name="email" type="email" autocomplete="username" required${describedBy('email', { hint: true, error: options.error })}>` })}
    <button type="submit" class="primary">Send the link</button>
  </form>
</section>`;
}

function resetPage(options: { csrf: string; token: string; error?: string | undefined }) {
  return html`<section class="card narrow">
  <h1>Set a new password</h1>
  ${errorBanner(options.error)}
  <form method="post" action="/dashboard/reset-password/${options.token}" novalidate>
    <input type="hidden" name="csrf" value="${options.csrf}">
    ${field({
      id: 'password',
      label: 'New password',
      hint: `${PASSWORD_LENGTH.min} to ${PASSWORD_LENGTH.max} characters. Every session of your account ends when it is set.`,
      error: options.error,
      control: html`<input id="password" name="password" type="password" autocomplete="new-password" minlength="${String(PASSWORD_LENGTH.min)}" required${describedBy('password', { hint: true, error: options.error })}>`,
    })}
    <button type="submit" class="primary">Set password</button>
  </form>
</section>`;
}

/**
 * "Forgot password" (mailed when mail is configured; otherwise the page says to ask an operator) and the
 * one-time link's page, which sets a password and ends every session of the person.
 */
export function resetPasswordRoutes(router: Router, deps: DashboardDeps): void {
  const mail = deps.services.accounts.mailConfigured;
  const form = express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 20 });
  const gone = (requestId: string) => problemPage('This link no longer works', 'It was already used or has expired (links work once, for an hour). Ask for a new one.', requestId, { href: '/dashboard/forgot-password', label: 'Ask for a new link' });

  router.get('/dashboard/forgot-password', (req, res) => {
    sendPlainPage(res, deps, 200, 'Forgot password', forgotPage({ csrf: signedOutCsrf(req, res, deps), mail }));
  });

  router.post('/dashboard/forgot-password', form, async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const csrf = signedOutCsrf(req, res, deps);
    if (!signedOutCsrfValid(req, body.csrf)) {
      sendPlainPage(res, deps, 403, 'Forgot password', forgotPage({ csrf, mail, error: 'The form expired or did not come from this page. Enter your email again.' }));
      return;
    }
    const email = typeof body.email === 'string' ? body.email.trim().slice(0, 254) : '';
    if (!/^[^\s@]+@[^\s@]+$/.test(email)) {
      sendPlainPage(res, deps, 400, 'Forgot password', forgotPage({ csrf, mail, error: 'Enter the email address of your account.' }));
      return;
    }
    const { mailed } = await deps.services.accounts.requestReset(email);
    sendPlainPage(res, deps, 200, 'Forgot password', forgotPage({ csrf, mail: mailed, sent: true }));
  });

  router.get('/dashboard/reset-password/:token', async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    const token = String(req.params.token);
    if (!(await deps.services.accounts.resetUsable(token))) {
      sendPlainPage(res, deps, 404, 'Link expired', gone(locals(res).requestId));
      return;
    }
    sendPlainPage(res, deps, 200, 'Set a new password', resetPage({ csrf: signedOutCsrf(req, res, deps), token }));
  });

  router.post('/dashboard/reset-password/:token', form, async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    const body = (req.body ?? {}) as Record<string, unknown>;
    const token = String(req.params.token);
    const csrf = signedOutCsrf(req, res, deps);
    if (!signedOutCsrfValid(req, body.csrf)) {
      sendPlainPage(res, deps, 403, 'Set a new password', resetPage({ csrf, token, error: 'The form expired or did not come from this page. Type the password again.' }));
      return;
    }
    try {
      await deps.services.accounts.resetPassword(token, typeof body.password === 'string' ? body.password : '', originOf(req, locals(res).requestId));
      res.redirect(303, '/dashboard/sign-in?reason=password_set');
    } catch (err) {
      if (!(err instanceof ServiceError)) throw err;
      if (err.code === 'not_found') sendPlainPage(res, deps, 404, 'Link expired', gone(locals(res).requestId));
      else sendPlainPage(res, deps, 400, 'Set a new password', resetPage({ csrf, token, error: err.message }));
    }
  });
}
