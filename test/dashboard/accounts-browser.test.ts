import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertMembership } from '../../db/repositories/memberships.repo.js';
import { insertUser } from '../../db/repositories/users.repo.js';
import { hashPassword } from '../../src/core/accounts/password.js';
import { totpCode } from '../../src/core/accounts/totp.js';
import { ManualClock } from '../../src/core/clock.js';
import { artifactsDir, auditPage, chromiumPresent, launchChromium, watchPage } from '../support/browser.js';
import { testDatabaseKinds } from '../support/databases.js';
import { startTestServer, type TestServer } from '../support/server.js';

const ARTIFACTS = artifactsDir('accounts');
const PASSWORD = 'correct horse battery staple';

/**
 * A person signs in with a password in Chromium, turns on two-step sign-in from their account page, and signs in
 * again with a code. Served at `localhost` (the default address): the secure context passkeys will need.
 */
describe.runIf(chromiumPresent())('password and TOTP sign-in in Chromium', () => {
  const clock = new ManualClock(Date.UTC(2026, 10, 21, 12));
  let server: TestServer;
  let browser: Browser;
  const email = 'ana@example.com';

  beforeAll(async () => {
    server = await startTestServer(testDatabaseKinds()[0]!, { HOST: 'localhost' }, { workers: false, clock });
    const ws = await server.workspace('Browser workspace');
    const db = server.container.db.kysely;
    await insertUser(db, { id: 'usr_browser', email, name: null, passwordHash: await hashPassword(PASSWORD), emailVerifiedAt: null, createdAt: clock.now(), updatedAt: clock.now() });
    await insertMembership(db, { id: 'mem_browser', workspaceId: ws.workspace_id, userId: 'usr_browser', role: 'owner', brandIds: null, createdAt: clock.now(), updatedAt: clock.now() });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('signs in, enrols an authenticator app, then signs in with password and code', async () => {
    const base = server.service.baseUrl;
    expect(base).toMatch(/^http:\/\/localhost:\d+$/);
    const { page, problems } = await watchPage(browser, { width: 1280, height: 900 });
    await page.goto(`${base}/dashboard/sign-in`);
    await auditPage(page, problems, 'sign-in', ARTIFACTS);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(/\/dashboard$/);
    expect(await page.evaluate<boolean>('window.isSecureContext')).toBe(true);

    await page.goto(`${base}/dashboard/account`);
    await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
    const secret = await page.locator('#totp-secret').inputValue();
    await auditPage(page, problems, 'account-enrol', ARTIFACTS);
    await page.getByLabel('Code from the app').fill(await totpCode(secret, clock.now()));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await expect.poll(() => page.locator('ul.codes li').count()).toBe(10);
    await auditPage(page, problems, 'account-recovery-codes', ARTIFACTS);

    const phone = await watchPage(browser, { width: 390, height: 844 });
    await phone.page.goto(`${base}/dashboard/sign-in`);
    await phone.page.getByLabel('Email').fill(email);
    await phone.page.getByLabel('Password').fill(PASSWORD);
    await phone.page.getByRole('button', { name: 'Continue' }).click();
    await phone.page.waitForURL(/\/dashboard\/sign-in\/code$/);
    await auditPage(phone.page, phone.problems, 'sign-in-code-phone', ARTIFACTS);
    clock.advance(30_000);
    await phone.page.getByLabel('Code').fill(await totpCode(secret, clock.now()));
    await phone.page.getByRole('button', { name: 'Continue' }).click();
    await phone.page.waitForURL(/\/dashboard$/);
    await phone.page.goto(`${base}/dashboard/account`);
    expect(await phone.page.getByRole('rowheader', { name: 'password+totp (this session)' }).count()).toBe(1);
    await auditPage(phone.page, phone.problems, 'account-phone', ARTIFACTS);
  }, 120_000);
});
