import { createHmac } from 'node:crypto';
import express, { type NextFunction, type Request, type Response, Router } from 'express';
import type Provider from 'oidc-provider';
import type { ApiKeysService } from '../src/core/api-keys/api-keys.service.js';
import { ServiceError } from '../src/core/errors.js';
import { constantTimeEqual } from '../src/core/ids.js';
import { accountIdFor, MCP_SCOPE } from '../src/core/oauth-clients/oauth-clients.service.js';
import { renderConsentPage } from './consent-page.js';
import { authorizationServerMetadata, protectedResourceMetadata } from './metadata.js';
import { issuerOf, mcpResourceOf, OAUTH_MOUNT } from './provider.js';

function cors(req: Request, res: Response, next: NextFunction): void {
  // Browser clients (e.g. MCP Inspector) read metadata, register and exchange codes cross-origin.
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Allow-Methods', 'GET, POST, OPTIONS');
  res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, MCP-Protocol-Version');
  res.setHeader('Access-Control-Max-Age', '600');
  if (req.method === 'OPTIONS') {
    res.status(204).end();
    return;
  }
  next();
}

function oauthError(res: Response, status: number, error: string, description: string): void {
  res.status(status).json({ error, error_description: description });
}

const isLoopbackOrCustom = (uri: string): boolean => {
  try {
    const url = new URL(uri);
    return (url.protocol !== 'https:' && url.protocol !== 'http:') || ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
  } catch {
    return false;
  }
};

/** https anywhere; http only on loopback (RFC 8252 7.3); private-use schemes for native apps (RFC 8252 7.1). */
function redirectAcceptable(uri: string): boolean {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return false;
  }
  if (url.protocol === 'https:') return true;
  if (url.protocol === 'http:') return ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
  return !['javascript:', 'data:', 'file:', 'vbscript:', 'ftp:', 'ws:', 'wss:'].includes(url.protocol);
}

/**
 * RFC 7591 registration is for public clients only (spec 4.2). Real clients send all sorts of bodies; they are
 * normalised before the provider sees them, because it decides whether to mint a secret from the raw body.
 */
function normaliseRegistration(req: Request, res: Response, next: NextFunction): void {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const redirects = Array.isArray(body.redirect_uris) ? (body.redirect_uris as unknown[]).filter((u): u is string => typeof u === 'string') : [];
  const refused = redirects.find((uri) => !redirectAcceptable(uri));
  if (refused !== undefined) {
    oauthError(res, 400, 'invalid_redirect_uri', 'redirect_uris must be https, http on a loopback address, or a private-use scheme of a native app');
    return;
  }
  req.body = {
    ...body,
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code'],
    response_types: ['code'],
    application_type: redirects.length > 0 && redirects.every(isLoopbackOrCustom) ? 'native' : 'web',
    scope: MCP_SCOPE,
  };
  delete (req.body as Record<string, unknown>).client_secret;
  delete (req.body as Record<string, unknown>).jwks;
  delete (req.body as Record<string, unknown>).jwks_uri;
  next();
}

/** Spec 4.2: only `authorization_code`; anything else is `unsupported_grant_type` before the provider runs. */
function onlyAuthorizationCode(req: Request, res: Response, next: NextFunction): void {
  const grant = (req.body as Record<string, unknown> | undefined)?.grant_type;
  if (grant !== 'authorization_code') {
    oauthError(res, 400, grant === undefined ? 'invalid_request' : 'unsupported_grant_type', grant === undefined ? 'grant_type is required' : 'only authorization_code is supported');
    return;
  }
  next();
}

/** ChatGPT connectors omit `scope` on reconnect; without it the provider would grant nothing. */
function defaultScope(req: Request, _res: Response, next: NextFunction): void {
  if (req.method === 'GET') {
    const url = new URL(req.originalUrl, 'http://local');
    if (!url.searchParams.get('scope')) {
      url.searchParams.set('scope', MCP_SCOPE);
      req.url = `${req.url.split('?')[0]}?${url.searchParams.toString()}`;
    }
  } else if (req.body && typeof req.body === 'object' && !(req.body as Record<string, unknown>).scope) {
    (req.body as Record<string, unknown>).scope = MCP_SCOPE;
  }
  next();
}

export interface OAuthRouterDeps {
  provider: Provider;
  apiKeys: ApiKeysService;
  baseUrl: string;
  secretKey: Buffer;
}

/** Everything under /api/oauth/mcp and the well-known documents, in front of and around oidc-provider. */
export function oauthRouter(deps: OAuthRouterDeps): Router {
  const { provider, baseUrl } = deps;
  const router = Router();
  const csrfKey = createHmac('sha256', deps.secretKey).update('oauth-consent-csrf').digest();
  const csrfFor = (uid: string) => createHmac('sha256', csrfKey).update(uid).digest('base64url');

  const asMetadata = authorizationServerMetadata(issuerOf(baseUrl));
  const prMetadata = protectedResourceMetadata(mcpResourceOf(baseUrl), issuerOf(baseUrl));
  for (const path of ['/.well-known/oauth-authorization-server/api/oauth/mcp', '/.well-known/oauth-authorization-server', `${OAUTH_MOUNT}/.well-known/oauth-authorization-server`]) {
    router.all(path, cors, (_req, res) => void res.json(asMetadata));
  }
  for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
    router.all(path, cors, (_req, res) => void res.json(prMetadata));
  }

  router.options([`${OAUTH_MOUNT}/register`, `${OAUTH_MOUNT}/token`, `${OAUTH_MOUNT}/revoke`], cors);
  router.post(`${OAUTH_MOUNT}/register`, cors, express.json({ limit: '64kb' }), normaliseRegistration);
  router.post(`${OAUTH_MOUNT}/token`, cors, express.urlencoded({ extended: false, limit: '64kb' }), onlyAuthorizationCode);
  router.get(`${OAUTH_MOUNT}/authorize`, defaultScope);
  router.post(`${OAUTH_MOUNT}/authorize`, express.urlencoded({ extended: false, limit: '64kb' }), defaultScope);

  const noStore = (res: Response) => {
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('X-Frame-Options', 'DENY');
  };

  async function showConsent(req: Request, res: Response, error: string | null, status = 200): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    const clientId = String(details.params.client_id);
    const client = await provider.Client.find(clientId);
    const redirect = new URL(String(details.params.redirect_uri));
    const target = redirect.protocol === 'https:' || redirect.protocol === 'http:' ? redirect.origin : `${redirect.protocol}`;
    noStore(res);
    // form-action covers the redirects that follow the form post, up to the client's callback.
    res.setHeader('Content-Security-Policy', `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${target}; frame-ancestors 'none'; base-uri 'none'`);
    res.status(status).type('html').send(
      renderConsentPage({
        uid: details.uid,
        clientName: client?.clientName ?? clientId,
        redirectHost: redirect.host || redirect.protocol,
        scope: MCP_SCOPE,
        csrf: csrfFor(details.uid),
        error,
      }),
    );
  }

  router.get(`${OAUTH_MOUNT}/interaction/:uid`, async (req, res) => showConsent(req, res, null));

  const form = express.urlencoded({ extended: false, limit: '8kb' });
  router.post(`${OAUTH_MOUNT}/interaction/:uid/confirm`, form, async (req, res) => {
    const details = await provider.interactionDetails(req, res);
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (typeof body.csrf !== 'string' || !constantTimeEqual(body.csrf, csrfFor(details.uid))) {
      oauthError(res, 403, 'access_denied', 'The form expired or did not come from this page. Start the authorization again.');
      return;
    }
    let principal;
    try {
      principal = await deps.apiKeys.authenticate(String(body.api_key ?? '').trim());
    } catch (err) {
      if (!(err instanceof ServiceError)) throw err;
      await showConsent(req, res, 'That API key is not valid. Paste an active key of the workspace to connect (svc_live_…).', 401);
      return;
    }
    const accountId = accountIdFor(principal.workspaceId, principal.keyId);
    const clientId = String(details.params.client_id);
    const existing = details.grantId ? await provider.Grant.find(details.grantId) : undefined;
    const grant = existing && existing.accountId === accountId ? existing : new provider.Grant({ accountId, clientId });
    const missing = details.prompt.details as { missingOIDCScope?: string[]; missingResourceScopes?: Record<string, string[]> };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(' '));
    // One page does login and consent at once: grant the only scope there is, as the provider's own scope and
    // as the MCP resource's, whatever prompt brought the user here.
    grant.addOIDCScope(MCP_SCOPE);
    grant.addResourceScope(mcpResourceOf(baseUrl), MCP_SCOPE);
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
  });

  router.post(`${OAUTH_MOUNT}/interaction/:uid/abort`, form, async (req, res) => {
    const details = await provider.interactionDetails(req, res);
    const body = (req.body ?? {}) as Record<string, unknown>;
    if (typeof body.csrf !== 'string' || !constantTimeEqual(body.csrf, csrfFor(details.uid))) {
      oauthError(res, 403, 'access_denied', 'The form expired or did not come from this page.');
      return;
    }
    await provider.interactionFinished(req, res, { error: 'access_denied', error_description: 'The user denied the request.' }, { mergeWithLastSubmission: false });
  });

  router.use(OAUTH_MOUNT, provider.callback());

  // Failures of our own OAuth routes (an expired interaction, a missing cookie) answer in RFC 6749 form too.
  router.use(OAUTH_MOUNT, (err: unknown, _req: Request, res: Response, next: NextFunction) => {
    const e = err as { error?: unknown; error_description?: unknown; statusCode?: unknown };
    if (typeof e.error !== 'string') {
      next(err);
      return;
    }
    oauthError(res, typeof e.statusCode === 'number' ? e.statusCode : 400, e.error, typeof e.error_description === 'string' ? e.error_description : 'The request could not be completed.');
  });
  return router;
}
