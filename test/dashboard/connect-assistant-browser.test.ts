import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditPage, chromiumPresent, openWatchedPage, signIn, artifactsDir } from '../support/browser.js';
import { testDatabaseKinds } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/server.js';

const ARTIFACTS = artifactsDir('dashboard');

/** "Connect an assistant" in Chromium: reached from the navigation, accessible, and its Copy buttons copy. */
describe.runIf(chromiumPresent())('dashboard in a real browser: connect an assistant', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let problems: string[] = [];
  let apiKey = '';

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    server = await startTestServer(testDatabaseKinds()[0]!, {}, { workers: false });
    apiKey = (await server.workspace('Assistant workspace')).api_key;
    ({ browser, page, problems } = await openWatchedPage({ width: 390, height: 844 }));
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.service.baseUrl });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('opens from the phone menu, passes axe, and copies the address and a snippet', async () => {
    await signIn(page, server.service.baseUrl, apiKey);
    await page.getByText('Menu', { exact: true }).click();
    await page.getByRole('link', { name: 'Connect an assistant' }).click();
    await page.waitForURL(/\/dashboard\/connect-assistant$/);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Connect an assistant');
    await auditPage(page, problems, 'connect-assistant', ARTIFACTS);

    const mcpUrl = `${server.service.baseUrl}/mcp`;
    await page.getByRole('button', { name: 'Copy The assistant address' }).click();
    await expect.poll(() => page.evaluate<string>('navigator.clipboard.readText()')).toBe(mcpUrl);
    await page.getByRole('button', { name: 'Copy VS Code, signing in with the approval page' }).click();
    await expect.poll(() => page.evaluate<string>('navigator.clipboard.readText()')).toContain(`"url": "${mcpUrl}"`);
    expect(await page.locator('#vscode-config-copy').textContent()).toBe('Copied');

    await page.setViewportSize({ width: 1280, height: 900 });
    await auditPage(page, problems, 'connect-assistant-wide', ARTIFACTS);
  }, 60_000);
});
