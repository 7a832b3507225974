import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { presentIf } from './required.js';

/** Debian's Chromium, driven through playwright-core (no browser download). */
export const CHROMIUM = '/usr/bin/chromium';

/**
 * Where the browser tests leave their screenshots for a person to look at: TEST_ARTIFACTS, else a folder under the
 * system's temporary one, never the checkout.
 */
export function artifactsDir(...parts: string[]): string {
  return join(process.env.TEST_ARTIFACTS ?? join(tmpdir(), 'publisher-test-artifacts'), ...parts);
}

/** Whether the browser tests can run here; under CI=true a missing Chromium fails them (./required.ts). */
export function chromiumPresent(): boolean {
  return presentIf(existsSync(CHROMIUM), `Chromium is absent at ${CHROMIUM}`);
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[] }[];
}

/** Headless Chromium with what a test does not need switched off. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/**
 * A page of `browser` at `viewport` whose script errors and CSP refusals are collected in `problems` (the page's
 * own script must run under its policy), and whose confirmation dialogs are accepted.
 */
export async function watchPage(browser: Browser, viewport: { width: number; height: number }): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({ viewport });
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && /Content Security Policy|Refused to/.test(msg.text())) problems.push(msg.text());
  });
  page.on('dialog', (dialog) => void dialog.accept());
  return { page, problems };
}

/** Signs `page` in to the dashboard at `baseUrl` with an API key, as a person does, and waits for the overview. */
export async function signIn(page: Page, baseUrl: string, apiKey: string): Promise<void> {
  await page.goto(`${baseUrl}/dashboard/sign-in`);
  await page.getByLabel('API key').fill(apiKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/dashboard$/);
}

/** A browser of its own with one watched page (see `watchPage`). */
export async function openWatchedPage(viewport: { width: number; height: number }): Promise<{ browser: Browser; page: Page; problems: string[] }> {
  const browser = await launchChromium();
  return { browser, ...(await watchPage(browser, viewport)) };
}

/**
 * The audit of one page: axe-core run in the page (through the debugger protocol, so the page's CSP need not allow
 * it) finds nothing serious or critical, no script error or CSP refusal happened, nothing is wider than the
 * screen, and a full-page screenshot `<file>.png` (by default the step's name) goes to `artifacts` for review.
 */
export async function auditPage(page: Page, problems: readonly string[], name: string, artifacts: string, file = name): Promise<void> {
  await page.evaluate(AXE_SOURCE);
  // A string, because the tests are compiled without the DOM library; it runs in the page.
  const violations = await page.evaluate<AxeViolation[]>(`axe.run(document, { resultTypes: ['violations'] }).then((r) =>
    r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) })))`);
  expect(problems, `${name}: script errors or CSP refusals`).toEqual([]);
  const severe = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(severe, `${name}: ${JSON.stringify(severe, null, 1)}`).toEqual([]);
  const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
  expect(overflow, `${name}: the page is wider than the screen`).toBeLessThanOrEqual(0);
  await page.screenshot({ path: join(artifacts, `${file}.png`), fullPage: true });
}
