import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { chromiumPresent, openWatchedPage, signIn } from '../support/browser.js';
import { testDatabaseKinds } from '../support/databases.js';
import { brandWithConnections } from '../support/factories.js';
import { startTestServer, type TestServer } from '../support/server.js';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Every landmark of a page has a name of its own, so a screen reader's list of regions tells them apart (axe's
 * `landmark-unique`, a moderate finding the general audit lets pass). Brands repeats a card per brand and Wallet a
 * table per section: the pages with the most regions.
 */
describe.runIf(chromiumPresent())('dashboard landmarks have unique names', () => {
  const clock = new ManualClock(Date.UTC(2026, 10, 21, 9));
  let server: TestServer;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    server = await startTestServer(testDatabaseKinds()[0]!, {}, { clock, workers: false });
    ({ browser, page } = await openWatchedPage({ width: 1280, height: 900 }));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  async function duplicateLandmarks(): Promise<unknown[]> {
    await page.evaluate(AXE_SOURCE);
    return page.evaluate<unknown[]>(`axe.run(document, { runOnly: ['landmark-unique'], resultTypes: ['violations'] }).then((r) =>
      r.violations.flatMap((v) => v.nodes.map((n) => n.target)))`);
  }

  it('on Brands with three brands (two of one name) and their connections, and on Wallet with credits', async () => {
    const { ws } = await brandWithConnections(server, ['threads', 'facebook']);
    // A second brand of the same name: nothing forbids it, and its card must still be told apart.
    await brandWithConnections(server, ['threads'], ws);
    await server.request('POST', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key, body: { name: 'Bakery' } });
    await server.container.services.wallet.grant({ workspaceId: ws.workspace_id, amount: 250, source: 'grant', expiresAt: clock.now() + 30 * 86_400_000 });
    await signIn(page, server.service.baseUrl, ws.api_key);
    for (const path of ['/dashboard/brands', '/dashboard/wallet']) {
      await page.goto(`${server.service.baseUrl}${path}`);
      expect(await duplicateLandmarks(), path).toEqual([]);
    }
  });
});
