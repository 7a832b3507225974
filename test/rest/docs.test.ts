import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, chromiumPresent } from '../support/browser.js';
import { describeEachDb } from '../support/server.js';

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

function directives(csp: string | null): Map<string, string[]> {
  return new Map((csp ?? '').split(';').map((d) => d.trim().split(/\s+/)).filter((d) => d[0]).map(([name, ...values]) => [name!, values]));
}

describeEachDb('API reference at /docs', (server) => {
  it('serves a page whose policy allows only its own nonce-stamped scripts and styles, never inline or eval', async () => {
    const first = await fetch(`${server().url}/docs`);
    expect(first.status).toBe(200);
    expect(first.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = directives(first.headers.get('content-security-policy'));
    expect(csp.get('default-src')).toEqual(["'none'"]);
    const [nonceSource] = csp.get('script-src') ?? [];
    expect(nonceSource).toMatch(/^'nonce-[A-Za-z0-9+/=]{20,}'$/);
    expect(csp.get('script-src')).toEqual([nonceSource]);
    expect(csp.get('style-src')).toEqual([nonceSource]);
    expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
    const all = [...csp.values()].flat();
    for (const loose of ["'unsafe-inline'", "'unsafe-eval'", '*', 'https:', 'http:']) expect(all).not.toContain(loose);
    const html = await first.text();
    const nonce = nonceSource!.slice("'nonce-".length, -1);
    // Every script is a file of ours with the nonce; nothing is written inline.
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.map((m) => m[1]!.match(/src="([^"]+)"/)?.[1])).toEqual(['/docs/assets/docs.js', '/docs/assets/redoc.standalone.js']);
    for (const m of scripts) {
      expect(m[1]).toContain(`nonce="${nonce}"`);
      expect(m[2]).toBe('');
    }
    expect(html).not.toMatch(/<style|style="/);
    expect(html).toContain('data-spec-url="/openapi.yaml"');
    // A nonce is good for one answer only.
    const second = await fetch(`${server().url}/docs`);
    expect(directives(second.headers.get('content-security-policy')).get('script-src')).not.toEqual([nonceSource]);
  });

  it('serves the renderer from the installed package and its script, cacheable by ETag; nothing else under /docs/assets', async () => {
    const redoc = await fetch(`${server().url}/docs/assets/redoc.standalone.js`);
    expect(redoc.status).toBe(200);
    expect(redoc.headers.get('content-type')).toMatch(/^text\/javascript/);
    const installed = readFileSync(createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js'));
    expect(Buffer.from(await redoc.arrayBuffer()).equals(installed)).toBe(true);
    const etag = redoc.headers.get('etag');
    expect(etag).toMatch(/^".+"$/);
    const again = await fetch(`${server().url}/docs/assets/redoc.standalone.js`, { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
    const init = await fetch(`${server().url}/docs/assets/docs.js`);
    expect(init.status).toBe(200);
    expect(await init.text()).toContain('Redoc.init');
    for (const path of ['/docs/assets/nothing.js', '/docs/assets/..%2Fdocs.ts', '/docs/assets/redoc.standalone.js.map']) {
      const res = await fetch(`${server().url}${path}`);
      expect(res.status, path).toBe(404);
      expect(((await res.json()) as { error: string }).error, path).toBe('not_found');
    }
  });
});

/** The reference in Debian's Chromium: it renders the served document under its policy, with no refusal. */
describe.runIf(chromiumPresent())('API reference in a real browser', () => {
  let browser: Browser;
  let stop: () => Promise<void>;
  let base: string;

  beforeAll(async () => {
    const { startTestServer } = await import('../support/server.js');
    const { testDatabaseKinds } = await import('../support/databases.js');
    const server = await startTestServer(testDatabaseKinds()[0]!, {}, { workers: false });
    base = server.url;
    stop = () => server.stop();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await stop?.();
  });

  it('renders every tag group, an operation with its examples, and search, with no CSP refusal or script error', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    const outside: string[] = [];
    page.on('pageerror', (err) => problems.push(err.message));
    page.on('console', (msg) => {
      if (msg.type() === 'error' && !msg.text().includes('cdn.redoc.ly/redoc/logo-mini.svg')) problems.push(msg.text());
    });
    // Only requests that completed: one the policy refused (the CDN logo below) never left the browser.
    page.on('requestfinished', (req) => {
      if (!req.url().startsWith(base) && !req.url().startsWith('blob:') && !req.url().startsWith('data:')) outside.push(req.url());
    });
    // A refusal the console might not print still fires this event: collect them in the page.
    await page.addInitScript('window.__violations = []; document.addEventListener("securitypolicyviolation", (e) => window.__violations.push(e.violatedDirective + " " + e.blockedURI));');
    await page.goto(`${base}/docs`);
    await page.getByRole('heading', { name: 'Multi-network publishing API', level: 1 }).waitFor({ timeout: 30_000 });
    for (const group of ['Publishing', 'Notifications', 'Access', 'Billing', 'Service']) await expect(page.getByText(group, { exact: true }).first().isVisible()).resolves.toBe(true);
    // The hand-written example of createContent is what the reference shows for it.
    await page.goto(`${base}/docs#tag/Contents/operation/createContent`);
    await page.getByText('Spring menu starts Monday', { exact: false }).first().waitFor({ timeout: 15_000 });
    // Search runs in its worker (blob:), which the policy allows.
    await page.getByPlaceholder('Search...').fill('webhook');
    const results = page.locator('[data-role="search:results"]');
    await results.getByText('Register a webhook endpoint').waitFor({ timeout: 15_000 });
    const violations = await page.evaluate<string[]>('window.__violations');
    // The one refusal expected: Redoc's sidebar logo from the vendor's CDN, which the policy keeps out on purpose.
    expect(violations.filter((v) => v !== 'img-src https://cdn.redoc.ly/redoc/logo-mini.svg')).toEqual([]);
    expect(problems).toEqual([]);
    expect(outside).toEqual([]);
    await page.evaluate(AXE_SOURCE);
    // The whole reference is tens of thousands of nodes (half a minute of axe); the sidebar and the introduction
    // are the renderer's markup that every operation repeats.
    const critical = await page.evaluate<{ id: string; nodes: number }[]>(`axe.run({ include: ['.menu-content', '.api-info'] }, { resultTypes: ['violations'] }).then((r) =>
      r.violations.filter((v) => v.impact === 'critical').map((v) => ({ id: v.id, nodes: v.nodes.length })))`);
    expect(critical).toEqual([]);
    await page.close();
  }, 90_000);
});
