import type { Server } from 'node:http';
import express, { Router } from 'express';
import { createPageRouter, type DashboardDeps } from '../../../src/dashboard/page-router.js';
import { connectedAppPages } from '../../../src/dashboard/pages/connected-apps.js';
import { dashboardRouter } from '../../../src/dashboard/router.js';
import { requestContext } from '../../../src/web/request-context.js';
import type { TestServer } from '../../support/server.js';

/**
 * The dashboard of a running test server served again on a port of its own, with the Connected apps pages added
 * in front: used while the service's own dashboard does not list that page yet (its registration is one line in
 * src/dashboard/router.ts), so the page is exercised over real HTTP either way. Same container, database,
 * sessions and keys: a sign-in here is a sign-in there.
 */
export async function sideDashboard(server: TestServer): Promise<{ url: string; close(): Promise<void> }> {
  const { container } = server;
  const deps: DashboardDeps = {
    services: container.services,
    clock: container.clock,
    secretKey: container.secretKey,
    limiter: container.limiter,
    webhookTimeoutMs: container.config.dispatcher.timeoutMs,
    secure: false,
    baseUrl: server.service.baseUrl,
    formTargets: [],
    liveAvailable: () => false,
    sandboxCheckout: null,
  };
  const app = express();
  app.use(requestContext(container.logger));
  const extra = Router();
  connectedAppPages(createPageRouter(extra, deps));
  app.use(extra);
  app.use(dashboardRouter(deps));
  const http: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    url: `http://127.0.0.1:${(http.address() as { port: number }).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
