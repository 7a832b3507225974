import { randomBytes } from 'node:crypto';
import express, { type Request, type Response, type Router } from 'express';
import { PASSWORD_LENGTH } from '../../core/accounts/password.js';
import { constantTimeEqual } from '../../core/ids.js';
import type { Acceptance, InvitationPreview } from '../../core/members/invitations.service.js';
import { acceptAsNewPersonSchema } from '../../core/members/members.schema.js';
import { html, type SafeHtml } from '../../web/html.js';
import { locals } from '../../web/request-context.js';
import { clearCookie, readCookie, setCookie } from '../cookies.js';
import { check, errorAt, type FieldErrors } from '../forms.js';
import { csrfField, describedBy, errorBanner, field, isoDate } from '../layout.js';
import { csrfKeys, type DashboardDeps, FLASH_COOKIE, problemPage, sendPlainPage, SESSION_COOKIE } from '../page-router.js';

/** No session may exist yet, so CSRF is a double-submit: a random cookie the form repeats (as sign-in does). */
const JOIN_CSRF_COOKIE = 'svc_join_csrf';

/** Tokens are base64url; anything else is not one of ours and is answered as an unknown link without a lookup. */
const TOKEN = /^[A-Za-z0-9_-]{20,100}$/;

const GONE: Record<Extract<InvitationPreview, { state: 'gone' }>['why'], string> = {
  unknown: 'This invitation link is not valid. Check that it was copied whole, or ask for a new invitation.',
  accepted: 'This invitation was already used. If it was you, sign in; otherwise ask for a new invitation.',
  revoked: 'This invitation was withdrawn. Ask whoever invited you for a new one.',
  expired: 'This invitation has expired. Ask whoever invited you for a new one.',
};

/** The token segment of the address (a plain string; anything else is treated as an unknown link). */
function tokenOf(req: Request): string {
  const value: unknown = req.params.token;
  return typeof value === 'string' ? value : '';
}

/** The signed-in person, if the dashboard cookie is a person's session (an API-key session is nobody). */
async function signedInPerson(req: Request, deps: DashboardDeps): Promise<{ userId: string; sessionId: string; token: string } | null> {
  const token = readCookie(req, SESSION_COOKIE) ?? '';
  if (token === '') return null;
  const session = await deps.services.sessions.resolve(token);
  if (session.state === 'active' && session.principal.kind === 'user') return { userId: session.principal.userId, sessionId: session.principal.sessionId, token };
  if (session.state === 'no_workspace') return { userId: session.userId, sessionId: session.sessionId, token };
  return null;
}

function brandsText(brandIds: readonly string[] | null): string {
  return brandIds === null ? 'every brand' : `${brandIds.length} brand${brandIds.length === 1 ? '' : 's'}`;
}

function joinPage(
  path: string,
  invitation: Extract<InvitationPreview, { state: 'pending' }>,
  options: { csrf: string; signOutCsrf: string | null; errors?: FieldErrors; values?: { email: string; name: string } },
): SafeHtml {
  const { errors, values } = options;
  const intro = html`<h1>Join ${invitation.workspaceName}</h1>
  <p>You are invited to the workspace <strong>${invitation.workspaceName}</strong> as <strong>${invitation.role}</strong>, on ${brandsText(invitation.brandIds)}. The link works until ${isoDate(new Date(invitation.expiresAt).toISOString())}.</p>`;
  const signIn = `/dashboard/sign-in?next=${encodeURIComponent(path)}`;
  if (invitation.signedIn) {
    if (invitation.signedIn.mayAccept) {
      return html`<section class="card narrow">${intro}
  <form method="post" action="${path}">
    ${csrfField(options.csrf)}
    <input type="hidden" name="as" value="signed_in">
    <p>You are signed in as ${invitation.signedIn.email}.</p>
    <button type="submit" class="primary">Join ${invitation.workspaceName}</button>
  </form>
</section>`;
    }
    return html`<section class="card narrow">${intro}
  <p>This invitation is for ${invitation.email ?? 'another address'}, and you are signed in as ${invitation.signedIn.email}. Sign out, then open the link again.</p>
  ${
    options.signOutCsrf === null
      ? ''
      : html`<form method="post" action="/dashboard/sign-out">${csrfField(options.signOutCsrf)}<button type="submit">Sign out</button></form>`
  }
</section>`;
  }
  if (invitation.accountExists) {
    return html`<section class="card narrow">${intro}
  <p>An account already uses ${invitation.email}. Sign in with it, then come back to this link to join.</p>
  <p class="actions"><a class="button primary" href="${signIn}">Sign in</a></p>
</section>`;
  }
  const emailError = errorAt(errors, 'email');
  const passwordError = errorAt(errors, 'password');
  const nameError = errorAt(errors, 'name');
  return html`<section class="card narrow">${intro}
  <h2>Create your account</h2>
  ${errorBanner(errors?._, undefined, { focus: true })}
  <form method="post" action="${path}" novalidate>
    ${csrfField(options.csrf)}
    <input type="hidden" name="as" value="new">
    ${
      invitation.email === null
        ? field({
            id: 'join-email',
            label: 'Email',
            hint: 'The address you sign in with.',
            error: emailError,
            control: html`<input id="join-email" name="email" type="email" autocomplete="email" required maxlength="254" value="${values?.email ?? ''}"${describedBy('join-email', { hint: true, error: emailError })}>`,
          })
        : html`<p>Email: <strong>${invitation.email}</strong></p>`
    }
    ${field({
      id: 'join-name',
      label: 'Name (optional)',
      error: nameError,
      control: html`<input id="join-name" name="name" type="text" autocomplete="name" maxlength="100" value="${values?.name ?? ''}"${describedBy('join-name', { error: nameError })}>`,
    })}
    ${field({
      id: 'join-password',
      label: 'Password',
      hint: `At least ${PASSWORD_LENGTH.min} characters.`,
      error: passwordError,
      control: html`<input id="join-password" name="password" type="password" autocomplete="new-password" required minlength="${String(PASSWORD_LENGTH.min)}" maxlength="${String(PASSWORD_LENGTH.max)}"${describedBy('join-password', { hint: true, error: passwordError })}>`,
    })}
    <button type="submit" class="primary">Create account and join</button>
  </form>
  <p class="muted">Already have an account here? <a href="${signIn}">Sign in first</a>, then open this link again.</p>
</section>`;
}

/** What each refused acceptance says, and its status. */
function refusal(result: Extract<Acceptance, { ok: false }>, path: string): { status: number; title: string; message: string; link: { href: string; label: string } } {
  const signIn = { href: `/dashboard/sign-in?next=${encodeURIComponent(path)}`, label: 'Sign in' };
  switch (result.reason) {
    case 'gone':
      return { status: 410, title: 'This invitation no longer works', message: 'It was used, withdrawn or has expired. Ask whoever invited you for a new one.', link: { href: '/dashboard/sign-in', label: 'Go to sign-in' } };
    case 'account_exists':
      return { status: 409, title: 'An account already uses this address', message: 'Sign in with it, then open the invitation link again to join.', link: signIn };
    case 'already_member':
      return { status: 409, title: 'Already a member', message: 'You already belong to this workspace; the invitation was left unused.', link: { href: '/dashboard', label: 'Go to the dashboard' } };
    case 'email_mismatch':
      return { status: 403, title: 'This invitation is for another address', message: 'Sign in with the invited address, then open the link again.', link: signIn };
    case 'no_account':
      return { status: 401, title: 'Sign in again', message: 'Your session no longer matches an account. Sign in, then open the link again.', link: signIn };
  }
}

/**
 * `/dashboard/join/<token>`: the page an invitation link opens. It shows the workspace and role; a person with no
 * account makes one there (password and optional name), a signed-in person joins with one button, anyone else is
 * sent to sign in first. Accepting opens a session in the workspace joined.
 */
export function joinRoutes(router: Router, deps: DashboardDeps): void {
  const form = express.urlencoded({ extended: false, limit: '8kb', parameterLimit: 20 });

  const csrfCookie = (req: Request, res: Response): string => {
    const existing = readCookie(req, JOIN_CSRF_COOKIE);
    if (existing && /^[A-Za-z0-9_-]{32}$/.test(existing)) return existing;
    const token = randomBytes(24).toString('base64url');
    setCookie(res, JOIN_CSRF_COOKIE, token, { secure: deps.secure, sameSite: 'Strict' });
    return token;
  };

  async function show(req: Request, res: Response, status: number, extra: { errors?: FieldErrors; values?: { email: string; name: string } } = {}): Promise<void> {
    const token = tokenOf(req);
    const path = `/dashboard/join/${token}`;
    const person = await signedInPerson(req, deps);
    const preview: InvitationPreview = TOKEN.test(token) ? await deps.services.invitations.preview(token, person?.userId ?? null) : { state: 'gone', why: 'unknown' };
    if (preview.state === 'gone') {
      sendPlainPage(res, deps, preview.why === 'unknown' ? 404 : 410, 'Invitation', problemPage('This invitation no longer works', GONE[preview.why], locals(res).requestId, { href: '/dashboard/sign-in', label: 'Go to sign-in' }));
      return;
    }
    const signOutCsrf = person ? csrfKeys(deps.secretKey).forSession(person.token) : null;
    sendPlainPage(res, deps, status, `Join ${preview.workspaceName}`, joinPage(path, preview, { csrf: csrfCookie(req, res), signOutCsrf, ...extra }));
  }

  router.get('/dashboard/join/:token', async (req, res) => {
    await show(req, res, 200);
  });

  router.post('/dashboard/join/:token', form, async (req, res) => {
    const token = tokenOf(req);
    const path = `/dashboard/join/${token}`;
    const body = (req.body ?? {}) as Record<string, unknown>;
    const text = (name: string) => (typeof body[name] === 'string' ? body[name] : '');
    const cookie = readCookie(req, JOIN_CSRF_COOKIE);
    if (cookie === undefined || !constantTimeEqual(text('csrf'), cookie)) {
      await show(req, res, 403, { errors: { _: 'The form expired or did not come from this page. Nothing was sent; fill it in again.' } });
      return;
    }
    if (!TOKEN.test(token)) {
      await show(req, res, 404);
      return;
    }
    const origin = { ip: req.ip ?? null, userAgent: req.get('user-agent') ?? null };
    const person = await signedInPerson(req, deps);
    let result: Acceptance;
    if (text('as') === 'signed_in' && person) {
      result = await deps.services.invitations.acceptAsUser(token, person.userId, origin);
    } else {
      const values = { email: text('email'), name: text('name') };
      const input = check(acceptAsNewPersonSchema, { password: text('password'), ...(values.email.trim() === '' ? {} : { email: values.email.trim() }), ...(values.name.trim() === '' ? {} : { name: values.name }) });
      if (!input.ok) {
        await show(req, res, 400, { errors: input.errors, values });
        return;
      }
      // The link must still work before a password is hashed (a costly step).
      if ((await deps.services.invitations.preview(token)).state === 'gone') {
        await show(req, res, 410);
        return;
      }
      result = await deps.services.invitations.acceptAsNewPerson(token, input.data, origin);
      if (!result.ok && result.reason === 'email_mismatch') {
        await show(req, res, 400, { errors: { email: 'is required' }, values });
        return;
      }
    }
    if (!result.ok) {
      const r = refusal(result, path);
      sendPlainPage(res, deps, r.status, r.title, problemPage(r.title, r.message, locals(res).requestId, r.link));
      return;
    }
    clearCookie(res, JOIN_CSRF_COOKIE, deps.secure);
    if (person && person.userId === result.userId) {
      await deps.services.sessions.switchWorkspace(result.userId, person.sessionId, result.workspaceId);
    } else {
      const opened = await deps.services.sessions.openForUser(result.userId, 'invitation', origin, result.workspaceId);
      setCookie(res, SESSION_COOKIE, opened.token, { secure: deps.secure });
    }
    setCookie(res, FLASH_COOKIE, 'Welcome: you joined the workspace.', { secure: deps.secure, maxAge: 60 });
    res.redirect(303, '/dashboard');
  });
}
