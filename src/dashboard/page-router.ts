import type { Router } from 'express';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { AccountsService } from '../core/accounts/accounts.service.js';
import type { ApiKeysService } from '../core/api-keys/api-keys.service.js';
import type { AuditService } from '../core/audit/audit.service.js';
import type { BrandsService } from '../core/brands/brands.service.js';
import type { Clock } from '../core/clock.js';
import type { ConnectedAppsService } from '../core/connected-apps/connected-apps.service.js';
import type { ConnectionsService } from '../core/connections/connections.service.js';
import type { NetworkConnectService } from '../core/connections/network-connect.service.js';
import type { ContentsService } from '../core/contents/contents.service.js';
import type { MediaService } from '../core/media/media.service.js';
import type { InvitationsService } from '../core/members/invitations.service.js';
import type { MembersService } from '../core/members/members.service.js';
import type { MetersService } from '../core/meters/meters.service.js';
import type { OAuthClientsService } from '../core/oauth-clients/oauth-clients.service.js';
import type { QueueService } from '../core/scheduling/queue.service.js';
import type { SessionsService } from '../core/sessions/sessions.service.js';
import type { PasskeysService } from '../core/accounts/passkeys.service.js';
import type { SsoService } from '../core/accounts/sso.service.js';
import type { WalletService } from '../core/wallet/wallet.service.js';
import type { WebhooksService } from '../core/webhooks/webhooks.service.js';
import type { WorkspacesService } from '../core/workspaces/workspaces.service.js';
import { SERVER_ERROR_MESSAGE, ServiceError } from '../core/errors.js';
import { constantTimeEqual } from '../core/ids.js';
import { deriveKey, sign } from '../core/secret-box.js';
import type { SessionPrincipal } from '../core/sessions/sessions.service.js';
import type { SandboxCheckout } from '../core/wallet/sandbox-checkout.js';
import { locals, requestLog } from '../web/request-context.js';
import { originOf } from '../web/bearer-auth.js';
import { applyRateLimitHeaders, type RateLimiter } from '../web/rate-limit.js';
import { clearCookie, readCookie, setCookie } from './cookies.js';
import { html, type SafeHtml } from '../web/html.js';
import { setPageHeaders } from '../web/page-policy.js';
import { sectionsFor } from './section-access.js';
import { type PersonHeader, type SectionId, shell, type ShellOptions } from './layout.js';

export const SESSION_COOKIE = 'svc_session';
export const FLASH_COOKIE = 'svc_flash';

/** The core services the pages call; the container's set satisfies it (the dashboard declares its own needs). */
export interface DashboardServices {
  accounts: AccountsService;
  apiKeys: ApiKeysService;
  audit: AuditService;
  brands: BrandsService;
  connectedApps: ConnectedAppsService;
  connections: ConnectionsService;
  contents: ContentsService;
  invitations: InvitationsService;
  media: MediaService;
  members: MembersService;
  meters: MetersService;
  networkConnect: NetworkConnectService;
  oauthClients: OAuthClientsService;
  queue: QueueService;
  sessions: SessionsService;
  wallet: WalletService;
  webhooks: WebhooksService;
  workspaces: WorkspacesService;
  passkeys: PasskeysService;
  sso: SsoService | null;
}

export interface DashboardDeps {
  services: DashboardServices;
  /** Derives the CSRF keys; the service's secret key. */
  secretKey: Buffer;
  /**
   * The workspace limiter the REST API and MCP count on (spec 8). Every signed-in page and form counts once on
   * the session's workspace: a script holding a dashboard sign-in stays inside the budget of the key it used.
   */
  limiter: RateLimiter;
  /** How long a webhook receiver has to answer (WEBHOOK_TIMEOUT): the signing help states it. */
  webhookTimeoutMs: number;
  /** Whether BASE_URL is https (cookies get `Secure`). */
  secure: boolean;
  baseUrl: string;
  /** Origins a form may lead to besides ours: the networks' consent screens, reached after "connect". */
  formTargets: readonly string[];
  /** Whether a network can be connected live here (its OAuth client is configured). */
  liveAvailable(platform: string): boolean;
  /** The service's clock: the calendar opens on its week, so tests and the core agree on "today". */
  clock: Clock;
  /** The built-in checkout (`/pay`) while no payment provider is configured; null once PAYMENT_URL_TEMPLATE is set. */
  sandboxCheckout: SandboxCheckout | null;
}

/** What a signed-in page handler receives. */
export interface PageContext {
  req: Request;
  res: Response;
  principal: SessionPrincipal;
  workspaceId: string;
  /** The workspace's name for the header (its id when the name cannot be read). */
  workspaceName: string;
  /** The CSRF token of this session, for the forms the page renders. */
  csrf: string;
  sessionToken: string;
  /** The person signed in (null for a session opened with an API key). */
  person: PersonHeader | null;
  params: Record<string, string>;
  /** Query parameters; a repeated one keeps its first value. */
  query: Record<string, string>;
  form: PostedForm;
  /** The message a previous action left for this page. */
  flash: string | null;
  requestId: string;
  deps: DashboardDeps;
}

/** Parsed form fields of a POST. */
export class PostedForm {
  constructor(private readonly fields: Record<string, unknown> = {}) {}
  get(name: string): string {
    const value = this.fields[name];
    if (Array.isArray(value)) return typeof value[0] === 'string' ? value[0] : '';
    return typeof value === 'string' ? value : '';
  }
  all(name: string): string[] {
    const value = this.fields[name];
    if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
    return typeof value === 'string' ? [value] : [];
  }
  has(name: string): boolean {
    return this.fields[name] !== undefined;
  }
}

/** A page to render, or where to go next (with a message for that page). */
export type PageResult =
  | { title: string; body: SafeHtml; active?: SectionId; status?: number; /** The page placed the flash itself (next to what it is about). */ flashShown?: boolean }
  | { redirect: string; flash?: string };

/** Thrown by a handler that checks the CSRF token itself (multipart forms) when it is wrong. */
export class CsrfRefused extends Error {}

export type PageHandler = (ctx: PageContext) => Promise<PageResult>;

/** Pages and form actions of a signed-in person, with sessions, CSRF and error pages handled once here. */
export interface PageRouter {
  page(path: string, handler: PageHandler): void;
  action(path: string, handler: PageHandler): void;
  /** A POST whose body the handler reads itself (multipart uploads); the CSRF token is checked by `verifyCsrf`. */
  rawAction(path: string, handler: PageHandler): void;
  verifyCsrf(ctx: PageContext, presented: string): boolean;
}

export function csrfKeys(secretKey: Buffer) {
  const sessionKey = deriveKey(secretKey, 'dashboard-csrf');
  return {
    /** The synchronizer token of a session: an HMAC of its cookie value, so nothing more is stored. */
    forSession: (sessionToken: string) => sign(sessionKey, sessionToken),
  };
}

/** The dashboard's pages load their stylesheet, their one script and images from us (src/web/page-policy.ts). */
export function htmlHeaders(res: Response, deps: DashboardDeps): void {
  setPageHeaders(res, { script: ["'self'"], style: ["'self'"], img: ["'self'", 'data:'], media: ["'self'"], connect: ["'self'"], formTargets: deps.formTargets });
  res.setHeader('Referrer-Policy', 'same-origin');
}

/** A page for a signed-out visitor or a failure: never a stack trace, always a way on. */
export function sendPlainPage(res: Response, deps: DashboardDeps, status: number, title: string, body: SafeHtml): void {
  htmlHeaders(res, deps);
  res.status(status).type('html').send(shell({ title, body }).text);
}

/**
 * A failure in words with a way on: the given link and, when the person came from another of our pages, a link
 * back to it (`back`, from `backLink`).
 */
export function problemPage(title: string, message: string, requestId: string, link: { href: string; label: string }, back?: string | null): SafeHtml {
  return html`<section class="card narrow">
  <h1>${title}</h1>
  <p>${message}</p>
  <p class="actions"><a class="button" href="${link.href}">${link.label}</a>${back && back !== link.href ? html` <a href="${back}">Back to the previous page</a>` : ''}</p>
  <p class="muted">Reference: <code>${requestId}</code></p>
</section>`;
}

/**
 * The page a person came from, when it is one of ours (Referrer-Policy same-origin sends it only then), as a
 * path; null otherwise, or when it is the failing address itself.
 */
export function backLink(req: Request, deps: Pick<DashboardDeps, 'baseUrl'>): string | null {
  const referrer = req.get('referer');
  if (!referrer) return null;
  try {
    const from = new URL(referrer);
    const here = new URL(req.originalUrl, `${from.protocol}//${req.get('host') ?? from.host}`);
    const ours = from.host === here.host || from.origin === new URL(deps.baseUrl).origin;
    if (!ours || !from.pathname.startsWith('/') || `${from.pathname}${from.search}` === req.originalUrl) return null;
    return `${from.pathname}${from.search}`;
  } catch {
    return null;
  }
}

/**
 * A problem page that keeps the navigation when the visitor is signed in (404s and failures before a page handler
 * ran), and is a plain page otherwise. Resolving the session must not fail the failure page: then it is plain.
 */
export async function sendProblemPage(req: Request, res: Response, deps: DashboardDeps, status: number, title: string, body: SafeHtml): Promise<void> {
  let session: ShellOptions['session'];
  try {
    const token = readCookie(req, SESSION_COOKIE) ?? '';
    const resolved = token === '' ? null : await deps.services.sessions.resolve(token);
    if (resolved?.state === 'active') {
      const workspace = await deps.services.workspaces.get(resolved.principal, resolved.principal.workspaceId).catch(() => null);
      const person = await personHeader(deps.services, resolved.principal);
      session = { workspaceId: resolved.principal.workspaceId, workspaceName: workspace?.name, csrf: csrfKeys(deps.secretKey).forSession(token), person: person ?? undefined };
    }
  } catch {
    session = undefined;
  }
  if (res.headersSent) return;
  htmlHeaders(res, deps);
  res.status(status).type('html').send(shell({ title, body, ...(session ? { session } : {}) }).text);
}

/** The header's "who is signed in" for a person's session; null for an API key's. */
export async function personHeader(services: DashboardServices, principal: SessionPrincipal): Promise<PersonHeader | null> {
  if (principal.kind !== 'user') return null;
  const summary = await services.accounts.summary(principal.userId);
  if (!summary) return null;
  return { email: summary.email, role: principal.role, workspaces: summary.workspaces };
}

/** Why a person is at the sign-in page (`?reason=`), in words; also said when a form arrives after the end. */
export const SIGN_IN_REASONS: Record<string, string> = {
  expired: 'Your session expired. Sign in again to continue.',
  key_revoked: 'The API key of your session was revoked. Sign in with an active key.',
  signed_out: 'You signed out.',
  no_workspace: 'Your account belongs to no workspace. Ask an owner for an invitation.',
  account_deleted: 'Your account was deleted.',
  password_set: 'Your password is set. Sign in with it.',
  none: 'Sign in to continue.',
};

function firstValues(query: Request['query']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(query)) {
    const value = Array.isArray(v) ? v[0] : v;
    if (typeof value === 'string') out[k] = value;
  }
  return out;
}

export function createPageRouter(router: Router, deps: DashboardDeps): PageRouter {
  const csrf = csrfKeys(deps.secretKey);
  const form = express.urlencoded({ extended: false, limit: '256kb', parameterLimit: 200 });

  async function contextFor(req: Request, res: Response): Promise<PageContext | null> {
    const token = readCookie(req, SESSION_COOKIE) ?? '';
    const session = await deps.services.sessions.resolve(token);
    const { requestId } = locals(res);
    if (session.state !== 'active') {
      if (token !== '') clearCookie(res, SESSION_COOKIE, deps.secure);
      const next = req.method === 'GET' ? req.originalUrl : '/dashboard';
      if (req.method === 'GET') {
        // A visitor with no session at all is simply asked to sign in: the address says nothing went wrong, and
        // names only a destination other than the overview, where sign-in leads anyway.
        const query = new URLSearchParams();
        if (session.state !== 'none') query.set('reason', session.state);
        if (next !== '/dashboard') query.set('next', next);
        res.redirect(303, `/dashboard/sign-in${query.size > 0 ? `?${query}` : ''}`);
      } else {
        // A form sent after the session ended: say so instead of silently dropping what was typed.
        sendPlainPage(res, deps, 401, 'Session ended', problemPage('Your session ended', SIGN_IN_REASONS[session.state] ?? SIGN_IN_REASONS.none!, requestId, { href: '/dashboard/sign-in', label: 'Sign in' }));
      }
      return null;
    }
    const workspace = await deps.services.workspaces.get(session.principal, session.principal.workspaceId).catch((err: unknown) => {
      if (err instanceof ServiceError) return null;
      throw err;
    });
    const flash = readCookie(req, FLASH_COOKIE) ?? null;
    if (flash !== null) clearCookie(res, FLASH_COOKIE, deps.secure);
    const person = await personHeader(deps.services, session.principal);
    return {
      person,
      req,
      res,
      principal: { ...session.principal, origin: originOf(req, res, 'dashboard') },
      workspaceId: session.principal.workspaceId,
      workspaceName: workspace?.name ?? session.principal.workspaceId,
      csrf: csrf.forSession(token),
      sessionToken: token,
      params: req.params as Record<string, string>,
      query: firstValues(req.query),
      form: new PostedForm((req.body ?? {}) as Record<string, unknown>),
      flash: flash && flash.length <= 500 ? flash : null,
      requestId,
      deps,
    };
  }

  function respond(ctx: PageContext, result: PageResult): void {
    const { res } = ctx;
    if ('redirect' in result) {
      if (result.flash) setCookie(res, FLASH_COOKIE, result.flash, { secure: deps.secure, maxAge: 60 });
      res.redirect(303, result.redirect);
      return;
    }
    htmlHeaders(res, deps);
    const page = shell({ title: result.title, body: result.body, flash: result.flashShown ? null : ctx.flash, session: { workspaceId: ctx.workspaceId, workspaceName: ctx.workspaceName, csrf: ctx.csrf, active: result.active, person: ctx.person ?? undefined, sections: sectionsFor(ctx.principal) } });
    res.status(result.status ?? 200).type('html').send(page.text);
  }

  function fail(ctx: PageContext, err: unknown): void {
    if (err instanceof CsrfRefused) {
      csrfRefused(ctx);
      return;
    }
    if (err instanceof ServiceError) {
      const title = err.code === 'not_found' ? 'Not found' : err.code === 'forbidden' ? 'Not allowed' : 'That did not work';
      respond(ctx, { title, status: err.status, body: problemPage(title, err.message, ctx.requestId, { href: '/dashboard', label: 'Back to the overview' }, backLink(ctx.req, deps)) });
      return;
    }
    requestLog(ctx.res).error({ err }, 'dashboard page failed');
    if (ctx.res.headersSent) {
      ctx.res.end();
      return;
    }
    respond(ctx, { title: 'Something went wrong', status: 500, body: problemPage('Something went wrong', SERVER_ERROR_MESSAGE, ctx.requestId, { href: '/dashboard', label: 'Back to the overview' }, backLink(ctx.req, deps)) });
  }

  /**
   * Counts the request on the session's workspace (spec 8: the limit is the workspace's, whichever door); past the limit, answers a 429 page in words with
   * Retry-After before the handler runs, so nothing is changed. Returns whether the request may go on.
   */
  async function withinLimit(ctx: PageContext): Promise<boolean> {
    const decision = await deps.limiter.consume(ctx.workspaceId);
    const seconds = applyRateLimitHeaders(ctx.res, decision, Date.now());
    if (seconds === null) return true;
    const body = problemPage(
      'Too many requests',
      `This workspace made more than ${decision.limit} requests in the last minute (the dashboard, the API and MCP share this limit). Nothing was changed. Wait ${seconds} ${seconds === 1 ? 'second' : 'seconds'}, then reload the page or send the form again.`,
      ctx.requestId,
      { href: ctx.req.method === 'GET' ? ctx.req.originalUrl : '/dashboard', label: ctx.req.method === 'GET' ? 'Reload this page' : 'Back to the overview' },
    );
    htmlHeaders(ctx.res, deps);
    ctx.res.status(429).type('html').send(shell({ title: 'Too many requests', body, session: { workspaceId: ctx.workspaceId, workspaceName: ctx.workspaceName, csrf: ctx.csrf, person: ctx.person ?? undefined } }).text);
    return false;
  }

  const verifyCsrf = (ctx: PageContext, presented: string) => presented.length > 0 && constantTimeEqual(presented, ctx.csrf);

  function csrfRefused(ctx: PageContext): void {
    htmlHeaders(ctx.res, deps);
    const body = problemPage(
      'This form could not be accepted',
      'The form was missing its security token or came from another page or an older session. Nothing was changed. Go back, reload the page and try again.',
      ctx.requestId,
      { href: '/dashboard', label: 'Back to the overview' },
    );
    ctx.res.status(403).type('html').send(shell({ title: 'Form refused', body, session: { workspaceId: ctx.workspaceId, workspaceName: ctx.workspaceName, csrf: ctx.csrf, person: ctx.person ?? undefined } }).text);
  }

  const wrap = (handler: PageHandler, checkCsrf: boolean) => async (req: Request, res: Response, next: NextFunction) => {
    let ctx: PageContext | null;
    try {
      ctx = await contextFor(req, res);
      if (ctx && !(await withinLimit(ctx))) return;
    } catch (err) {
      next(err);
      return;
    }
    if (!ctx) return;
    if (checkCsrf && !verifyCsrf(ctx, ctx.form.get('csrf'))) {
      csrfRefused(ctx);
      return;
    }
    try {
      respond(ctx, await handler(ctx));
    } catch (err) {
      fail(ctx, err);
    }
  };

  return {
    page: (path, handler) => void router.get(path, wrap(handler, false)),
    action: (path, handler) => void router.post(path, form, wrap(handler, true)),
    rawAction: (path, handler) => void router.post(path, wrap(handler, false)),
    verifyCsrf,
  };
}
