import { randomBytes } from 'node:crypto';
import express, { type ErrorRequestHandler, type NextFunction, type Request, type Response, Router } from 'express';
import type Provider from 'oidc-provider';
import type { ApiKeysService } from '../src/core/api-keys/api-keys.service.js';
import { ServiceError } from '../src/core/errors.js';
import { constantTimeEqual } from '../src/core/ids.js';
import { deriveKey, sign } from '../src/core/secret-box.js';
import { accountIdFor, MCP_SCOPE } from '../src/core/oauth-clients/oauth-clients.service.js';
import { GRANT_ROLE_LABELS, type GrantAccessService } from '../src/core/connected-apps/grant-access.js';
import type { SessionsService } from '../src/core/sessions/sessions.service.js';
import { ROLES } from '../src/core/permissions/roles.js';
import type { Principal } from '../src/core/principal.js';
import { setPageHeaders } from '../src/web/page-policy.js';
import { isMetadataDocumentClientId } from '../src/core/connected-apps/connected-apps.service.js';
import { CONSENT_STYLESHEET, CONSENT_STYLESHEET_PATH, renderConsentPage } from './consent-page.js';
import { originOf, personOf, type PersonPrincipal, personViewOf, type PostedChoice, postedList, postedRole } from './consent-person.js';
import { oauthError, oauthErrorHandler } from './errors.js';
import { authorizationServerMetadata, authorizationServerMetadataPaths, protectedResourceMetadata } from './metadata.js';
import { canonicalResource, issuerOf, mcpResourceOf, OAUTH_MOUNT } from './provider.js';

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

const LOOPBACK_HOSTS = ['127.0.0.1', '[::1]', 'localhost'];

const isLoopbackOrCustom = (uri: string): boolean => {
  try {
    const url = new URL(uri);
    return (url.protocol !== 'https:' && url.protocol !== 'http:') || LOOPBACK_HOSTS.includes(url.hostname);
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
 * The registration fields kept from a client's body; everything else is dropped. An allow-list, not a deny-list:
 * the provider fetches some URIs a body may carry (`jwks_uri`, `sector_identifier_uri`, `request_uris`, logo and
 * metadata documents) and redirects to others (`post_logout_redirect_uris`), so a field nobody listed here can
 * never make the server connect somewhere (SSRF) or send a browser somewhere (an open redirect).
 */
const KEPT_REGISTRATION_FIELDS = ['client_name', 'redirect_uris', 'software_id', 'software_version'] as const;

/**
 * RFC 7591 registration is for public clients only (spec 4.2). Real clients send all sorts of bodies; they are
 * normalised before the provider sees them, because it decides whether to mint a secret from the raw body.
 */
function normaliseRegistration(req: Request, res: Response, next: NextFunction): void {
  const body = (req.body !== null && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>;
  const redirects = Array.isArray(body.redirect_uris) ? (body.redirect_uris as unknown[]).filter((u): u is string => typeof u === 'string') : [];
  const refused = redirects.find((uri) => !redirectAcceptable(uri));
  if (refused !== undefined) {
    oauthError(res, 400, 'invalid_redirect_uri', 'redirect_uris must be https, http on a loopback address, or a private-use scheme of a native app');
    return;
  }
  const kept = Object.fromEntries(KEPT_REGISTRATION_FIELDS.filter((f) => body[f] !== undefined).map((f) => [f, body[f]]));
  req.body = {
    ...kept,
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code'],
    response_types: ['code'],
    application_type: redirects.length > 0 && redirects.every(isLoopbackOrCustom) ? 'native' : 'web',
    subject_type: 'public',
    scope: MCP_SCOPE,
  };
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

/** The parameters of an authorization request, wherever they came (query or form body). */
function requestParams(req: Request): URLSearchParams | Record<string, unknown> {
  return req.method === 'GET' ? new URL(req.originalUrl, 'http://local').searchParams : ((req.body ?? {}) as Record<string, unknown>);
}

function setParam(req: Request, params: URLSearchParams | Record<string, unknown>, name: string, values: string[]): void {
  if (params instanceof URLSearchParams) {
    params.delete(name);
    for (const v of values) params.append(name, v);
    req.url = `${req.url.split('?')[0]}?${params.toString()}`;
  } else {
    params[name] = values.length === 1 ? values[0] : values;
  }
}

function getParams(params: URLSearchParams | Record<string, unknown>, name: string): string[] {
  if (params instanceof URLSearchParams) return params.getAll(name);
  const v = params[name];
  return Array.isArray(v) ? v.map(String) : v === undefined ? [] : [String(v)];
}

/**
 * What the authorization and token endpoints see is rewritten to the forms the provider and the grant agree on:
 * - ChatGPT connectors omit `scope` on reconnect; without it the provider would grant nothing, so it is `mcp`;
 * - a `resource` spelled differently for the same resource (`/mcp/`) becomes the canonical one (RFC 8707 §2),
 *   so the grant the user approves is the one the next request asks for: one consent per authorization.
 */
function canonicalParams(resource: string, withScope: boolean) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    const params = requestParams(req);
    if (withScope && getParams(params, 'scope').every((s) => s === '')) setParam(req, params, 'scope', [MCP_SCOPE]);
    const resources = getParams(params, 'resource');
    const canonical = resources.map((r) => canonicalResource(r, resource));
    if (canonical.some((r, i) => r !== resources[i])) setParam(req, params, 'resource', [...new Set(canonical)]);
    next();
  };
}

/**
 * Authorization responses go in the query only (the metadata says so). Another `response_mode` is refused here,
 * without a redirect, rather than answered in a fragment or a self-submitting form the provider also knows.
 */
function onlyQueryResponseMode(req: Request, res: Response, next: NextFunction): void {
  const modes = getParams(requestParams(req), 'response_mode');
  if (modes.some((m) => m !== 'query')) {
    oauthError(res, 400, 'invalid_request', 'response_mode must be query (or omitted)');
    return;
  }
  next();
}

export interface OAuthRouterDeps {
  provider: Provider;
  apiKeys: ApiKeysService;
  baseUrl: string;
  secretKey: Buffer;
  /** Whether Client ID Metadata Documents are accepted (the metadata says so, the consent page shows their host). */
  clientMetadataDocuments: boolean;
  /** Resolves the person's session the consent page was handed (CONSENT_SESSION_COOKIE). */
  sessions: Pick<SessionsService, 'resolve'>;
  /** Records and reads what a grant carries (role, brands, approver). */
  grantAccess: Pick<GrantAccessService, 'personChoices' | 'approve'>;
}

/** Everything under /api/oauth/mcp and the well-known documents, in front of and around oidc-provider. */
export function oauthRouter(deps: OAuthRouterDeps): Router {
  const { provider, baseUrl } = deps;
  const router = Router();
  const csrfKey = deriveKey(deps.secretKey, 'oauth-consent-csrf');
  const csrfFor = (uid: string) => sign(csrfKey, uid);

  const asMetadata = authorizationServerMetadata(issuerOf(baseUrl), { clientMetadataDocuments: deps.clientMetadataDocuments });
  const prMetadata = protectedResourceMetadata(mcpResourceOf(baseUrl), issuerOf(baseUrl));
  // One document at every address (RFC 8414 and OIDC Discovery), answered before the provider's own discovery.
  for (const path of authorizationServerMetadataPaths(OAUTH_MOUNT)) {
    router.all(path, cors, (_req, res) => void res.json(asMetadata));
  }
  for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
    router.all(path, cors, (_req, res) => void res.json(prMetadata));
  }

  router.options([`${OAUTH_MOUNT}/register`, `${OAUTH_MOUNT}/token`, `${OAUTH_MOUNT}/revoke`], cors);
  router.post(`${OAUTH_MOUNT}/register`, cors, express.json({ limit: '64kb' }), normaliseRegistration);
  const resource = mcpResourceOf(baseUrl);
  router.post(`${OAUTH_MOUNT}/token`, cors, express.urlencoded({ extended: false, limit: '64kb' }), onlyAuthorizationCode, canonicalParams(resource, false));
  router.get(`${OAUTH_MOUNT}/authorize`, onlyQueryResponseMode, canonicalParams(resource, true));
  router.post(`${OAUTH_MOUNT}/authorize`, express.urlencoded({ extended: false, limit: '64kb' }), onlyQueryResponseMode, canonicalParams(resource, true));
  // RP-initiated logout is not offered (nothing advertises it): only the provider's own confirm step, which ends
  // the old login when a second workspace signs in in the same browser, stays reachable.
  router.all(`${OAUTH_MOUNT}/session/end`, (req, res) => oauthError(res, 404, 'invalid_request', `unrecognized route or not allowed method (${req.method} on ${OAUTH_MOUNT}/session/end)`));

  // The consent page's stylesheet: a file of ours, so the page's policy allows `style-src 'self'` and no inline
  // style. Express answers it with an ETag and 304 when unchanged; `no-cache` makes browsers ask each time.
  router.get(CONSENT_STYLESHEET_PATH, (_req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.type('css').send(CONSENT_STYLESHEET);
  });

  const signedInPerson = (req: Request) => personOf(req, deps.sessions);
  const personView = (person: PersonPrincipal, wanted: unknown, posted?: PostedChoice) => personViewOf(deps.grantAccess, person, wanted, posted);

  async function clientNameOf(clientId: string): Promise<string> {
    const client = await provider.Client.find(clientId);
    const host = deps.clientMetadataDocuments && isMetadataDocumentClientId(clientId) ? new URL(clientId).host : undefined;
    return client?.clientName ?? host ?? clientId;
  }

  async function showConsent(req: Request, res: Response, error: string | null, status = 200, posted?: PostedChoice): Promise<void> {
    const details = await provider.interactionDetails(req, res);
    const clientId = String(details.params.client_id);
    const client = await provider.Client.find(clientId);
    const redirect = new URL(String(details.params.redirect_uri));
    const target = redirect.protocol === 'https:' || redirect.protocol === 'http:' ? redirect.origin : `${redirect.protocol}`;
    const document = deps.clientMetadataDocuments && isMetadataDocumentClientId(clientId)
      ? { clientHost: new URL(clientId).host, loopbackRedirect: redirect.protocol === 'http:' && LOOPBACK_HOSTS.includes(redirect.hostname) }
      : undefined;
    const person = await signedInPerson(req);
    const wanted = posted?.workspace ?? (typeof req.query.workspace === 'string' ? req.query.workspace : undefined);
    // form-action covers the redirects that follow the form post, up to the client's callback.
    setPageHeaders(res, { style: ["'self'"], formTargets: [target] });
    res.status(status).type('html').send(
      renderConsentPage({
        uid: details.uid,
        clientName: client?.clientName ?? document?.clientHost ?? clientId,
        redirectHost: redirect.host || redirect.protocol,
        scope: MCP_SCOPE,
        csrf: csrfFor(details.uid),
        error,
        document,
        person: person && (await personView(person, wanted, posted)),
        signInHref: `/dashboard/sign-in?next=${encodeURIComponent(`/dashboard/authorize/${encodeURIComponent(details.uid)}`)}`,
        keyRoles: ROLES.map((r) => ({ value: r, label: `${GRANT_ROLE_LABELS[r]} (${r})`, selected: r === posted?.role })),
      }).text,
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
    const role = postedRole(body.role);
    const brandIds = postedList(body.brand_ids);
    const asPerson = body.as === 'person';
    const posted = { workspace: body.workspace, role: role ?? undefined, brandIds };
    if (role === null) {
      await showConsent(req, res, 'Choose what the app may do from the list.', 400, posted);
      return;
    }
    let approver: Extract<Principal, { kind: 'api_key' | 'user' }>;
    let workspaceId: string;
    if (asPerson) {
      const person = await signedInPerson(req);
      if (!person) {
        await showConsent(req, res, 'Your session ended. Sign in again, or approve with an API key.', 401, posted);
        return;
      }
      approver = { ...person, origin: originOf(req, res) };
      workspaceId = typeof body.workspace === 'string' ? body.workspace : '';
    } else {
      try {
        approver = { ...(await deps.apiKeys.authenticate(String(body.api_key ?? '').trim())), origin: originOf(req, res) };
      } catch (err) {
        if (!(err instanceof ServiceError)) throw err;
        await showConsent(req, res, 'That API key is not valid. Paste an active key of the workspace to connect (svc_live_…).', 401, posted);
        return;
      }
      workspaceId = approver.workspaceId;
    }
    const accountId = accountIdFor(workspaceId, approver.kind === 'user' ? { kind: 'user', userId: approver.userId } : { kind: 'api_key', keyId: approver.keyId });
    const clientId = String(details.params.client_id);
    const existing = details.grantId ? await provider.Grant.find(details.grantId) : undefined;
    const grant = existing && existing.accountId === accountId ? existing : new provider.Grant({ accountId, clientId });
    // The grant's id is chosen here rather than at save, so what it carries is stored before the grant exists:
    // there is never a grant a token could use without its role.
    grant.jti ||= randomBytes(32).toString('base64url');
    try {
      await deps.grantAccess.approve(approver, { workspaceId, clientId, clientName: await clientNameOf(clientId), grantId: grant.jti, role, brandIds: asPerson ? brandIds : null });
    } catch (err) {
      if (!(err instanceof ServiceError) || (err.code !== 'validation_failed' && err.code !== 'forbidden')) throw err;
      await showConsent(req, res, err.message, err.code === 'forbidden' ? 403 : 400, posted);
      return;
    }
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
  return router;
}

/**
 * The OAuth door as mounted: its routes, then its error renderer. The renderer sits beside the router rather than
 * inside it so that it also answers failures raised before the routes run under the mount (the per-address
 * limit's 429), which an error handler inside a router never sees.
 */
export function oauthHandlers(deps: OAuthRouterDeps): [Router, ErrorRequestHandler] {
  return [oauthRouter(deps), oauthErrorHandler(OAUTH_MOUNT)];
}
