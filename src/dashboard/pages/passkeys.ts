import type { Request, Response, Router } from 'express';
import express from 'express';
import { ServiceError } from '../../core/errors.js';
import { constantTimeEqual } from '../../core/ids.js';
import type { PasskeySignInRefusal } from '../../core/accounts/passkeys.service.js';
import { html, type SafeHtml } from '../../web/html.js';
import { locals } from '../../web/request-context.js';
import { clearCookie, readCookie, setCookie } from '../cookies.js';
import { fieldErrorsOf, errorAt, type FieldErrors } from '../forms.js';
import { actionButton, csrfField, describedBy, errorBanner, field, table } from '../layout.js';
import type { DashboardDeps, PageContext, PageRouter } from '../page-router.js';
import { SESSION_COOKIE } from '../page-router.js';

/** The browser half of WebAuthn (@simplewebauthn/browser's bundle) and our script around it. */
const SCRIPTS = html`<script src="/dashboard/assets/webauthn.js"></script>
<script type="module" src="/dashboard/assets/passkeys.js"></script>`;

/** Holds the id of a passkey sign-in's challenge between its two requests; HttpOnly, this browser only. */
export const PASSKEY_CHALLENGE_COOKIE = 'svc_passkey_challenge';

const iso = (ms: number | null) => (ms === null ? 'never' : html`<time datetime="${new Date(ms).toISOString()}">${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC</time>`);

/**
 * The "Passkeys" part of a person's account: add one (the browser asks the authenticator, the page posts its
 * answer), rename, remove. A session opened with an API key has no person behind it, so no passkeys.
 */
export function passkeyPages(pages: PageRouter): void {
  async function render(ctx: PageContext, extra: { errors?: FieldErrors; name?: string; status?: number } = {}) {
    const principal = ctx.principal;
    if (principal.kind !== 'user') {
      return {
        title: 'Passkeys',
        body: html`<h1>Passkeys</h1>
<section class="card narrow"><p>Passkeys belong to a person's account. This session was opened with an API key: sign in with your account to add or remove passkeys.</p></section>`,
      };
    }
    const passkeys = ctx.deps.services.passkeys;
    const [list, ceremony] = await Promise.all([passkeys.list(principal.userId), passkeys.registrationOptions(principal)]);
    const nameError = errorAt(extra.errors, 'name');
    const credentialError = errorAt(extra.errors, 'credential');
    const rows = list.map(
      (p) => html`<tr>
  <th scope="row">${p.name}</th>
  <td>${iso(p.createdAt)}</td>
  <td>${iso(p.lastUsedAt)}</td>
  <td>
    <form method="post" action="/dashboard/account/passkeys/${p.id}/rename" class="inline">
      ${csrfField(ctx.csrf)}
      <label class="vh" for="rename-${p.id}">New name for ${p.name}</label>
      <input id="rename-${p.id}" name="name" type="text" maxlength="60" required value="${p.name}">
      <button type="submit">Rename</button>
    </form>
    ${actionButton({ action: `/dashboard/account/passkeys/${p.id}/remove`, csrf: ctx.csrf, label: 'Remove', danger: true, describe: `Remove ${p.name}`, confirm: `Remove the passkey ${p.name}? It will no longer sign you in.` })}
  </td>
</tr>`,
    );
    return {
      title: 'Passkeys',
      status: extra.status ?? 200,
      body: html`<h1>Passkeys</h1>
<p><a href="/dashboard/account">Back to your account</a></p>
<section class="card" aria-labelledby="passkeys-h">
  <h2 id="passkeys-h">Your passkeys</h2>
  <p>A passkey signs you in with this device's screen lock or a security key, without a password.</p>
  ${table({ caption: 'Your passkeys', head: ['Name', 'Added', 'Last used', 'Actions'], rows, empty: 'No passkeys yet.' })}
</section>
<section class="card" aria-labelledby="add-passkey-h">
  <h2 id="add-passkey-h">Add a passkey</h2>
  ${errorBanner(credentialError)}
  <form method="post" action="/dashboard/account/passkeys" data-passkey-register data-options="${JSON.stringify(ceremony.options)}">
    ${csrfField(ctx.csrf)}
    <input type="hidden" name="challenge_id" value="${ceremony.challengeId}">
    <input type="hidden" name="credential" value="">
    ${field({
      id: 'passkey-name',
      label: 'Name',
      hint: 'To tell your passkeys apart, e.g. Work laptop or Phone.',
      error: nameError,
      control: html`<input id="passkey-name" name="name" type="text" maxlength="60" required value="${extra.name ?? ''}"${describedBy('passkey-name', { hint: true, error: nameError })}>`,
    })}
    <p class="hint" data-passkey-status role="status"></p>
    <button type="submit" class="primary">Add a passkey</button>
  </form>
</section>
${SCRIPTS}`,
    };
  }

  /** The signed-in person, with where the request came from for the audit log. */
  const person = (ctx: PageContext) => {
    if (ctx.principal.kind !== 'user') throw new ServiceError('forbidden', 'Passkeys belong to a person: sign in with your account, not an API key.');
    return { ...ctx.principal, origin: { ip: ctx.req.ip ?? null, userAgent: ctx.req.get('user-agent') ?? null, requestId: ctx.requestId, via: 'dashboard' as const } };
  };

  pages.page('/dashboard/account/passkeys', (ctx) => render(ctx));

  pages.action('/dashboard/account/passkeys', async (ctx) => {
    const principal = person(ctx);
    let credential: unknown;
    try {
      credential = JSON.parse(ctx.form.get('credential'));
    } catch {
      credential = null;
    }
    try {
      await ctx.deps.services.passkeys.register(principal, { challengeId: ctx.form.get('challenge_id'), credential, name: ctx.form.get('name') });
    } catch (err) {
      const errors = fieldErrorsOf(err);
      if (errors) return render(ctx, { errors, name: ctx.form.get('name'), status: 400 });
      throw err;
    }
    return { redirect: '/dashboard/account/passkeys', flash: `The passkey “${ctx.form.get('name').trim()}” was added. You can sign in with it now.` };
  });

  pages.action('/dashboard/account/passkeys/:passkeyId/rename', async (ctx) => {
    try {
      await ctx.deps.services.passkeys.rename(person(ctx), ctx.params.passkeyId!, ctx.form.get('name'));
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'validation_failed') return { redirect: '/dashboard/account/passkeys', flash: 'A passkey needs a name of 1 to 60 characters; nothing was changed.' };
      throw err;
    }
    return { redirect: '/dashboard/account/passkeys', flash: 'The passkey was renamed.' };
  });

  pages.action('/dashboard/account/passkeys/:passkeyId/remove', async (ctx) => {
    try {
      await ctx.deps.services.passkeys.remove(person(ctx), ctx.params.passkeyId!);
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'not_found') return { redirect: '/dashboard/account/passkeys', flash: 'That passkey was already removed.' };
      throw err;
    }
    return { redirect: '/dashboard/account/passkeys', flash: 'The passkey was removed. It no longer signs you in.' };
  });
}

/** The sign-in page's passkey button: the script asks for a challenge, the authenticator answers, the form posts it. */
export function passkeySignInForm(csrf: string, next: string): SafeHtml {
  return html`<section class="card narrow" aria-labelledby="passkey-sign-in-h">
  <h2 id="passkey-sign-in-h">With a passkey</h2>
  <form method="post" action="/dashboard/sign-in/passkey" data-passkey-sign-in>
    <input type="hidden" name="csrf" value="${csrf}">
    <input type="hidden" name="next" value="${next}">
    <input type="hidden" name="assertion" value="">
    <p class="hint" data-passkey-status role="status"></p>
    <button type="submit">Use a passkey</button>
  </form>
</section>
${SCRIPTS}`;
}

const REFUSALS: Record<PasskeySignInRefusal | 'no_script', string> = {
  expired: 'The passkey sign-in took too long or was already used. Try again.',
  malformed: 'The passkey did not answer as expected. Try again.',
  unknown_passkey: 'That passkey is not registered here (it may have been removed). Sign in another way and add it again.',
  not_verified: 'The passkey could not be verified. Try again, or sign in another way.',
  no_script: 'Signing in with a passkey needs JavaScript in this browser. Sign in another way.',
};

/**
 * The two requests of a passkey sign-in, before any session exists: CSRF is the sign-in page's double-submit
 * cookie (`csrfCookieName`), and the challenge's id waits in an HttpOnly cookie of its own.
 */
export function passkeySignInRoutes(
  router: Router,
  deps: DashboardDeps,
  page: { csrfCookieName: string; destination(next: unknown): string; refuse(req: Request, res: Response, status: number, message: string, next: string): void },
): void {
  const form = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 10 });
  const csrfOk = (req: Request, body: Record<string, unknown>) => {
    const cookie = readCookie(req, page.csrfCookieName);
    return typeof body.csrf === 'string' && cookie !== undefined && constantTimeEqual(body.csrf, cookie);
  };

  router.post('/dashboard/sign-in/passkey/options', form, async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (!csrfOk(req, body)) {
      res.status(403).json({ error: 'forbidden', message: 'The sign-in page expired. Reload it and try again.', request_id: locals(res).requestId });
      return;
    }
    const { challengeId, options } = await deps.services.passkeys.signInOptions();
    setCookie(res, PASSKEY_CHALLENGE_COOKIE, challengeId, { secure: deps.secure, sameSite: 'Strict', maxAge: 300 });
    res.setHeader('Cache-Control', 'no-store');
    res.json(options);
  });

  router.post('/dashboard/sign-in/passkey', form, async (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const next = page.destination(body.next);
    if (!csrfOk(req, body)) {
      page.refuse(req, res, 403, 'The sign-in form expired or did not come from this page. Try again.', next);
      return;
    }
    const challengeId = readCookie(req, PASSKEY_CHALLENGE_COOKIE) ?? '';
    clearCookie(res, PASSKEY_CHALLENGE_COOKIE, deps.secure);
    const text = typeof body.assertion === 'string' ? body.assertion : '';
    if (text === '' || challengeId === '') {
      page.refuse(req, res, 400, REFUSALS[text === '' ? 'no_script' : 'expired'], next);
      return;
    }
    let assertion: unknown;
    try {
      assertion = JSON.parse(text);
    } catch {
      assertion = null;
    }
    const result = await deps.services.passkeys.signIn(challengeId, assertion, { ip: req.ip ?? null, userAgent: req.get('user-agent') ?? null, requestId: locals(res).requestId });
    if (!result.ok) {
      page.refuse(req, res, 401, REFUSALS[result.reason], next);
      return;
    }
    clearCookie(res, page.csrfCookieName, deps.secure);
    setCookie(res, SESSION_COOKIE, result.token, { secure: deps.secure });
    res.redirect(303, next);
  });
}
