import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/core/principal.js';
import { textLengthOn } from '../../src/vocabulary/platforms.js';
import { chromiumPresent, openWatchedPage, signIn } from '../support/browser.js';
import { testDatabaseKinds } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The compose page's live counters in Debian's Chromium: each network is counted as it counts (the rules the
 * server checks, served to the page as a module), so the counter never shows as fitting a text X or Bluesky
 * will refuse.
 */
describe.runIf(chromiumPresent())('live character counters count as each network does', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let problems: string[] = [];

  beforeAll(async () => {
    server = await startTestServer(testDatabaseKinds()[0]!, {}, { workers: false });
    const ws = await server.workspace('Counter workspace');
    const principal: Principal = { kind: 'api_key', workspaceId: ws.workspace_id, keyId: ws.key_id, role: 'admin', brandIds: null };
    const { services } = server.container;
    const brand = await services.brands.create(principal, ws.workspace_id, { name: 'Acme' });
    for (const platform_slug of ['x', 'bluesky', 'threads'] as const) {
      await services.connections.createSandbox(principal, ws.workspace_id, brand.id, { platform_slug, mode: 'sandbox', name: `Acme ${platform_slug}` });
    }
    ({ browser, page, problems } = await openWatchedPage({ width: 1280, height: 900 }));
    await signIn(page, server.service.baseUrl, ws.api_key);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const counter = () => page.locator('output[data-counter-for="text"]').textContent();

  it('a link counts 23 on X, an emoji family one grapheme on Bluesky; text over X\'s weighted limit is marked too long for X only', async () => {
    await page.goto(`${server.service.baseUrl}/dashboard/compose`);
    for (const name of ['X', 'Bluesky', 'Threads']) await page.getByRole('checkbox', { name, exact: true }).check();
    await page.getByLabel('Content type').selectOption('text');

    const linked = `Read this: https://example.com/${'a'.repeat(80)} 👨‍👩‍👧`;
    await page.getByLabel('Text', { exact: true }).fill(linked);
    const chars = Array.from(linked).length;
    // What the server counts, for each network: the page must say the same.
    const x = textLengthOn('x', linked);
    const bluesky = textLengthOn('bluesky', linked);
    expect([chars, x, bluesky]).toEqual([117, 37, 113]);
    await expect.poll(counter).toBe(`${chars} characters — Threads 500, X counts ${x} of 280, Bluesky counts ${bluesky} of 300`);

    await page.getByLabel('Text', { exact: true }).fill('漢'.repeat(200));
    await expect.poll(counter).toBe('200 characters — Threads 500, X counts 400 of 280: too long, Bluesky 300');
    expect(await page.locator('output[data-counter-for="text"] .over').allTextContents()).toEqual(['X counts 400 of 280: too long']);

    // The per-network box counts as its own network does.
    await page.getByText('Different text per network').click();
    await page.getByRole('tab', { name: 'X' }).click();
    await page.getByLabel('Text on X').fill(`Hi https://example.com/${'b'.repeat(60)}`);
    await expect.poll(() => page.locator('output[data-counter-for="override-text-x"]').textContent()).toBe('26 characters — of 280');
    expect(problems).toEqual([]);
  });
});
