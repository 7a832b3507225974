import { resolve } from 'node:path';
import express, { type Express } from 'express';
import { createOAuth } from '../oauth/index.js';
import type { Container } from './container.js';
import { ServiceError } from './core/errors.js';
import { errorHandler } from './http/errors.js';
import { bearerChallenge } from './web/bearer-challenge.js';
import type { Authenticators } from './web/bearer-auth.js';
import { ipRateLimit } from './web/rate-limit.js';
import { securityHeaders } from './web/security-headers.js';
import { locals, requestContext } from './web/request-context.js';
import { mountRoutes } from './http/mount.js';
import { docsRouter } from './http/docs.js';
import { buildOpenApiDocument, renderOpenApiYaml } from './http/openapi.js';
import type { AnyRoute } from './http/route.js';
import { apiKeyRoutes } from './http/routes/api-keys.routes.js';
import { approvalRoutes } from './http/routes/approvals.routes.js';
import { brandRoutes } from './http/routes/brands.routes.js';
import { connectionRoutes } from './http/routes/connections.routes.js';
import { contentRoutes } from './http/routes/contents.routes.js';
import { deliveryRoutes } from './http/routes/deliveries.routes.js';
import { mediaRoutes } from './http/routes/media.routes.js';
import { meRoutes } from './http/routes/me.routes.js';
import { memberRoutes } from './http/routes/members.routes.js';
import { oauthClientRoutes } from './http/routes/oauth-clients.routes.js';
import { platformRoutes } from './http/routes/platforms.routes.js';
import { queueRoutes } from './http/routes/queue.routes.js';
import { usageRoutes } from './http/routes/usage.routes.js';
import { walletRoutes } from './http/routes/wallet.routes.js';
import { webhookRoutes } from './http/routes/webhooks.routes.js';
import { hmacPaymentProvider } from './core/wallet/payment-provider.js';
import { createSandboxCheckout, sandboxPaymentSecret } from './core/wallet/sandbox-checkout.js';
import { systemRoutes } from './http/routes/system.routes.js';
import { auditRoutes } from './http/routes/audit.routes.js';
import { PLATFORM_SLUGS, type PlatformSlug } from './vocabulary/platforms.js';
import { createMcpHandler } from './mcp/handler.js';
import { dashboardRouter } from './dashboard/router.js';
import type { DashboardDeps } from './dashboard/page-router.js';
import { networkCallbackForBrowsers } from './dashboard/pages/network-callback.js';

/** Every REST operation the service offers; the OpenAPI document and the authorization tests enumerate it. */
export function restRoutes(container: Container): AnyRoute[] {
  const { services } = container;
  return [
    ...systemRoutes(services.health),
    ...meRoutes(services.workspaces),
    ...apiKeyRoutes(services.apiKeys),
    ...memberRoutes(services.members, services.invitations),
    ...brandRoutes(services.brands),
    ...queueRoutes(services.queue),
    ...connectionRoutes(services.connections, services.networkConnect),
    ...platformRoutes(() => services.networkConnect.platforms()),
    ...contentRoutes(services.contents),
    ...approvalRoutes(services.contents),
    ...usageRoutes(services.meters),
    ...mediaRoutes(services.media),
    ...webhookRoutes(services.webhooks),
    ...deliveryRoutes(services.webhooks),
    ...oauthClientRoutes(services.oauthClients),
    ...walletRoutes(services.wallet, paymentProvider(container)),
    ...auditRoutes(services.audit),
  ];
}

/**
 * The payment callback's verifier. With the sandbox checkout on and no PAYMENT_WEBHOOK_SECRET, it checks the key
 * derived for the sandbox, so the checkout's events take the very path a provider's do.
 */
function paymentProvider(container: Container) {
  const { config } = container;
  return hmacPaymentProvider(config.paymentWebhookSecret ?? (config.sandboxPayments ? sandboxPaymentSecret(container.secretKey) : undefined), container.clock);
}

/** API keys for every door. */
function apiKeyAuth(container: Container): Authenticators {
  const { apiKeys } = container.services;
  return { apiKey: (token) => apiKeys.authenticate(token) };
}

/** Builds the Express application: request context, the REST door, then the catch-all 404 and error mapping. */
export async function buildApp(container: Container, baseUrl: string): Promise<Express> {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', container.config.trustProxy);
  app.set('query parser', 'simple');

  app.use(requestContext(container.logger, container.metrics.observeRequest));
  // Security headers on every answer; HTML pages (the consent page) set their own stricter CSP.
  app.use(securityHeaders({ contentSecurityPolicy: { directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } }, crossOriginResourcePolicy: false }));
  const openLimit = ipRateLimit(container.ipLimiter, 'open');
  app.post(['/api/v1/webhooks/verify', '/api/oauth/mcp/register', '/api/oauth/mcp/token', '/api/oauth/mcp/interaction/:uid/confirm', '/dashboard/sign-in', '/dashboard/sign-in/code', '/dashboard/forgot-password', '/dashboard/reset-password/:token', '/dashboard/sign-in/passkey/options', '/dashboard/sign-in/passkey'], openLimit);
  app.get(['/dashboard/sso/start', '/dashboard/sso/callback'], openLimit);

  // Prometheus text; protected by METRICS_TOKEN when set (metrics reveal traffic, not data).
  app.get('/metrics', async (req, res) => {
    const token = container.config.metricsToken;
    if (token !== undefined && req.get('authorization') !== `Bearer ${token}`) {
      res.setHeader('WWW-Authenticate', bearerChallenge(req.get('authorization'), { realm: `${baseUrl}/metrics` }));
      res.status(401).json(new ServiceError('invalid_token', 'Send Authorization: Bearer <METRICS_TOKEN>.').toBody(locals(res).requestId));
      return;
    }
    res.type(container.metrics.registry.contentType).send(await container.metrics.registry.metrics());
  });

  // A worker process serves only health and metrics; the API runs in `api` and `all` processes.
  const worker = container.config.role === 'worker';
  const routes = worker ? systemRoutes(container.services.health) : restRoutes(container);
  let yaml: string | undefined;
  app.get('/openapi.yaml', (_req, res) => {
    // Rendered on first request, then kept: the routes do not change while the process runs.
    yaml ??= renderOpenApiYaml(buildOpenApiDocument(routes, { baseUrl, rateLimitPerMinute: container.config.rateLimitPerMinute }));
    res.type('application/yaml').send(yaml);
  });

  if (worker) {
    app.use(mountRoutes(routes, { auth: apiKeyAuth(container), limiter: container.limiter, bodyLimit: container.config.bodyLimit }));
    app.use((req, _res, next) => next(new ServiceError('not_found', `No route for ${req.method} ${req.path.slice(0, 200)} on a worker process.`)));
    app.use(errorHandler({ challenge: { realm: baseUrl } }));
    return app;
  }

  // Uploads through their signed, expiring addresses (Instagram and Threads download media themselves).
  app.get('/media/:mediaId', async (req, res, next) => {
    try {
      const q = (name: string) => (typeof req.query[name] === 'string' ? (req.query[name] as string) : '');
      const file = await container.services.media.openPublic(String(req.params.mediaId), q('exp'), q('sig'));
      res.sendFile(resolve(file.path), { headers: { 'Content-Type': file.contentType, 'Cache-Control': 'private, max-age=300' }, dotfiles: 'allow' }, (err) => {
        if (err && !res.headersSent) next(new ServiceError('not_found', 'This media address is unknown or has expired.'));
      });
    } catch (err) {
      next(err);
    }
  });

  const oauth = await createOAuth(container, baseUrl);
  // One Authenticators object for every door: API keys and OAuth access tokens, for REST and MCP alike.
  const auth: Authenticators = { ...apiKeyAuth(container), oauthToken: (token) => oauth.verifyToken(token) };

  // The MCP door comes before the other routers: a request to /mcp then walks none of their routes.
  app.use(
    createMcpHandler({
      auth,
      limiter: container.limiter,
      services: container.services,
      bodyLimit: container.config.bodyLimit,
      baseUrl,
      resourceMetadataUrl: oauth.resourceMetadataUrl,
    }),
  );

  // The web dashboard: pages for people, on the same services; sessions come from signing in with an API key.
  const dashboard: DashboardDeps = {
    services: container.services,
    clock: container.clock,
    secretKey: container.secretKey,
    limiter: container.limiter,
    webhookTimeoutMs: container.config.dispatcher.timeoutMs,
    secure: baseUrl.startsWith('https:'),
    baseUrl,
    formTargets: [...new Set(Object.values(container.config.networks).map((n) => new URL(n.authorizeUrl).origin))],
    liveAvailable: (platform) => (PLATFORM_SLUGS as readonly string[]).includes(platform) && container.networks.liveAvailable(platform as PlatformSlug),
    sandboxCheckout: container.config.sandboxPayments
      ? createSandboxCheckout({
          secret: container.config.paymentWebhookSecret ?? sandboxPaymentSecret(container.secretKey),
          clock: container.clock,
          provider: paymentProvider(container),
          wallet: container.services.wallet,
        })
      : null,
  };
  // A person's browser coming back from a network's consent screen gets a page, not the JSON of the REST answer.
  app.get('/api/v1/oauth/networks/:platform/callback', networkCallbackForBrowsers(dashboard));

  // The REST door right after MCP: an API call walks no other router first. Its paths (/api/v1, /v1, /healthz,
  // /readyz) are disjoint from the authorization server's (/api/oauth/mcp, /.well-known) and the docs' (/docs).
  app.use(
    mountRoutes(routes, {
      auth,
      limiter: container.limiter,
      bodyLimit: container.config.bodyLimit,
    }),
  );

  // The authorization server and its well-known documents; they parse their own bodies.
  app.use(oauth.router);

  // The API reference, rendered in the browser from /openapi.yaml.
  app.use(docsRouter());

  // The root has no content of its own: people arriving at the bare address want the dashboard.
  app.get('/', (_req, res) => res.redirect(302, '/dashboard'));
  app.use(dashboardRouter(dashboard));

  app.use((req, _res, next) => {
    next(new ServiceError('not_found', `No route for ${req.method} ${req.path.slice(0, 200)}.`));
  });
  app.use(errorHandler({ challenge: { realm: baseUrl, resourceMetadataUrl: oauth.resourceMetadataUrl } }));
  return app;
}
