import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { auditPage, chromiumPresent, openWatchedPage, artifactsDir } from '../support/browser.js';
import { testDatabaseKinds } from '../support/databases.js';
import { startReceiver } from '../support/receiver.js';
import { startTestServer, type TestServer } from '../support/server.js';

const ARTIFACTS = artifactsDir('dashboard');

/**
 * The whole dashboard in Debian's Chromium (CI installs it; playwright-core downloads nothing): the journey of
 * issue #9, a screenshot of every page, and axe-core on every page at phone width.
 */
describe.runIf(chromiumPresent())('dashboard in a real browser', () => {
  const clock = new ManualClock(Date.UTC(2026, 10, 21, 9));
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let ws: { workspace_id: string; key_id: string; api_key: string };
  const checked: string[] = [];
  let pageProblems: string[] = [];

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    receiver = await startReceiver();
    server = await startTestServer(testDatabaseKinds()[0]!, { ALLOW_LOCAL_URLS: 'true' }, { clock, workers: false });
    ws = await server.workspace('Browser workspace');
    ({ browser, page, problems: pageProblems } = await openWatchedPage({ width: 390, height: 844 }));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await server?.stop();
  });

  /** axe-core in the page (run through the debugger protocol, so the page's CSP need not allow it). */
  async function audit(name: string): Promise<void> {
    await auditPage(page, pageProblems, name, ARTIFACTS);
    checked.push(name);
  }

  const base = () => server.service.baseUrl;

  it('sign-in: a wrong key gets a clear message, the right one opens the overview', async () => {
    await page.goto(`${base()}/dashboard`);
    await page.waitForURL(/\/dashboard\/sign-in/);
    await audit('sign-in');
    await page.getByLabel('API key').fill('svc_live_00000000000000000000000000000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('That API key is not valid');
    await audit('sign-in-wrong-key');
    await page.getByLabel('API key').fill(ws.api_key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/dashboard$/);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Overview');
    expect(await page.content()).not.toContain(ws.api_key);
    // Keyboard users meet the skip link first.
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string | undefined>('document.activeElement?.textContent')).toBe('Skip to content');
    await audit('overview');
  });

  it('brands: creates a brand and adds sandbox connections on two networks', async () => {
    await page.goto(`${base()}/dashboard/brands`);
    await page.getByLabel('Brand name').fill('Acme');
    await page.getByRole('button', { name: 'Create brand' }).click();
    await page.waitForURL(/\/dashboard\/brands\?at=brand-brand_[^#]+#brand-brand_/);
    for (const [slug, name] of [
      ['facebook', 'Acme page'],
      ['threads', 'Acme threads'],
    ] as const) {
      await page.getByLabel('Network').first().selectOption(slug);
      await page.getByLabel('Connection name').first().fill(name);
      await page.getByRole('button', { name: 'Add sandbox connection' }).first().click();
      await page.waitForURL(/\/dashboard\/brands\?at=conn-conn_[^#]+#conn-conn_/);
      await expect.poll(() => page.locator('main').textContent()).toContain(name);
    }
    const connections = (await server.container.services.connections.list({ kind: 'api_key', workspaceId: ws.workspace_id, keyId: ws.key_id, role: 'admin', brandIds: null }, ws.workspace_id, {})).data;
    expect(connections.map((c) => [c.platform_slug, c.mode]).sort()).toEqual([
      ['facebook', 'sandbox'],
      ['threads', 'sandbox'],
    ]);
    await audit('brands');
  });

  it('compose: counts characters live, publishes to two networks, and the content page shows both published with links', async () => {
    await page.goto(`${base()}/dashboard/compose`);
    // On a phone the navigation is a closed menu: the page starts with its own content.
    expect(await page.getByRole('navigation', { name: 'Dashboard' }).isVisible()).toBe(false);
    await page.locator('.menu > summary').click();
    expect(await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Calendar', exact: true }).isVisible()).toBe(true);
    await page.locator('.menu > summary').click();
    // Networks the brand has no connection on offer Connect instead of a box.
    expect(await page.getByRole('link', { name: 'Connect LinkedIn →' }).isVisible()).toBe(true);
    expect(await page.getByRole('checkbox', { name: 'LinkedIn' }).count()).toBe(0);
    // Per-network text before any network is ticked: a hint, no empty tab list.
    await page.getByText('Different text per network').click();
    expect(await page.getByText('Tick a network above to give it its own text.').isVisible()).toBe(true);
    expect(await page.getByRole('tablist').isVisible()).toBe(false);
    await audit('compose-overrides-empty');
    await page.getByRole('checkbox', { name: 'Facebook Pages' }).check();
    await page.getByRole('checkbox', { name: 'Threads' }).check();
    await page.getByLabel('Content type').selectOption('text');
    // Fields follow the type: no title or media for a text post.
    expect(await page.getByLabel('Title', { exact: true }).isVisible()).toBe(false);
    expect(await page.getByRole('group', { name: 'Media' }).isVisible()).toBe(false);
    // Per-network text in tabs, one per network ticked.
    expect(await page.getByText('Tick a network above to give it its own text.').isVisible()).toBe(false);
    expect(await page.getByRole('tab').evaluateAll((tabs) => tabs.filter((t) => !(t as { hidden: boolean }).hidden).map((t) => t.textContent))).toEqual(['Facebook Pages', 'Threads']);
    await page.getByRole('tab', { name: 'Threads' }).click();
    expect(await page.getByLabel('Text on Threads').isVisible()).toBe(true);
    expect(await page.getByLabel('Text on Facebook Pages').isVisible()).toBe(false);
    await page.getByLabel('Text on Threads').fill('Hello, Threads');
    await audit('compose-tabs');
    await page.getByLabel('Text', { exact: true }).fill('Hello from the dashboard');
    await expect.poll(() => page.locator('output[data-counter-for="text"]').textContent()).toMatch(/24 characters.*Threads 500/);
    await page.getByLabel('Text', { exact: true }).fill('x'.repeat(501));
    await expect.poll(() => page.locator('output[data-counter-for="text"] .over').textContent()).toContain('Threads');
    await page.getByLabel('Text', { exact: true }).fill('Hello from the dashboard');
    await audit('compose');
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.waitForURL(/\/dashboard\/contents\/[0-9a-f-]{36}$/);
    // Jobs are still queued: the page keeps refreshing itself until they are final.
    expect(await page.locator('#content-live[data-refresh-while]').count()).toBe(1);
    await server.settle();
    const links = page.getByRole('link', { name: /^View post on / });
    await expect.poll(() => links.count(), { timeout: 10_000 }).toBe(2);
    const contentId = page.url().split('/').pop()!;
    const api = await server.request<{ jobs: { status: string; external_post_url: string }[] }>('GET', `/api/v1/workspaces/${ws.workspace_id}/contents/${contentId}`, { key: ws.api_key });
    expect(api.body.jobs.map((j) => j.status)).toEqual(['published', 'published']);
    const hrefs = await links.evaluateAll((as) => as.map((a) => a.getAttribute('href')));
    expect(hrefs.sort()).toEqual(api.body.jobs.map((j) => j.external_post_url).sort());
    // The whole content view refreshed: the content's own status too, and the page stopped refreshing.
    expect(await page.locator('#content-live').textContent()).not.toMatch(/queued|publishing|confirming/);
    expect(await page.locator('#content-live[data-refresh-while]').count()).toBe(0);
    await audit('content');
    await page.goto(`${base()}/dashboard/contents`);
    await audit('contents');
  });

  it('webhooks: creates an endpoint (secret shown once) and shows its delivery', async () => {
    await page.goto(`${base()}/dashboard/webhooks`);
    await page.getByLabel('URL').fill(`${receiver.url}/hook`);
    await page.getByRole('button', { name: 'Create webhook' }).click();
    const secret = await page.locator('#new-webhook-secret').inputValue();
    expect(secret).toMatch(/^whsec_/);
    await audit('webhook-created');
    // An event for it: publish once more, run the workers, deliver.
    const brands = await server.request<{ data: { id: string }[] }>('GET', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key });
    await server.request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, { key: ws.api_key, body: { brand_id: brands.body.data[0]!.id, target_platforms: ['facebook'], content_type: 'text', text: 'Second post' } });
    await server.settle();
    await server.container.dispatcher.drain();
    expect(receiver.received.length).toBe(1);
    await page.getByRole('link', { name: 'Open the endpoint' }).click();
    await page.waitForURL(/\/dashboard\/webhooks\/wh_/);
    const deliveries = page.locator('#deliveries');
    await expect.poll(() => deliveries.textContent()).toContain('content.published');
    expect(await deliveries.textContent()).toContain('delivered');
    expect(await page.content()).not.toContain(secret);
    await audit('webhook');
  });

  it('API keys: creates one (shown once) and revokes it', async () => {
    await page.goto(`${base()}/dashboard/api-keys`);
    await page.getByLabel('Name').fill('ci');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = await page.locator('#new-api-key').inputValue();
    expect(key).toMatch(/^svc_live_[0-9a-f]{32}$/);
    expect((await server.request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key })).status).toBe(200);
    await audit('api-key-created');
    await page.getByRole('button', { name: 'Revoke ci' }).click();
    await page.waitForURL(/\/dashboard\/api-keys$/);
    await expect.poll(() => page.getByRole('status').first().textContent()).toContain('revoked');
    expect((await server.request('GET', `/api/v1/workspaces/${ws.workspace_id}/api-keys`, { key })).status).toBe(401);
    expect(await page.content()).not.toContain(key);
    await audit('api-keys');
  });

  it('OAuth clients and wallet pages', async () => {
    await server.container.services.wallet.grant({ workspaceId: ws.workspace_id, amount: 250, source: 'grant', expiresAt: clock.now() + 30 * 86_400_000 });
    await page.goto(`${base()}/dashboard/oauth-clients`);
    await audit('oauth-clients');
    await page.goto(`${base()}/dashboard/wallet`);
    expect(await page.locator('main').textContent()).toContain('250');
    await audit('wallet');
  });

  it('audit log: the changes made above, filtered by action', async () => {
    await page.goto(`${base()}/dashboard/audit-log`);
    expect(await page.locator('main').textContent()).toContain('brand.created');
    await page.getByLabel('Action').fill('wallet.topped_up');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/action=wallet\.topped_up/);
    expect(await page.locator('#audit-entries').textContent()).toContain('250 credits');
    await audit('audit-log');
  });

  it('the other pages and states: form errors, preview, a failed job, an OAuth client, a price, not found', async () => {
    // Compose: a refusal shown next to its field, then a preview.
    await page.goto(`${base()}/dashboard/compose`);
    await page.getByRole('checkbox', { name: 'Threads' }).check();
    await page.getByLabel('Content type').selectOption('text');
    await page.getByLabel('Text', { exact: true }).fill('y'.repeat(501));
    await page.getByRole('button', { name: 'Publish' }).click();
    await expect.poll(() => page.locator('#text').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('.field.invalid').first().textContent()).toMatch(/500/);
    await audit('compose-error');
    await page.getByLabel('Text', { exact: true }).fill('A short one');
    await page.getByRole('button', { name: 'Preview' }).click();
    await expect.poll(() => page.locator('main').textContent()).toMatch(/Preview/);
    await audit('compose-preview');
    // The thread editor: add a post, then remove it.
    await page.getByLabel('Content type').selectOption('thread');
    // A thread is written in the thread editor only: no second text box.
    expect(await page.getByLabel('Text', { exact: true }).isVisible()).toBe(false);
    await page.getByRole('button', { name: 'Add post' }).click();
    expect(await page.locator('[data-thread-list] textarea').count()).toBeGreaterThanOrEqual(2);
    await audit('compose-thread');

    // A failed network explained in words.
    const brands = await server.request<{ data: { id: string }[] }>('GET', `/api/v1/workspaces/${ws.workspace_id}/brands`, { key: ws.api_key });
    const failed = await server.request<{ content_id: string }>('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
      key: ws.api_key,
      body: { brand_id: brands.body.data[0]!.id, target_platforms: ['threads'], content_type: 'text', text: 'Quota day', sandbox_outcomes: { threads: 'quota_exceeded' } },
    });
    await server.settle();
    await page.goto(`${base()}/dashboard/contents/${failed.body.content_id}`);
    expect(await page.locator('#jobs').textContent()).toContain('quota_exceeded');
    await audit('content-failed');

    // An OAuth client: created (secret once), then its edit page.
    await page.goto(`${base()}/dashboard/oauth-clients`);
    await page.getByLabel('Client name').fill('My GPT');
    await page.getByLabel('Redirect URIs').fill('https://chat.openai.com/aip/g-1/oauth/callback');
    await page.getByRole('button', { name: 'Create client' }).click();
    expect(await page.locator('#new-client-secret').inputValue()).toMatch(/\S{20,}/);
    await audit('oauth-client-created');
    await page.getByRole('link', { name: 'Edit My GPT' }).click();
    await audit('oauth-client');

    // The price of an operation.
    await page.goto(`${base()}/dashboard/wallet`);
    await page.getByLabel('Quantity').fill('3');
    await page.getByRole('button', { name: 'Check price' }).click();
    await expect.poll(() => page.url()).toContain('quantity=3');
    await audit('wallet-price');

    await page.goto(`${base()}/dashboard/no-such-page`);
    await audit('not-found');
  });

  it('a form without its CSRF token gets a clear page and changes nothing', async () => {
    await page.goto(`${base()}/dashboard/api-keys`);
    await page.getByLabel('Name').fill('forged');
    await page.evaluate(`document.querySelectorAll('main input[name=csrf]').forEach((i) => i.remove())`);
    await page.getByRole('button', { name: 'Create key' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('This form could not be accepted');
    const { data: keys } = await server.container.services.apiKeys.list({ kind: 'api_key', workspaceId: ws.workspace_id, keyId: ws.key_id, role: 'admin', brandIds: null }, ws.workspace_id);
    expect(keys.map((k) => k.name)).not.toContain('forged');
    await audit('csrf-refused');
  });

  it('signs out, and back in', async () => {
    await page.goto(`${base()}/dashboard`);
    await page.locator('.menu > summary').click();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/dashboard\/sign-in\?reason=signed_out/);
    // The page's notice (the passkey form keeps an empty status region of its own for its messages).
    expect(await page.locator('p.notice[role="status"]').textContent()).toContain('You signed out');
    await audit('signed-out');
    await page.goto(`${base()}/dashboard/wallet`);
    await page.waitForURL(/\/dashboard\/sign-in/);
    await page.getByLabel('API key').fill(ws.api_key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/dashboard\/wallet$/);
  });

  it('the whole dashboard reads at desktop width too', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${base()}/dashboard`);
    // Wide: the navigation is a row, always open, with no Menu button.
    expect(await page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Calendar', exact: true }).isVisible()).toBe(true);
    expect(await page.locator('.menu > summary').isVisible()).toBe(false);
    expect(await page.locator('.ws').textContent()).toContain('Browser workspace');
    await audit('overview-desktop');
    await page.setViewportSize({ width: 390, height: 844 });
  });

  it('an expired session sends the person back to sign-in with the reason', async () => {
    clock.advance(61 * 60_000);
    await page.goto(`${base()}/dashboard/contents`);
    await page.waitForURL(/\/dashboard\/sign-in\?reason=expired/);
    expect(await page.locator('p.notice[role="status"]').textContent()).toContain('Your session expired');
    await audit('session-expired');
    expect(checked.length).toBeGreaterThanOrEqual(24);
  });
}, 120_000);
