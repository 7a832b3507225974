import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { Principal } from '../../src/core/principal.js';
import { chromiumPresent, launchChromium, signIn, artifactsDir } from '../support/browser.js';
import { testDatabaseKinds } from '../support/databases.js';
import { brandWithConnections } from '../support/factories.js';
import { startTestServer, type TestServer } from '../support/server.js';

const ARTIFACTS = artifactsDir('dashboard-phone');
const WIDTH = 390;

/**
 * Every dashboard page at 390 px in Debian's Chromium, filled with the data that used to
 * push pages sideways: long unbroken words and addresses, many rows, failed jobs. No page is wider than the
 * screen, the navigation starts closed, and each table's row action is on screen without scrolling sideways.
 */
describe.runIf(chromiumPresent())('dashboard at phone width', () => {
  const clock = new ManualClock(Date.UTC(2026, 10, 23, 12));
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let ws: { workspace_id: string; key_id: string; api_key: string };
  let brandId: string;
  let contentId: string;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    server = await startTestServer(testDatabaseKinds()[0]!, {}, { clock, workers: false });
    ws = await server.workspace('A workspace with a rather long name for a phone header');
    const made = await brandWithConnections(server, ['threads', 'linkedin', 'facebook'], ws);
    brandId = made.brandId;
    const principal: Principal = { kind: 'api_key', workspaceId: ws.workspace_id, keyId: ws.key_id, role: 'admin', brandIds: null };
    const { services } = server.container;
    await services.queue.setQueue(principal, ws.workspace_id, brandId, { time_zone: 'America/New_York', slots: [{ days: ['mon', 'fri'], time: '09:00' }] });
    const long = `Supercalifragilisticexpialidocious${'x'.repeat(120)} https://example.com/${'path/'.repeat(30)}`;
    const failed = await server.request<{ content_id: string }>('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
      key: ws.api_key,
      body: { brand_id: brandId, target_platforms: ['threads', 'linkedin'], content_type: 'text', text: long.slice(0, 480), sandbox_outcomes: { linkedin: 'upstream_unknown' } },
    });
    contentId = failed.body.content_id;
    await server.request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
      key: ws.api_key,
      body: { brand_id: brandId, target_platforms: ['facebook'], content_type: 'text', text: long, publish_at: '2026-11-24T09:00' },
    });
    await server.request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, { key: ws.api_key, body: { brand_id: brandId, target_platforms: ['facebook'], content_type: 'text', text: long, draft: true } });
    await services.apiKeys.create(principal, ws.workspace_id, { name: `key-${'n'.repeat(80)}` });
    await server.settle();
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: WIDTH, height: 844 } });
    await signIn(page, server.service.baseUrl, ws.api_key);
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const pages = () => [
    ['overview', '/dashboard'],
    ['compose', '/dashboard/compose'],
    ['calendar-week', '/dashboard/calendar'],
    ['calendar-month', '/dashboard/calendar?view=month'],
    ['drafts', '/dashboard/drafts'],
    ['contents', '/dashboard/contents'],
    ['content', `/dashboard/contents/${contentId}`],
    ['brands', '/dashboard/brands'],
    ['queue', `/dashboard/brands/${brandId}/queue`],
    ['webhooks', '/dashboard/webhooks'],
    ['api-keys', '/dashboard/api-keys'],
    ['oauth-clients', '/dashboard/oauth-clients'],
    ['wallet', '/dashboard/wallet'],
    ['audit-log', '/dashboard/audit-log'],
    ['media', '/dashboard/media'],
    ['not-found', '/dashboard/no-such-page'],
  ];

  it('no page is wider than the screen, and the navigation starts as a closed menu', async () => {
    const wide: string[] = [];
    for (const [name, path] of pages()) {
      await page.goto(`${server.service.baseUrl}${path!}`);
      const scrollWidth = await page.evaluate<number>('document.documentElement.scrollWidth');
      if (scrollWidth > WIDTH) wide.push(`${name}: ${scrollWidth}px`);
      if (await page.locator('[data-menu]').count()) {
        expect(await page.locator('[data-menu]').getAttribute('open'), name).toBeNull();
        expect(await page.locator('.menu > summary').isVisible(), name).toBe(true);
      }
      await page.screenshot({ path: join(ARTIFACTS, `${name!}.png`), fullPage: true });
    }
    expect(wide).toEqual([]);
  });

  it('table rows are cards whose action is on screen: Revoke, Deactivate, Publish now', async () => {
    const onScreen = async (path: string, button: RegExp) => {
      await page.goto(`${server.service.baseUrl}${path}`);
      const box = await page.getByRole('button', { name: button }).first().boundingBox();
      expect(box, path).not.toBeNull();
      expect(box!.x + box!.width, path).toBeLessThanOrEqual(WIDTH);
      expect(box!.x, path).toBeGreaterThanOrEqual(0);
    };
    await onScreen('/dashboard/api-keys', /^Revoke/);
    await onScreen('/dashboard/brands', /^Deactivate/);
    await onScreen('/dashboard/drafts', /^Publish now/);
    // Each cell says which column it is.
    await page.goto(`${server.service.baseUrl}/dashboard/contents/${contentId}`);
    expect(await page.locator('#jobs td[data-label="Status"]').count()).toBe(2);
    expect(await page.locator('#jobs').textContent()).toMatch(/Job id to report: job_/);
  });
}, 120_000);
