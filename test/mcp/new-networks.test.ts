import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Connection } from '../../src/core/connections/connections.schema.js';
import { ManualClock } from '../../src/core/clock.js';
import { PLATFORMS, type PlatformSlug } from '../../src/vocabulary/platforms.js';
import { startMediaHost } from '../support/factories.js';
import { describeEachDb } from '../support/server.js';
import { call, callFailing, closeClientsAfterEach, connect } from './tool-calls.js';

/**
 * The five later networks through the MCP door, as an assistant meets them: a sandbox connection, a post that
 * fits exactly at the network's own limits and is published, and one character more refused as the tool's
 * error result carrying the REST error body. Each network counts in its own way (X's weights and links as 23,
 * Bluesky's graphemes, Mastodon's links and remote mentions), so a count wrong at this door shows here.
 */

closeClientsAfterEach();

let media: Awaited<ReturnType<typeof startMediaHost>>;
beforeAll(async () => {
  media = await startMediaHost();
});
afterAll(() => media.close());

type Args = Record<string, unknown>;

interface Refusal {
  /** What the over-limit field is, for the failure message. */
  what: string;
  args: Args;
  path: string;
  limit: number;
  length: number;
}

interface Case {
  /** A post exactly at the network's limits, which it publishes. */
  fits: Args;
  over: Refusal[];
  /** Content types the network refuses (platform_not_supported). */
  refusedTypes: string[];
}

const limits = (slug: PlatformSlug) => PLATFORMS[slug].limits;
const family = '👨\u200d👩\u200d👧';
const link = `https://example.com/${'a'.repeat(200)}`;
const video = () => ({ content_type: 'video', media: [{ url: `${media.url}/video.mp4` }] });
const photo = () => ({ content_type: 'photo', media: [{ url: `${media.url}/photo.jpg` }] });

/** Built when a test runs: the media addresses exist only once the media host listens. */
const CASES: Record<'x' | 'bluesky' | 'mastodon' | 'tiktok' | 'pinterest', () => Case> = {
  x: () => ({
    // 256 letters, a space and a 220-character link weighing 23 make 280; one more letter makes 281.
    fits: { content_type: 'text', text: `${'a'.repeat(256)} ${link}` },
    over: [
      { what: 'text (a link weighs 23)', args: { content_type: 'text', text: `${'a'.repeat(257)} ${link}` }, path: 'text', limit: limits('x').textMaxChars, length: 281 },
      { what: 'text (CJK weighs 2)', args: { content_type: 'text', text: '漢'.repeat(141) }, path: 'text', limit: limits('x').textMaxChars, length: 282 },
    ],
    refusedTypes: [],
  }),
  bluesky: () => ({
    // Each family emoji is one grapheme of five code points.
    fits: { content_type: 'text', text: family.repeat(300) },
    over: [{ what: 'text (graphemes)', args: { content_type: 'text', text: family.repeat(301) }, path: 'text', limit: limits('bluesky').textMaxChars, length: 301 }],
    refusedTypes: [],
  }),
  mastodon: () => ({
    // A link counts 23 and another server's account its local part only: 23 + 8 (" @alice ") + 469 = 500.
    fits: { content_type: 'text', text: `${link} @alice@example.social ${'m'.repeat(469)}` },
    over: [{ what: 'text', args: { content_type: 'text', text: `${link} @alice@example.social ${'m'.repeat(470)}` }, path: 'text', limit: limits('mastodon').textMaxChars, length: 501 }],
    refusedTypes: [],
  }),
  tiktok: () => ({
    fits: { ...video(), text: 'c'.repeat(2200), title: 't'.repeat(90) },
    over: [
      { what: 'caption', args: { ...video(), text: 'c'.repeat(2201) }, path: 'text', limit: limits('tiktok').textMaxChars, length: 2201 },
      { what: 'title', args: { ...photo(), text: 'a photo', title: 't'.repeat(91) }, path: 'title', limit: limits('tiktok').titleMaxChars ?? 0, length: 91 },
    ],
    refusedTypes: ['text', 'thread'],
  }),
  pinterest: () => ({
    fits: { ...photo(), text: 'd'.repeat(800), title: 't'.repeat(100) },
    over: [
      { what: 'description', args: { ...photo(), text: 'd'.repeat(801) }, path: 'text', limit: limits('pinterest').textMaxChars, length: 801 },
      { what: 'title', args: { ...video(), title: 't'.repeat(101) }, path: 'title', limit: limits('pinterest').titleMaxChars ?? 0, length: 101 },
    ],
    refusedTypes: ['text', 'thread', 'reel'],
  }),
};
const SLUGS = Object.keys(CASES) as (keyof typeof CASES)[];

describeEachDb(
  'MCP: the later networks and their own limits',
  (server) => {
    it("the limits tested are the platform table's (X 280, Bluesky 300, Mastodon 500, TikTok 2,200 and 90, Pinterest 800 and 100)", () => {
      expect(SLUGS.map((slug) => [slug, limits(slug).textMaxChars, limits(slug).titleMaxChars])).toEqual([
        ['x', 280, null],
        ['bluesky', 300, null],
        ['mastodon', 500, null],
        ['tiktok', 2200, 90],
        ['pinterest', 800, 100],
      ]);
    });

    for (const slug of SLUGS) {
      it(`${PLATFORMS[slug].name}: a post at the limit publishes to a sandbox connection; over it, caption_too_long as an isError result`, async () => {
        const c = CASES[slug]();
        const ws = await server().workspace();
        const client = await connect(server(), ws.api_key);
        const brand = await call<{ id: string }>(client, 'create_brand', { name: `On ${slug}` });
        const conn = await call<Connection>(client, 'add_sandbox_connection', { brand_id: brand.id, platform_slug: slug, mode: 'sandbox', name: `@acme-${slug}` });
        expect(conn).toMatchObject({ platform_slug: slug, mode: 'sandbox', status: 'active' });
        const target = { brand_id: brand.id, target_platforms: [slug] };
        const name = PLATFORMS[slug].name;

        for (const refusal of c.over) {
          const body = await callFailing(client, 'publish_content', { ...target, ...refusal.args });
          expect(body, refusal.what).toEqual({
            error: 'caption_too_long',
            message: expect.stringContaining(`has ${refusal.length} characters; the limit is ${refusal.limit}.`),
            request_id: expect.stringMatching(/^req_/),
            platform_slug: slug,
            limit: refusal.limit,
            fields: [{ path: refusal.path, message: expect.stringMatching(new RegExp(`^has ${refusal.length} characters; the limit for ${name} \\(${slug}\\) is ${refusal.limit}\\.`)) }],
          });
        }
        for (const type of c.refusedTypes) {
          const words = type === 'thread' ? { thread: ['one', 'two'] } : { text: 'words only' };
          const body = await callFailing(client, 'publish_content', { ...target, content_type: type, ...words });
          expect(body, type).toEqual({
            error: 'platform_not_supported',
            message: expect.stringContaining(`does not publish content_type ${type}`),
            request_id: expect.stringMatching(/^req_/),
            platform_slug: slug,
          });
        }
        // Refusals store nothing.
        expect(await call<{ data: unknown[] }>(client, 'list_contents', {})).toMatchObject({ data: [] });

        const created = await call<{ content_id: string; jobs: { platform_slug: string; connection_id: string }[] }>(client, 'publish_content', {
          ...target,
          ...c.fits,
          idempotency_key: `at-limit-${slug}`,
        });
        expect(created.jobs).toEqual([expect.objectContaining({ platform_slug: slug, connection_id: conn.id })]);
        await server().settle();
        const content = await call<{ status: string; jobs: { status: string; external_post_url: string | null }[] }>(client, 'get_content', { content_id: created.content_id });
        expect(content.status, JSON.stringify(content.jobs)).toBe('published');
        expect(content.jobs).toHaveLength(1);
        expect(content.jobs[0]?.status).toBe('published');
        expect(content.jobs[0]?.external_post_url?.startsWith(PLATFORMS[slug].postUrlBase), content.jobs[0]?.external_post_url ?? '').toBe(true);
      });
    }
  },
  { ALLOW_LOCAL_URLS: 'true' },
  () => ({ clock: new ManualClock(Date.UTC(2026, 10, 21, 12)), workers: false }),
);
