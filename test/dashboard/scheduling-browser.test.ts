import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { Content } from '../../src/core/contents/contents.schema.js';
import type { Principal } from '../../src/core/principal.js';
import { auditPage, chromiumPresent, openWatchedPage, signIn, artifactsDir } from '../support/browser.js';
import { testDatabaseKinds } from '../support/databases.js';
import { brandWithConnections } from '../support/factories.js';
import { startTestServer, type TestServer } from '../support/server.js';

const ARTIFACTS = artifactsDir('dashboard-scheduling');

/**
 * Scheduling in Debian's Chromium, schedule → calendar → edit → cancel: a post
 * composed for a local time in the brand's zone, found on the calendar at that time, opened, rescheduled and
 * canceled, with axe-core on every page at phone width. The server runs in-process on a manual clock.
 */
describe.runIf(chromiumPresent())('dashboard scheduling in a real browser', () => {
  // Monday 23 November 2026, 12:00 UTC: 07:00 in New York, the brand's zone.
  const clock = new ManualClock(Date.UTC(2026, 10, 23, 12));
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let ws: { workspace_id: string; key_id: string; api_key: string };
  let brandId: string;
  let contentId: string;
  let pageProblems: string[] = [];

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    server = await startTestServer(testDatabaseKinds()[0]!, {}, { clock, workers: false });
    const made = await brandWithConnections(server, ['facebook', 'threads']);
    ws = made.ws;
    brandId = made.brandId;
    const principal: Principal = { kind: 'api_key', workspaceId: ws.workspace_id, keyId: ws.key_id, role: 'admin', brandIds: null };
    await server.container.services.queue.setQueue(principal, ws.workspace_id, brandId, { time_zone: 'America/New_York', slots: [{ days: ['fri'], time: '16:00' }] });
    ({ browser, page, problems: pageProblems } = await openWatchedPage({ width: 390, height: 844 }));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  /** axe-core in the page, no script error or CSP refusal, nothing wider than a phone, and a screenshot. */
  async function audit(name: string): Promise<void> {
    await auditPage(page, pageProblems, name, ARTIFACTS);
  }

  const base = () => server.service.baseUrl;
  /** Follows a navigation link; on a phone the navigation is a menu to open first. */
  async function navigateTo(name: string): Promise<void> {
    const link = page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name, exact: true });
    if (!(await link.isVisible())) await page.locator('.menu > summary').click();
    await link.click();
  }
  const stored = async () => (await server.request<Content>('GET', `/api/v1/workspaces/${ws.workspace_id}/contents/${contentId}`, { key: ws.api_key })).body;
  /** The text of one day of the calendar. */
  const day = (date: string) => page.locator('li.day', { has: page.locator(`h3#day-${date}`) });

  it('signs in', async () => {
    await signIn(page, base(), ws.api_key);
  });

  it('compose: Schedule shows the date and time in the brand’s zone and schedules the post', async () => {
    await page.goto(`${base()}/dashboard/compose`);
    const date = page.getByLabel('Date', { exact: true });
    // Publish now is the default: the date and time are out of the way, the button says Publish.
    expect(await page.getByLabel('Publish now').isChecked()).toBe(true);
    expect(await date.isVisible()).toBe(false);
    await page.getByRole('checkbox', { name: 'Facebook Pages' }).check();
    await page.getByLabel('Content type').selectOption('text');
    await page.getByLabel('Text', { exact: true }).fill('Launch day, 9 sharp');
    await page.getByLabel('Schedule', { exact: true }).check();
    expect(await date.isVisible()).toBe(true);
    expect(await page.locator('[data-zone-name]').textContent()).toBe('America/New_York');
    await date.fill('2026-11-24');
    await page.getByLabel('Time', { exact: true }).fill('09:00');
    await audit('compose-schedule');
    await page.getByRole('button', { name: 'Schedule', exact: true }).click();
    await page.waitForURL(/\/dashboard\/contents\/[0-9a-f-]{36}$/);
    contentId = page.url().split('/').pop()!;
    expect(await page.getByRole('status').textContent()).toContain('Scheduled for 2026-11-24 09:00 (America/New_York) on 1 network.');
    expect(await stored()).toMatchObject({ status: 'scheduled', publish_at: '2026-11-24T14:00:00.000Z', local_publish_at: '2026-11-24T09:00', time_zone: 'America/New_York' });
    await audit('content-scheduled');
  });

  it('calendar: the post is on Tuesday at 09:00, scheduled, and opens its page', async () => {
    await page.goto(`${base()}/dashboard`);
    await navigateTo('Calendar');
    await page.waitForURL(/\/dashboard\/calendar$/);
    expect(await page.locator('#range-h').textContent()).toBe('Week of Monday 23 November 2026');
    const tuesday = day('2026-11-24');
    await expect.poll(() => tuesday.textContent()).toMatch(/09:00\s+Launch day, 9 sharp\s+scheduled/);
    expect(await page.locator('li.post').count()).toBe(1);
    await audit('calendar-week');
    await page.getByRole('link', { name: 'Month', exact: true }).click();
    await page.waitForURL(/view=month/);
    expect(await day('2026-11-24').textContent()).toContain('Launch day, 9 sharp');
    await audit('calendar-month');
    await page.setViewportSize({ width: 1280, height: 900 });
    await audit('calendar-month-desktop');
    await page.getByRole('link', { name: 'Week', exact: true }).click();
    await page.waitForURL(/view=week/);
    await audit('calendar-week-desktop');
    await page.setViewportSize({ width: 390, height: 844 });
    await day('2026-11-24').getByRole('link', { name: /Launch day/ }).click();
    await page.waitForURL(new RegExp(`/dashboard/contents/${contentId}$`));
  });

  it('edit: new text and a new time, read in the same zone', async () => {
    expect(await page.getByLabel('Date', { exact: true }).inputValue()).toBe('2026-11-24');
    await page.locator('#edit-text').fill('Launch day, moved to 10:30');
    await page.getByLabel('Date', { exact: true }).fill('2026-11-25');
    await page.getByLabel('Time', { exact: true }).fill('10:30');
    await audit('content-edit');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Changes saved. Scheduled for 2026-11-25 10:30 (America/New_York).');
    expect(await stored()).toMatchObject({ status: 'scheduled', text: 'Launch day, moved to 10:30', publish_at: '2026-11-25T15:30:00.000Z' });

    await navigateTo('Calendar');
    await page.waitForURL(/\/dashboard\/calendar$/);
    expect(await day('2026-11-24').textContent()).not.toContain('Launch day');
    expect(await day('2026-11-25').textContent()).toMatch(/10:30\s+Launch day, moved to 10:30\s+scheduled/);
  });

  it('cancel: the post is canceled and the calendar no longer shows it as scheduled', async () => {
    await day('2026-11-25').getByRole('link', { name: /Launch day/ }).click();
    await page.waitForURL(new RegExp(`/dashboard/contents/${contentId}$`));
    await page.getByRole('button', { name: 'Cancel post' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Canceled: it will not publish.');
    expect(await page.locator('#edit-h').count()).toBe(0);
    expect(await stored()).toMatchObject({ status: 'canceled', jobs: [] });
    await audit('content-canceled');

    await navigateTo('Calendar');
    await page.waitForURL(/\/dashboard\/calendar$/);
    const wednesday = day('2026-11-25');
    expect(await wednesday.textContent()).toMatch(/10:30\s+Launch day, moved to 10:30\s+canceled/);
    expect(await page.locator('.calendar .badge-scheduled').count()).toBe(0);
    await audit('calendar-canceled');
    // Even when the due time passes, nothing is published.
    clock.set(Date.UTC(2026, 10, 25, 16));
    await server.settle();
    expect((await stored()).status).toBe('canceled');
    clock.set(Date.UTC(2026, 10, 23, 12, 5));
  });

  it('drafts and the queue editor', async () => {
    await page.goto(`${base()}/dashboard/compose`);
    await page.getByRole('checkbox', { name: 'Threads' }).check();
    await page.getByLabel('Content type').selectOption('text');
    await page.getByLabel('Text', { exact: true }).fill('An idea for later');
    await page.getByLabel('Save draft').check();
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.waitForURL(/\/dashboard\/contents\/[0-9a-f-]{36}$/);
    await navigateTo('Drafts');
    await page.waitForURL(/\/dashboard\/drafts$/);
    expect(await page.locator('#drafts').textContent()).toContain('An idea for later');
    await audit('drafts');

    await page.goto(`${base()}/dashboard/brands/${brandId}/queue`);
    await page.getByLabel('Time zone').fill('Europe/Berlin');
    await page.locator('#slot-1-mon').check();
    await page.locator('#slot-1-thu').check();
    await page.getByLabel('Time of slot 2').fill('08:15');
    await page.getByRole('button', { name: 'Save queue' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Queue saved: 3 posting times a week (2 slots on 3 days) in Europe/Berlin.');
    expect(await page.locator('#next-slots').textContent()).toContain('2026-11-26');
    await audit('queue');
  });
}, 120_000);
