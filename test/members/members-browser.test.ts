import { mkdirSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifactsDir, auditPage, chromiumPresent, launchChromium, signIn, watchPage } from '../support/browser.js';
import { testDatabaseKinds } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { brand } from './support.js';

const ARTIFACTS = artifactsDir('members');

/** The owner invites on the Members page at phone width; the invited person joins on the link's page at desktop width. */
describe.runIf(chromiumPresent())('members and the join page in a real browser', () => {
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    server = await startTestServer(testDatabaseKinds()[0]!, {}, { workers: false });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('invite a client limited to one brand, copy the link, join with it, see the member listed', async () => {
    const ws = await server.workspace('Browser members');
    await brand(server, ws.workspace_id, ws.api_key, 'Bakery');
    const owner = await watchPage(browser, { width: 390, height: 844 });
    await signIn(owner.page, server.service.baseUrl, ws.api_key);
    await owner.page.goto(`${server.service.baseUrl}/dashboard/members`);
    await auditPage(owner.page, owner.problems, 'members-empty', ARTIFACTS);

    await owner.page.getByLabel('Email').fill('carla@example.com');
    await owner.page.getByLabel('Role').selectOption('client');
    await owner.page.getByLabel('Only the brands ticked below').check();
    await owner.page.getByLabel('Bakery').check();
    await owner.page.getByRole('button', { name: 'Invite' }).click();
    const link = await owner.page.locator('#invitation-link').inputValue();
    expect(link).toMatch(/\/dashboard\/join\/[A-Za-z0-9_-]+$/);
    await auditPage(owner.page, owner.problems, 'members-invited', ARTIFACTS);

    const invited = await watchPage(browser, { width: 1280, height: 900 });
    await invited.page.goto(link);
    await expect.poll(() => invited.page.getByRole('heading', { level: 1 }).textContent()).toBe('Join Browser members');
    await auditPage(invited.page, invited.problems, 'join', ARTIFACTS);
    await invited.page.getByLabel('Name (optional)').fill('Carla');
    await invited.page.getByLabel('Password').fill('short');
    await invited.page.getByRole('button', { name: 'Create account and join' }).click();
    await auditPage(invited.page, invited.problems, 'join-refused', ARTIFACTS);
    await invited.page.getByLabel('Password').fill('carla has a long password');
    await invited.page.getByRole('button', { name: 'Create account and join' }).click();
    await invited.page.waitForURL(/\/dashboard$/);

    await owner.page.goto(`${server.service.baseUrl}/dashboard/members`);
    await expect.poll(() => owner.page.getByRole('row', { name: /Carla \(carla@example.com\)/ }).textContent()).toContain('Bakery');
    await auditPage(owner.page, owner.problems, 'members-listed', ARTIFACTS);
  }, 60_000);
});
