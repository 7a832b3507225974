import { type NextFunction, type Request, type Response, Router } from 'express';
import { SERVER_ERROR_MESSAGE } from '../core/errors.js';
import { locals, requestLog } from '../web/request-context.js';
import { assetRoutes } from './assets.js';
import { backLink, createPageRouter, type DashboardDeps, type PageRouter, problemPage, sendProblemPage } from './page-router.js';
import { apiKeyPages } from './pages/api-keys.js';
import { authorizeAppPages } from './pages/authorize-app.js';
import { auditLogPages } from './pages/audit-log.js';
import { approvalPages } from './pages/approvals.js';
import { brandPages } from './pages/brands.js';
import { calendarPages } from './pages/calendar.js';
import { draftPages } from './pages/drafts.js';
import { queuePages } from './pages/queue.js';
import { composePages } from './pages/compose/index.js';
import { connectAssistantPages } from './pages/connect-assistant.js';
import { connectedAppPages } from './pages/connected-apps.js';
import { connectionBoardPages } from './pages/connection-board.js';
import { contentPages } from './pages/contents.js';
import { joinRoutes } from './pages/join.js';
import { mediaPages } from './pages/media.js';
import { memberPages } from './pages/members.js';
import { oauthClientPages } from './pages/oauth-clients.js';
import { overviewPage } from './pages/overview.js';
import { html } from '../web/html.js';
import { passkeyPages } from './pages/passkeys.js';
import { signInRoutes } from './pages/sign-in.js';
import { accountPages } from './pages/account/index.js';
import { resetPasswordRoutes } from './pages/reset-password.js';
import { walletPages } from './pages/wallet.js';
import { webhookPages } from './pages/webhooks.js';

/**
 * The web dashboard (spec 1: the third way in, for people), rendered on the server from the same core services
 * as the REST API and MCP tools. Each page module registers its pages and form actions on the page router.
 */
export function dashboardRouter(deps: DashboardDeps): Router {
  const router = Router();
  assetRoutes(router);
  signInRoutes(router, deps);
  joinRoutes(router, deps);
  resetPasswordRoutes(router, deps);
  // The sandbox checkout's first address: links given out before it moved under /dashboard still arrive.
  router.get('/pay', (req: Request, res: Response) => {
    res.redirect(303, `/dashboard/pay${req.originalUrl.slice('/pay'.length)}`);
  });
  const pages = createPageRouter(router, deps);
  registerPages(pages);

  // Signed in, a missing page keeps the navigation, so a wrong address is never a dead end; signed out, it offers the overview.
  router.use('/dashboard', (req: Request, res: Response, next: NextFunction) => {
    const body = problemPage('Page not found', 'There is no dashboard page at this address.', locals(res).requestId, { href: '/dashboard', label: 'Go to the overview' }, backLink(req, deps));
    sendProblemPage(req, res, deps, 404, 'Not found', body).catch(next);
  });
  // Failures before a page handler runs (an unreadable form body, a database outage while resolving the session).
  router.use('/dashboard', (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const status = (err as { status?: unknown }).status;
    const client = typeof status === 'number' && status >= 400 && status < 500;
    if (!client) requestLog(res).error({ err }, 'dashboard request failed');
    if (res.headersSent) {
      res.end();
      return;
    }
    const message = client
      ? status === 413
        ? 'The form was larger than the dashboard accepts. Shorten it and try again.'
        : 'The form could not be read. Reload the page and try again.'
      : SERVER_ERROR_MESSAGE;
    const body = problemPage(client ? 'The form could not be read' : 'Something went wrong', message, locals(res).requestId, { href: '/dashboard', label: 'Back to the overview' }, backLink(req, deps));
    // A failure before the handler may be the database itself: sendProblemPage falls back to a plain page then.
    void sendProblemPage(req, res, deps, client ? status : 500, 'Something went wrong', body).catch(() => {
      if (!res.headersSent) res.status(500).end();
    });
  });
  return router;
}

/**
 * Every signed-in page and form action, registered on `pages`. Its own function so a test can hand it a recording
 * page router and hold every form action against the role matrix (test/dashboard/roles-matrix.test.ts).
 */
export function registerPages(pages: PageRouter): void {
  overviewPage(pages);
  composePages(pages);
  calendarPages(pages);
  draftPages(pages);
  approvalPages(pages);
  contentPages(pages);
  mediaPages(pages);
  brandPages(pages);
  connectionBoardPages(pages);
  queuePages(pages);
  webhookPages(pages);
  apiKeyPages(pages);
  memberPages(pages);
  connectAssistantPages(pages);
  connectedAppPages(pages);
  authorizeAppPages(pages);
  oauthClientPages(pages);
  walletPages(pages);
  // Passkeys are managed on their own page; the account page points to it.
  accountPages(pages, [async () => html`<section class="card" aria-labelledby="passkeys-h"><h2 id="passkeys-h">Passkeys</h2><p>Sign in with your device's screen lock instead of a password.</p><p><a href="/dashboard/account/passkeys">Manage passkeys</a></p></section>`]);
  passkeyPages(pages);
  auditLogPages(pages);
}
