import { toIso } from '../../../core/clock.js';
import type { TwoFactorStatus } from '../../../core/accounts/two-factor.js';
import { PASSWORD_LENGTH } from '../../../core/accounts/password.js';
import type { UserSessionView } from '../../../core/sessions/sessions.service.js';
import { html, type SafeHtml } from '../../../web/html.js';
import { actionButton, csrfField, describedBy, errorBanner, field, isoDate, secretOnce, table } from '../../layout.js';

/** A failure to show in the section it concerns, with the field it names. */
export interface SectionError {
  section: string;
  field?: string;
  message: string;
}

const errorIn = (error: SectionError | undefined, section: string, name?: string) => (error?.section === section && (name === undefined || error.field === name) ? error.message : undefined);

export function emailSection(email: string, workspaces: readonly { id: string; name: string; role: string }[], currentId: string, csrf: string): SafeHtml {
  return html`<section class="card" aria-labelledby="acct-email-h">
  <h2 id="acct-email-h">You</h2>
  <p>Signed in as <strong>${email}</strong>.</p>
  ${table({
    caption: 'Your workspaces',
    head: ['Workspace', 'Your role', ''],
    empty: 'You belong to no workspace.',
    rows: workspaces.map(
      (w) => html`<tr><th scope="row">${w.name} <span class="muted"><code>${w.id}</code></span></th><td>${w.role}</td><td>${
        w.id === currentId ? html`<span class="muted">(current)</span>` : actionButton({ action: '/dashboard/account/workspace', csrf, label: 'Switch to it', fields: { workspace_id: w.id }, describe: `Switch to ${w.name}` })
      }</td></tr>`,
    ),
  })}
</section>`;
}

export function passwordSection(csrf: string, error: SectionError | undefined): SafeHtml {
  const current = errorIn(error, 'password', 'current_password');
  const next = errorIn(error, 'password', 'new_password');
  return html`<section class="card" aria-labelledby="acct-password-h">
  <h2 id="acct-password-h">Password</h2>
  <form method="post" action="/dashboard/account/password" novalidate>
    ${csrfField(csrf)}
    ${field({ id: 'current_password', label: 'Current password', error: current, control: html`<input id="current_password" name="current_password" type="password" autocomplete="current-password" required${describedBy('current_password', { error: current })}>` })}
    ${field({
      id: 'new_password',
      label: 'New password',
      hint: `${PASSWORD_LENGTH.min} to ${PASSWORD_LENGTH.max} characters; a passphrase of a few words is easy to remember. Your other sessions end when it changes.`,
      error: next,
      control: html`<input id="new_password" name="new_password" type="password" autocomplete="new-password" minlength="${String(PASSWORD_LENGTH.min)}" required${describedBy('new_password', { hint: true, error: next })}>`,
    })}
    <button type="submit" class="primary">Change password</button>
  </form>
</section>`;
}

/** What the two-step section shows right after an action: the new secret, or new recovery codes (once each). */
export type TwoFactorShown = { secret: string; uri: string } | { recoveryCodes: string[] } | undefined;

export function twoFactorSection(status: TwoFactorStatus, csrf: string, shown: TwoFactorShown, error: SectionError | undefined): SafeHtml {
  const codeError = errorIn(error, 'totp', 'code');
  const proofError = errorIn(error, 'totp', 'proof');
  let body: SafeHtml;
  if (shown && 'recoveryCodes' in shown) {
    body = html`<div class="secret" role="region" aria-labelledby="recovery-h">
    <p id="recovery-h"><strong>Your recovery codes</strong> — shown once. Keep them somewhere safe: each one signs you in once if you lose your app.</p>
    <ul class="codes">${shown.recoveryCodes.map((c) => html`<li><code>${c}</code></li>`)}</ul>
  </div>`;
  } else if (status.enabled) {
    body = html`<p>Two-step sign-in is <strong>on</strong>. ${status.recoveryCodesLeft} of 10 recovery codes left.</p>
  <form method="post" action="/dashboard/account/recovery-codes">${csrfField(csrf)}<button type="submit">New recovery codes</button></form>
  <form method="post" action="/dashboard/account/totp/disable" novalidate>
    ${csrfField(csrf)}
    ${field({ id: 'proof', label: 'Password or current code', hint: 'Needed to turn two-step sign-in off.', error: proofError, control: html`<input id="proof" name="proof" type="password" autocomplete="current-password" required${describedBy('proof', { hint: true, error: proofError })}>` })}
    <button type="submit" class="danger">Turn off two-step sign-in</button>
  </form>`;
  } else if (shown && 'secret' in shown) {
    body = html`<p>Add this account to your authenticator app, then type the code it shows.</p>
  ${secretOnce({ id: 'totp-secret', label: 'Secret key', value: shown.secret, note: 'type it into the app (shown once).' })}
  ${secretOnce({ id: 'totp-uri', label: 'Or this otpauth address', value: shown.uri, note: 'for apps that import an address.' })}
  ${confirmForm(csrf, codeError)}`;
  } else {
    body = html`<p>Two-step sign-in is <strong>off</strong>. With it on, signing in asks for a code from an authenticator app after your password.</p>
  <form method="post" action="/dashboard/account/totp/start">${csrfField(csrf)}<button type="submit" class="primary">Set up an authenticator app</button></form>
  ${status.pending ? html`<p class="muted">A setup was started. If the app already has the account, confirm it with a code:</p>${confirmForm(csrf, codeError)}` : ''}`;
  }
  return html`<section class="card" aria-labelledby="acct-totp-h">
  <h2 id="acct-totp-h">Two-step sign-in</h2>
  ${errorBanner(error?.section === 'totp' && !codeError && !proofError ? error.message : undefined)}
  ${body}
</section>`;
}

function confirmForm(csrf: string, error: string | undefined): SafeHtml {
  return html`<form method="post" action="/dashboard/account/totp/confirm" novalidate>
    ${csrfField(csrf)}
    ${field({ id: 'totp-code', label: 'Code from the app', error, control: html`<input id="totp-code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" required${describedBy('totp-code', { error })}>` })}
    <button type="submit" class="primary">Turn on</button>
  </form>`;
}

export function sessionsSection(sessions: readonly UserSessionView[], csrf: string): SafeHtml {
  return html`<section class="card" aria-labelledby="acct-sessions-h">
  <h2 id="acct-sessions-h">Sessions</h2>
  ${table({
    caption: 'Where you are signed in',
    head: ['Signed in with', 'Address', 'Browser', 'Last seen', ''],
    empty: 'No session.',
    rows: sessions.map(
      (s) => html`<tr data-session="${s.id}"><th scope="row">${s.authMethod}${s.current ? html` <strong>(this session)</strong>` : ''}</th><td>${s.ip ?? '—'}</td><td>${s.userAgent ?? '—'}</td><td>${isoDate(toIso(s.lastSeenAt))}</td><td>${
        s.current ? '' : actionButton({ action: `/dashboard/account/sessions/${s.id}/end`, csrf, label: 'End', describe: `End the session from ${s.ip ?? 'an unknown address'}` })
      }</td></tr>`,
    ),
  })}
  ${actionButton({ action: '/dashboard/account/sessions/end-all', csrf, label: 'Sign out everywhere', danger: true, confirm: 'End every session, this one included?' })}
</section>`;
}

export function deleteSection(csrf: string, error: SectionError | undefined): SafeHtml {
  const passwordError = errorIn(error, 'delete', 'password');
  return html`<section class="card" aria-labelledby="acct-delete-h">
  <h2 id="acct-delete-h">Delete my account</h2>
  ${errorBanner(error?.section === 'delete' && !passwordError ? error.message : undefined)}
  <p>Your memberships and sessions are removed; what you made in the workspaces stays. The last owner of a workspace cannot leave it: make another member an owner first.</p>
  <form method="post" action="/dashboard/account/delete" novalidate data-confirm="Delete your account? This cannot be undone.">
    ${csrfField(csrf)}
    ${field({ id: 'delete-password', label: 'Your password', error: passwordError, control: html`<input id="delete-password" name="password" type="password" autocomplete="current-password"${describedBy('delete-password', { error: passwordError })}>` })}
    <button type="submit" class="danger">Delete my account</button>
  </form>
</section>`;
}
