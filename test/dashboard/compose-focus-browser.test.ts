import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../src/core/principal.js';
import { chromiumPresent, openWatchedPage, signIn } from '../support/browser.js';
import { testDatabaseKinds } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Compose in Debian's Chromium: after Preview, or a submit the server refuses, the page comes back drawn again;
 * focus must land on the preview or on the error summary, where a keyboard or screen-reader user continues,
 * rather than on the page's body.
 */
describe.runIf(chromiumPresent())('compose moves focus to the preview or the error summary; the suggested time follows the brand', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let problems: string[] = [];

  beforeAll(async () => {
    server = await startTestServer(testDatabaseKinds()[0]!, {}, { workers: false });
    const ws = await server.workspace('Focus workspace');
    const principal: Principal = { kind: 'api_key', workspaceId: ws.workspace_id, keyId: ws.key_id, role: 'admin', brandIds: null };
    const { services } = server.container;
    const brand = await services.brands.create(principal, ws.workspace_id, { name: 'Acme' });
    await services.connections.createSandbox(principal, ws.workspace_id, brand.id, { platform_slug: 'threads', mode: 'sandbox', name: 'Acme threads' });
    ({ browser, page, problems } = await openWatchedPage({ width: 1280, height: 900 }));
    await signIn(page, server.service.baseUrl, ws.api_key);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  // A string, run in the page: the test's own typings know no DOM.
  const focused = () =>
    page.evaluate<{ id: string; className: string; tag: string }>(
      `({ id: document.activeElement?.id ?? '', className: document.activeElement?.className ?? '', tag: document.activeElement?.tagName ?? '' })`,
    );

  it('Preview focuses the preview; a refused Publish focuses the error banner', async () => {
    await page.goto(`${server.service.baseUrl}/dashboard/compose`);
    await page.getByRole('checkbox', { name: 'Threads', exact: true }).check();
    await page.getByLabel('Text', { exact: true }).fill('Hello from the preview');
    await Promise.all([page.waitForURL(/\/dashboard\/compose$/), page.getByRole('button', { name: 'Preview' }).click()]);
    await expect.poll(focused).toMatchObject({ id: 'preview', tag: 'SECTION' });

    // No network: the server refuses the form and draws it again with its error summary.
    await page.getByRole('checkbox', { name: 'Threads', exact: true }).uncheck();
    await Promise.all([page.waitForURL(/\/dashboard\/compose$/), page.getByRole('button', { name: 'Publish', exact: true }).click()]);
    await expect.poll(focused).toMatchObject({ className: 'error-banner', tag: 'DIV' });
    expect(await page.locator('.error-banner').textContent()).toContain('Nothing was published');
    expect(problems).toEqual([]);
  });

  it('the suggested date and time follow the Brand select until the person changes them', async () => {
    const ws = await server.workspace('Two brands');
    const principal: Principal = { kind: 'api_key', workspaceId: ws.workspace_id, keyId: ws.key_id, role: 'admin', brandIds: null };
    const { services } = server.container;
    const acme = await services.brands.create(principal, ws.workspace_id, { name: 'Acme' });
    const other = await services.brands.create(principal, ws.workspace_id, { name: 'Other' });
    await services.queue.setQueue(principal, ws.workspace_id, acme.id, { time_zone: 'Asia/Tokyo', slots: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], time: '07:15' }] });
    const suggested = await services.queue.suggestedTimes(principal, ws.workspace_id, [acme.id, other.id]);
    expect(suggested[other.id]!.time).toBe('09:00');
    await page.context().clearCookies();
    await signIn(page, server.service.baseUrl, ws.api_key);
    await page.goto(`${server.service.baseUrl}/dashboard/compose`);
    const shown = async () => ({ date: await page.locator('#publish-date').inputValue(), time: await page.locator('#publish-time').inputValue() });
    const brand = page.getByLabel('Brand', { exact: true });

    await brand.selectOption(other.id);
    expect(await shown()).toEqual({ date: suggested[other.id]!.date, time: '09:00' });
    await brand.selectOption(acme.id);
    expect(await shown()).toEqual({ date: suggested[acme.id]!.date, time: '07:15' });
    // Once the person has typed a time of their own, another brand leaves it alone.
    await page.getByLabel('Schedule', { exact: true }).check();
    await page.locator('#publish-time').fill('18:45');
    await brand.selectOption(other.id);
    expect(await shown()).toEqual({ date: suggested[acme.id]!.date, time: '18:45' });
    expect(problems).toEqual([]);
  });
});
