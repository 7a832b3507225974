import { ServiceError } from '../../../core/errors.js';
import type { Principal } from '../../../core/principal.js';
import { html, type SafeHtml } from '../../../web/html.js';
import { clearCookie } from '../../cookies.js';
import { errorBanner } from '../../layout.js';
import type { PageContext, PageResult, PageRouter } from '../../page-router.js';
import { SESSION_COOKIE } from '../../page-router.js';
import { deleteSection, emailSection, passwordSection, type SectionError, sessionsSection, twoFactorSection, type TwoFactorShown } from './sections.js';

/** Sections that show their own refusal beside their form; others' go in a banner at the top. */
const SECTIONS_WITH_FORMS = new Set(['password', 'totp', 'delete']);

type PersonPrincipal = Extract<Principal, { kind: 'user' }>;

/** What a section of the account page is given to render itself. */
export interface AccountView {
  ctx: PageContext;
  principal: PersonPrincipal;
  error: SectionError | undefined;
}

/**
 * A further section of the account page (passkeys, linked sign-in providers): rendered after two-step sign-in and
 * before the sessions. Each package that adds a way to sign in registers its own here, with its own actions.
 */
export type AccountSection = (view: AccountView) => Promise<SafeHtml>;

/**
 * `/dashboard/account`: a person's email and workspaces, password, two-step sign-in, further sign-in methods
 * (`extraSections`), sessions and account deletion. A session opened with an API key has no account: the page
 * says so.
 */
export function accountPages(pages: PageRouter, extraSections: readonly AccountSection[] = []): void {
  async function render(ctx: PageContext, state: { error?: SectionError; shown?: TwoFactorShown; status?: number } = {}): Promise<PageResult> {
    if (ctx.principal.kind !== 'user') {
      return {
        title: 'Account',
        body: html`<h1>Account</h1><section class="card"><p>This session was opened with an API key: it acts as the key and has no personal account. Sign in with your email to manage your password, two-step sign-in and sessions.</p></section>`,
      };
    }
    const principal = ctx.principal;
    const { accounts, sessions } = ctx.deps.services;
    const [summary, twoFactor, list] = await Promise.all([accounts.summary(principal.userId), accounts.twoFactor.status(principal.userId), sessions.listForUser(principal.userId, principal.sessionId)]);
    if (!summary) throw new ServiceError('not_found', 'This account no longer exists.');
    const view: AccountView = { ctx, principal, error: state.error };
    const extras = await Promise.all(extraSections.map((section) => section(view)));
    return {
      title: 'Account',
      status: state.status ?? (state.error ? 400 : 200),
      body: html`<h1>Account</h1>
${errorBanner(state.error && !SECTIONS_WITH_FORMS.has(state.error.section) ? state.error.message : undefined)}
${emailSection(summary.email, summary.workspaces, ctx.workspaceId, ctx.csrf)}
${passwordSection(ctx.csrf, state.error)}
${twoFactorSection(twoFactor, ctx.csrf, state.shown, state.error)}
${extras}
${sessionsSection(list, ctx.csrf)}
${deleteSection(ctx.csrf, state.error)}`,
    };
  }

  /** Runs an account action of a person; a refusal is shown in the section it concerns. */
  const personal = (section: string, handler: (ctx: PageContext, principal: PersonPrincipal) => Promise<PageResult>) => async (ctx: PageContext) => {
    if (ctx.principal.kind !== 'user') return render(ctx);
    try {
      return await handler(ctx, ctx.principal);
    } catch (err) {
      if (!(err instanceof ServiceError) || (err.code !== 'validation_failed' && err.code !== 'forbidden')) throw err;
      const fields = (err.extra.fields ?? []) as { path: string }[];
      return render(ctx, { error: { section, message: err.message, ...(fields[0] ? { field: fields[0].path } : {}) }, status: err.status });
    }
  };

  pages.page('/dashboard/account', (ctx) => render(ctx));

  pages.action(
    '/dashboard/account/workspace',
    personal('workspaces', async (ctx, principal) => {
      await ctx.deps.services.sessions.switchWorkspace(principal.userId, principal.sessionId, ctx.form.get('workspace_id'));
      return { redirect: '/dashboard', flash: 'Switched workspace.' };
    }),
  );

  pages.action(
    '/dashboard/account/password',
    personal('password', async (ctx, principal) => {
      const { endedSessions } = await ctx.deps.services.accounts.changePassword(principal, ctx.form.get('current_password'), ctx.form.get('new_password'));
      return { redirect: '/dashboard/account', flash: `Password changed. ${endedSessions === 1 ? '1 other session was' : `${endedSessions} other sessions were`} ended.` };
    }),
  );

  pages.action(
    '/dashboard/account/totp/start',
    personal('totp', async (ctx, principal) => {
      const summary = await ctx.deps.services.accounts.summary(principal.userId);
      const shown = await ctx.deps.services.accounts.twoFactor.start(principal.userId, summary?.email ?? principal.userId);
      return render(ctx, { shown });
    }),
  );

  pages.action(
    '/dashboard/account/totp/confirm',
    personal('totp', async (ctx, principal) => {
      const recoveryCodes = await ctx.deps.services.accounts.twoFactor.confirm(principal.userId, ctx.form.get('code'));
      return render(ctx, { shown: { recoveryCodes } });
    }),
  );

  pages.action(
    '/dashboard/account/totp/disable',
    personal('totp', async (ctx, principal) => {
      await ctx.deps.services.accounts.twoFactor.disable(principal.userId, ctx.form.get('proof'));
      return { redirect: '/dashboard/account', flash: 'Two-step sign-in is off; the recovery codes no longer work.' };
    }),
  );

  pages.action(
    '/dashboard/account/recovery-codes',
    personal('totp', async (ctx, principal) => render(ctx, { shown: { recoveryCodes: await ctx.deps.services.accounts.twoFactor.regenerateRecoveryCodes(principal.userId) } })),
  );

  pages.action(
    '/dashboard/account/sessions/:sessionId/end',
    personal('sessions', async (ctx, principal) => {
      const ended = await ctx.deps.services.sessions.endForUser(principal.userId, ctx.params.sessionId ?? '');
      return { redirect: '/dashboard/account', flash: ended ? 'That session ended.' : 'That session had already ended.' };
    }),
  );

  pages.action(
    '/dashboard/account/sessions/end-all',
    personal('sessions', async (ctx, principal) => {
      await ctx.deps.services.sessions.endAllForUser(principal.userId);
      clearCookie(ctx.res, SESSION_COOKIE, ctx.deps.secure);
      return { redirect: '/dashboard/sign-in?reason=signed_out' };
    }),
  );

  pages.action(
    '/dashboard/account/delete',
    personal('delete', async (ctx, principal) => {
      await ctx.deps.services.accounts.deleteAccount(principal, ctx.form.get('password'));
      clearCookie(ctx.res, SESSION_COOKIE, ctx.deps.secure);
      return { redirect: '/dashboard/sign-in?reason=account_deleted' };
    }),
  );
}
