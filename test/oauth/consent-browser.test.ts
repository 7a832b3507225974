import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { insertMembership } from '../../db/repositories/memberships.repo.js';
import { insertUser } from '../../db/repositories/users.repo.js';
import { newId } from '../../src/core/ids.js';
import { CHROMIUM, chromiumPresent, artifactsDir, auditPage, launchChromium, watchPage } from '../support/browser.js';
import { testDatabaseKinds } from '../support/databases.js';
import { pkcePair } from '../support/oauth-browser.js';
import { startTestServer, type TestServer } from '../support/server.js';

const ARTIFACTS = artifactsDir();

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer(testDatabaseKinds()[0]!);
});
afterAll(() => server.stop());

// CI installs Debian's chromium (.ci/run); on a machine without it this test cannot run and says so.
it.runIf(chromiumPresent())('the consent page works in a real browser: wrong key, then approve, back to the client with a code', async () => {
  const base = server.service.baseUrl;
  const ws = await server.workspace();
  const reg = await fetch(`${base}/api/oauth/mcp/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Browser Test Client', redirect_uris: ['http://127.0.0.1:9/callback'] }),
  });
  const clientId = ((await reg.json()) as { client_id: string }).client_id;
  const { challenge } = pkcePair();
  const url = `${base}/api/oauth/mcp/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: 'http://127.0.0.1:9/callback', response_type: 'code', scope: 'mcp', code_challenge: challenge, code_challenge_method: 'S256', state: 'b1' })}`;

  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 390, height: 760 } });
    let callback: string | null = null;
    await page.route('http://127.0.0.1:9/**', async (route) => {
      callback = route.request().url();
      await route.fulfill({ status: 200, contentType: 'text/plain', body: 'client received the code' });
    });
    const violations: string[] = [];
    page.on('console', (msg) => {
      if (/Content.Security.Policy/i.test(msg.text())) violations.push(msg.text());
    });
    await page.goto(url);
    expect(await page.textContent('h1')).toContain('Browser Test Client');
    // The page is styled by its stylesheet under a policy without 'unsafe-inline', and the browser blocked nothing.
    expect(await page.evaluate<string>("getComputedStyle(document.querySelector('button.primary')).backgroundColor")).toBe('rgb(23, 70, 162)');
    const input = page.getByLabel('Your API key');
    await input.fill('svc_live_00000000000000000000000000000000');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForSelector('[role=alert]');
    expect(await page.textContent('[role=alert]')).toContain('not valid');
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'consent-page.png'), fullPage: true });

    await page.getByLabel('Your API key').fill(ws.api_key);
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL(/127\.0\.0\.1:9\/callback/);
    expect(callback).not.toBeNull();
    const params = new URL(callback!).searchParams;
    expect(params.get('code')).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(params.get('state')).toBe('b1');
    expect(violations).toEqual([]);
  } finally {
    await browser.close();
  }
}, 60_000);

it.runIf(chromiumPresent())('a person signed in to the dashboard reaches the consent page through sign-in, sees who they are, and approves a contributor', async () => {
  const base = server.service.baseUrl;
  const ws = await server.workspace('Browser people');
  const db = server.container.db.kysely;
  const now = server.container.clock.now();
  const userId = newId('usr_');
  await insertUser(db, { id: userId, email: 'pat@example.test', name: null, passwordHash: null, emailVerifiedAt: now, createdAt: now, updatedAt: now });
  await insertMembership(db, { id: newId('mem_'), workspaceId: ws.workspace_id, userId, role: 'editor', brandIds: null, createdAt: now, updatedAt: now });
  const { token } = await server.container.services.sessions.openForUser(userId, 'password', { ip: null, userAgent: null });
  const reg = await fetch(`${base}/api/oauth/mcp/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Person Test Client', redirect_uris: ['http://127.0.0.1:9/callback'] }),
  });
  const clientId = ((await reg.json()) as { client_id: string }).client_id;
  const { challenge } = pkcePair();
  const url = `${base}/api/oauth/mcp/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: 'http://127.0.0.1:9/callback', response_type: 'code', scope: 'mcp', code_challenge: challenge, code_challenge_method: 'S256' })}`;

  const browser = await launchChromium();
  try {
    const { page, problems } = await watchPage(browser, { width: 390, height: 760 });
    // The dashboard's cookie, as signing in sets it: scoped to /dashboard.
    await page.context().addCookies([{ name: 'svc_session', value: token, domain: new URL(base).hostname, path: '/dashboard', httpOnly: true, sameSite: 'Lax' }]);
    let callback: string | null = null;
    await page.route('http://127.0.0.1:9/**', async (route) => {
      callback = route.request().url();
      await route.fulfill({ status: 200, contentType: 'text/plain', body: 'client received the code' });
    });
    await page.goto(url);
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.waitForSelector('text=Approve as pat@example.test');
    mkdirSync(ARTIFACTS, { recursive: true });
    await auditPage(page, problems, 'consent page, signed in', ARTIFACTS, 'consent-page-person');
    expect(await page.locator('#role').inputValue()).toBe('contributor');
    expect(await page.locator('#role option').evaluateAll((options) => options.map((o) => (o as unknown as { value: string }).value))).toEqual(['editor', 'contributor', 'viewer', 'client']);
    await page.getByRole('button', { name: 'Approve' }).first().click();
    await page.waitForURL(/127\.0\.0\.1:9\/callback/);
    expect(new URL(callback!).searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{20,}$/);
  } finally {
    await browser.close();
  }
}, 60_000);
