import type { NextFunction, Request, Response } from 'express';
import { type NetworkCallbackQuery, networkCallbackQuerySchema } from '../../core/connections/connections.schema.js';
import { ServiceError } from '../../core/errors.js';
import type { SessionPrincipal } from '../../core/sessions/sessions.service.js';
import { locals } from '../../web/request-context.js';
import { PLATFORM_SLUGS, type PlatformSlug } from '../../vocabulary/platforms.js';
import { readCookie, setCookie } from '../cookies.js';
import { explainServiceError, platformName } from '../explain.js';
import { html } from '../../web/html.js';
import { type DashboardDeps, FLASH_COOKIE, problemPage, sendPlainPage, SESSION_COOKIE } from '../page-router.js';

/**
 * The callback's query read with the core's schema, field by field: a malformed field (too long, repeated) counts
 * as absent, and the core then says what is missing, on the page the person sees.
 */
function callbackQuery(query: Request['query']): NetworkCallbackQuery {
  const shape = networkCallbackQuerySchema.shape;
  const read = (key: keyof NetworkCallbackQuery): string | undefined => {
    const field = shape[key].safeParse(query[key]);
    return field.success ? field.data : undefined;
  };
  return { code: read('code'), state: read('state'), error: read('error'), error_description: read('error_description') };
}

/**
 * The networks send the person's browser back to the REST callback. A browser (it asks for HTML) gets a page,
 * or the dashboard with a message when it is signed in; programs asking for JSON get the REST answer as before.
 */
export function networkCallbackForBrowsers(deps: DashboardDeps) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const platform = String(req.params.platform ?? '');
    if (req.accepts(['json', 'html']) !== 'html' || !(PLATFORM_SLUGS as readonly string[]).includes(platform)) {
      next();
      return;
    }
    const slug = platform as PlatformSlug;
    const { requestId } = locals(res);
    try {
      const connection = await deps.services.networkConnect.callback(slug, callbackQuery(req.query));
      const message = `Connected the ${platformName(slug)} account “${connection.name}”.`;
      const session = await deps.services.sessions.resolve(readCookie(req, SESSION_COOKIE) ?? '');
      if (session.state === 'active' && (await isTheirs(deps, session.principal, connection.id))) {
        setCookie(res, FLASH_COOKIE, message, { secure: deps.secure, maxAge: 60 });
        res.redirect(303, '/dashboard/brands');
        return;
      }
      sendPlainPage(res, deps, 200, 'Connected', html`<section class="card narrow"><h1>Account connected</h1><p>${message} You can close this page or <a href="/dashboard/brands">open the dashboard</a>.</p></section>`);
    } catch (err) {
      if (!(err instanceof ServiceError)) {
        next(err);
        return;
      }
      sendPlainPage(
        res,
        deps,
        err.status,
        'Connection not made',
        problemPage('The account was not connected', explainServiceError(err), requestId, { href: '/dashboard/brands', label: 'Back to brands & connections' }),
      );
    }
  };
}

/** Whether the signed-in person's workspace owns the connection (the state may have come from another one). */
async function isTheirs(deps: DashboardDeps, principal: SessionPrincipal, connectionId: string): Promise<boolean> {
  try {
    await deps.services.connections.get(principal, principal.workspaceId, connectionId);
    return true;
  } catch (err) {
    if (err instanceof ServiceError) return false;
    throw err;
  }
}
