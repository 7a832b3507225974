import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { Principal } from '../../src/core/principal.js';
import { chromiumPresent, openWatchedPage, signIn } from '../support/browser.js';
import { testDatabaseKinds } from '../support/databases.js';
import { brandWithConnections } from '../support/factories.js';
import { startTestServer, type TestServer } from '../support/server.js';

/** What a reader needs of a post in a day cell: room for a few words on a line, so a title takes few lines. */
const MIN_POST_WIDTH = 80;
const MAX_TITLE_LINES = 4;

/**
 * The desktop calendar measured in Debian's Chromium: every post in a week's and a month's day cells is wide enough
 * to read, and its title wraps on a few lines, at the common desktop widths. Measured by what the browser lays out,
 * since a rule meant for another list can squeeze the cells without any accessibility check noticing.
 */
describe.runIf(chromiumPresent())('dashboard calendar at desktop widths', () => {
  // Monday 23 November 2026, 12:00 UTC.
  const clock = new ManualClock(Date.UTC(2026, 10, 23, 12));
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  let apiKey: string;

  beforeAll(async () => {
    server = await startTestServer(testDatabaseKinds()[0]!, {}, { clock, workers: false });
    const { ws, brandId } = await brandWithConnections(server, ['facebook', 'threads', 'linkedin']);
    apiKey = ws.api_key;
    const principal: Principal = { kind: 'api_key', workspaceId: ws.workspace_id, keyId: ws.key_id, role: 'admin', brandIds: null };
    await server.container.services.queue.setQueue(principal, ws.workspace_id, brandId, { time_zone: 'Europe/Oslo', slots: [] });
    const posts = [
      ['2026-11-24T09:00', 'Winter menu tasting this Thursday at the Grünerløkka shop'],
      ['2026-11-24T13:30', 'Behind the scenes: roasting the new Ethiopian beans'],
      ['2026-11-26T18:00', 'Live music night, doors at six'],
    ] as const;
    for (const [publish_at, text] of posts) {
      const res = await server.request('POST', `/api/v1/workspaces/${ws.workspace_id}/contents`, {
        key: ws.api_key,
        body: { brand_id: brandId, target_platforms: ['facebook', 'threads', 'linkedin'], content_type: 'text', text, publish_at },
      });
      expect(res.status, res.text).toBe(201);
    }
    ({ browser, page } = await openWatchedPage({ width: 1280, height: 900 }));
    await signIn(page, server.service.baseUrl, apiKey);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  /** Each post's link width and its title's number of lines, as laid out. */
  async function measured(): Promise<{ width: number; titleLines: number }[]> {
    // Run in the page as a string: the test's TypeScript has no DOM types.
    // The link is what the eye reads: a flex row around it once squeezed it to a sliver inside a wide item.
    return page.evaluate<{ width: number; titleLines: number }[]>(`[...document.querySelectorAll('.calendar li.post')].map((li) => {
      const title = li.querySelector('.post-text');
      const style = getComputedStyle(title);
      const lineHeight = parseFloat(style.lineHeight) || parseFloat(style.fontSize) * 1.2;
      return { width: li.querySelector('a').getBoundingClientRect().width, titleLines: Math.round(title.getBoundingClientRect().height / lineHeight) };
    })`);
  }

  for (const width of [1280, 1920]) {
    for (const view of ['week', 'month'] as const) {
      it(`${view} at ${width} px: each post is at least ${MIN_POST_WIDTH} px wide and its title takes at most ${MAX_TITLE_LINES} lines`, async () => {
        await page.setViewportSize({ width, height: 900 });
        await page.goto(`${server.service.baseUrl}/dashboard/calendar?view=${view}&date=2026-11-23`);
        const posts = await measured();
        expect(posts).toHaveLength(3);
        for (const post of posts) {
          expect(post.width, JSON.stringify(posts)).toBeGreaterThanOrEqual(MIN_POST_WIDTH);
          expect(post.titleLines, JSON.stringify(posts)).toBeLessThanOrEqual(MAX_TITLE_LINES);
        }
      });
    }
  }
});
