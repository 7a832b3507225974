import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { Content, CreatedContent } from '../../src/core/contents/contents.schema.js';
import type { NewWorkspace } from '../../src/core/workspaces/workspaces.service.js';
import { call, closeClientsAfterEach, connect } from '../mcp/tool-calls.js';
import { artifactsDir, auditPage, chromiumPresent, launchChromium, watchPage } from '../support/browser.js';
import { testDatabaseKinds } from '../support/databases.js';
import { brandWithConnections } from '../support/factories.js';
import { startTestServer, type TestServer } from '../support/server.js';

const ARTIFACTS = artifactsDir('people-journey');
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

closeClientsAfterEach();

/**
 * People and approvals in Debian's Chromium, as the README's walk-through tells it: the first owner joins with the
 * first start's link and invites a contributor and a client limited to the brand; the contributor joins, signs in
 * and schedules a post; an assistant with a contributor key made on the API keys page drafts over MCP; the client
 * approves one and sends the other back at phone width; the approved one publishes at its time, the other never;
 * the owner reads every step, with its actor, in the audit log. axe-core runs on every new page.
 */
describe.runIf(chromiumPresent())('people and approvals in a real browser', () => {
  // Monday 23 November 2026, 09:00 UTC; the brand has no queue, so its zone is UTC.
  const clock = new ManualClock(Date.UTC(2026, 10, 23, 9));
  let server: TestServer;
  let browser: Browser;
  let first: NewWorkspace & { owner_invitation_token?: string };
  let owner: Page;
  const links = { contributor: '', client: '' };
  let assistantKey = '';
  let composedId = '';
  let draftedId = '';
  const problems = new Map<Page, string[]>();

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    server = await startTestServer(testDatabaseKinds()[0]!, {}, { clock, workers: false });
    // What the first start printed: the default workspace, its owner key and the first owner link.
    first = server.service.firstWorkspace!;
    await brandWithConnections(server, ['threads'], first);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const base = () => server.service.baseUrl;
  async function open(viewport: { width: number; height: number }): Promise<Page> {
    const watched = await watchPage(browser, viewport);
    problems.set(watched.page, watched.problems);
    return watched.page;
  }
  const audit = (page: Page, name: string) => auditPage(page, problems.get(page) ?? [], name, ARTIFACTS);
  const main = (page: Page) => () => page.locator('main').textContent();
  /** Joins with an invitation link as a new person: name and password on the join page. */
  async function join(page: Page, link: string, name: string, password: string, email?: string): Promise<void> {
    await page.goto(link);
    if (email !== undefined) await page.getByLabel('Email').fill(email);
    await page.getByLabel('Name (optional)').fill(name);
    await page.getByLabel('Password').fill(password);
    await audit(page, `join-${name.split(' ')[0]!.toLowerCase()}`);
    await page.getByRole('button', { name: 'Create account and join' }).click();
    await page.waitForURL(/\/dashboard$/);
  }
  async function signIn(page: Page, email: string, password: string): Promise<void> {
    await page.goto(`${base()}/dashboard/sign-in`);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(/\/dashboard$/);
  }
  const stored = async (id: string) => (await server.request<Content>('GET', `/api/v1/workspaces/${first.workspace_id}/contents/${id}`, { key: first.api_key })).body;

  it('the owner joins with the first owner link, invites a contributor and a client, and makes a contributor key', async () => {
    owner = await open(DESKTOP);
    await join(owner, `${base()}/dashboard/join/${first.owner_invitation_token!}`, 'Olivia Owner', 'olivia has a long password', 'olivia@example.com');
    await owner.goto(`${base()}/dashboard/members`);
    await audit(owner, 'members');

    const invite = owner.getByRole('region', { name: 'Invite a person' });
    await invite.getByLabel('Email').fill('carl@example.com');
    await invite.getByLabel('Role').selectOption('contributor');
    await invite.getByRole('button', { name: 'Invite' }).click();
    links.contributor = await owner.locator('#invitation-link').inputValue();

    await invite.getByLabel('Email').fill('clara@example.com');
    await invite.getByLabel('Role').selectOption('client');
    await invite.getByLabel('Only the brands ticked below').check();
    await invite.getByLabel('Acme').check();
    await invite.getByRole('button', { name: 'Invite' }).click();
    links.client = await owner.locator('#invitation-link').inputValue();
    expect(links.client).toMatch(/\/dashboard\/join\/[A-Za-z0-9_-]+$/);
    expect(links.client).not.toBe(links.contributor);
    await audit(owner, 'members-invited');

    await owner.goto(`${base()}/dashboard/api-keys`);
    await owner.getByLabel('Name').fill('Writing assistant');
    await owner.getByLabel('Role').selectOption('contributor');
    await owner.getByRole('button', { name: 'Create key' }).click();
    assistantKey = await owner.locator('#new-api-key').inputValue();
    expect(assistantKey).toMatch(/^svc_live_/);
    await audit(owner, 'api-key-created');
  }, 30_000);

  it('the contributor joins, signs in and schedules a post: it waits for approval', async () => {
    // A few minutes between the steps, so the audit log reads in order (a session stays open 60 minutes idle).
    clock.set(Date.UTC(2026, 10, 23, 9, 5));
    const joining = await open(DESKTOP);
    await join(joining, links.contributor, 'Carl Contributor', 'carl has a long password');
    await joining.close();

    const page = await open(DESKTOP);
    await signIn(page, 'carl@example.com', 'carl has a long password');
    await page.goto(`${base()}/dashboard/compose`);
    await page.getByRole('checkbox', { name: 'Threads' }).check();
    await page.getByLabel('Content type').selectOption('text');
    await page.getByLabel('Text', { exact: true }).fill('Fresh sourdough at 9:30');
    await page.getByLabel('Schedule', { exact: true }).check();
    await page.getByLabel('Date', { exact: true }).fill('2026-11-23');
    await page.getByLabel('Time', { exact: true }).fill('09:30');
    await audit(page, 'compose');
    await page.getByRole('button', { name: 'Schedule', exact: true }).click();
    await page.waitForURL(/\/dashboard\/contents\/[0-9a-f-]{36}$/);
    composedId = page.url().split('/').pop()!;
    await expect.poll(main(page)).toContain('Meant for, once approved');
    expect(await main(page)()).toContain('submitted it for approval');
    expect(await stored(composedId)).toMatchObject({ status: 'pending_approval', publish_at: '2026-11-23T09:30:00.000Z', jobs: [] });
    await audit(page, 'content-pending');
    await page.close();
  }, 30_000);

  it('an assistant with the contributor key drafts over MCP: publish_content answers pending_approval', async () => {
    clock.set(Date.UTC(2026, 10, 23, 9, 10));
    const assistant = await connect(server, assistantKey);
    const created = await call<CreatedContent>(assistant, 'publish_content', {
      brand_id: (await stored(composedId)).brand_id,
      target_platforms: ['threads'],
      content_type: 'text',
      text: 'Half-price croissants this afternoon',
      publish_at: '2026-11-23T09:40:00Z',
    });
    expect(created).toMatchObject({ status: 'pending_approval', jobs: [] });
    draftedId = created.content_id;
  }, 30_000);

  it('the client joins, signs in at phone width, approves one and requests changes on the other', async () => {
    clock.set(Date.UTC(2026, 10, 23, 9, 15));
    const joining = await open(PHONE);
    await join(joining, links.client, 'Clara Client', 'clara has a long password');
    await joining.close();

    const page = await open(PHONE);
    await signIn(page, 'clara@example.com', 'clara has a long password');
    // The overview a client lands on opens, whatever it may not read (connections, the wallet).
    expect(await page.getByRole('heading', { level: 1 }).first().textContent()).not.toBe('Not allowed');
    await audit(page, 'client-overview');
    // On a phone the navigation is a menu to open first.
    await page.locator('.menu > summary').click();
    await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Approvals', exact: true }).click();
    await page.waitForURL(/\/dashboard\/approvals$/);
    const row = (text: string) => page.locator('tr', { hasText: text });
    await expect.poll(() => row('Fresh sourdough at 9:30').count()).toBe(1);
    expect(await row('Half-price croissants').count()).toBe(1);
    await audit(page, 'approvals');

    await row('Fresh sourdough at 9:30').getByRole('button', { name: /^Approve at its time/ }).click();
    await expect.poll(main(page)).toContain('Approved: it publishes at');
    await row('Half-price croissants').getByLabel('What should change?').fill('Say until what time, please.');
    await row('Half-price croissants').getByRole('button', { name: 'Request changes' }).click();
    await expect.poll(main(page)).toContain('Sent back to its author with your comment.');
    expect(await main(page)()).toContain('Nothing is waiting for approval.');
    await audit(page, 'approvals-done');
    // The approved post's page shows the client its history.
    await page.goto(`${base()}/dashboard/contents/${composedId}`);
    await expect.poll(main(page)).toMatch(/clara@example\.com\s*\(client\) approved it/);
    await audit(page, 'content-approved');
    await page.getByRole('link', { name: 'Acme', exact: true }).click();
    await page.waitForURL(/\/dashboard\/brands/);
    await expect.poll(main(page)).toContain("Your role does not show this brand's connections.");
    await audit(page, 'client-brands');
    // Every page in a client's menu opens (the menu offers nothing the role is refused); the folded phone menu's
    // links are read without opening it.
    const menu = await page.getByRole('navigation', { name: 'Dashboard', includeHidden: true }).getByRole('link', { includeHidden: true }).evaluateAll((links) => links.map((a) => a.getAttribute('href') ?? ''));
    expect(menu).toContain('/dashboard/approvals');
    for (const href of menu) {
      await page.goto(`${base()}${href}`);
      expect(await page.getByRole('heading', { level: 1 }).first().textContent(), href).not.toBe('Not allowed');
    }
    await page.close();

    expect(await stored(composedId)).toMatchObject({ status: 'scheduled', publish_at: '2026-11-23T09:30:00.000Z' });
    expect(await stored(draftedId)).toMatchObject({ status: 'changes_requested', jobs: [] });
  }, 30_000);

  it('at its time the approved post publishes on the sandbox network; the one sent back does not', async () => {
    clock.set(Date.UTC(2026, 10, 23, 9, 45));
    await server.settle();
    expect(await stored(composedId)).toMatchObject({ status: 'published', jobs: [{ platform_slug: 'threads', status: 'published' }] });
    expect(await stored(draftedId)).toMatchObject({ status: 'changes_requested', jobs: [] });
    await owner.goto(`${base()}/dashboard/contents/${composedId}`);
    await expect.poll(main(owner)).toContain('published');
    await audit(owner, 'content-published');
  }, 30_000);

  it('the owner reads each step with its actor in the audit log', async () => {
    await owner.goto(`${base()}/dashboard/audit-log`);
    await audit(owner, 'audit-log');
    const entry = async (action: string, target: string) => {
      const rows = owner.locator('tbody tr', { has: owner.locator('code', { hasText: new RegExp(`^${action.replace('.', '\\.')}$`) }) }).filter({ hasText: target });
      expect(await rows.count(), `${action} on ${target}`).toBe(1);
      return (await rows.textContent()) ?? '';
    };
    expect(await entry('member.invited', 'carl@example.com')).toMatch(/olivia@example\.com\s*Person · owner/);
    expect(await entry('member.invited', 'clara@example.com')).toMatch(/olivia@example\.com\s*Person · owner/);
    expect(await entry('member.joined', 'carl@example.com')).toMatch(/09:05:00 UTC\s*member\.joined\s*carl@example\.com\s*Person · contributor/);
    expect(await entry('member.joined', 'clara@example.com')).toMatch(/09:15:00 UTC\s*member\.joined\s*clara@example\.com\s*Person · client/);
    expect(await entry('api_key.created', 'Writing assistant')).toContain('olivia@example.com');
    expect(await entry('content.created', 'Fresh sourdough')).toMatch(/carl@example\.com\s*Person · contributor/);
    expect(await entry('content.submitted', 'Fresh sourdough')).toMatch(/carl@example\.com\s*Person · contributor/);
    const drafted = await entry('content.created', 'Half-price croissants');
    expect(drafted).toMatch(/Writing assistant \(svc_live_[^)]*\)\s*API key · contributor/);
    expect(drafted).toMatch(/\smcp127\.0\.0\.1/);
    expect(await entry('content.submitted', 'Half-price croissants')).toMatch(/Writing assistant \(svc_live_[^)]*\)\s*API key · contributor/);
    expect(await entry('content.approved', 'Fresh sourdough')).toMatch(/09:15:00 UTC\s*content\.approved\s*clara@example\.com\s*Person · client/);
    expect(await entry('content.changes_requested', 'Half-price croissants')).toMatch(/clara@example\.com\s*Person · client/);
  }, 30_000);
});
