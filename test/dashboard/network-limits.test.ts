import { expect, it } from 'vitest';
import { PLATFORMS, type PlatformSlug } from '../../src/vocabulary/platforms.js';
import { byId, composer } from '../support/dashboard.js';
import { describeEachDb, type TestServer } from '../support/server.js';

/**
 * The later networks' limits at compose (src/vocabulary/platforms.ts), each refused next to the control it
 * concerns with 422 and nothing created, as compose.test.ts checks X's and Threads'.
 */

/** The compose form sent with these fields for the composer's brand; no answer may show a stack trace. */
async function limitsComposer(server: TestServer, connections: [PlatformSlug, string][]) {
  const c = await composer(server, connections);
  const send = async (fields: Record<string, string>) => {
    const answer = await c.send([['brand_id', c.brand.id], ...Object.entries(fields)]);
    expect(answer.html).not.toMatch(/\n\s+at .+\(.+:\d+:\d+\)/);
    return answer;
  };
  return { send, contents: c.contents };
}

describeEachDb('dashboard compose: the later networks’ limits', (server) => {
  it('TikTok: a text-only post is refused next to Networks, and a caption over 2,200 characters next to Text', async () => {
    expect(PLATFORMS.tiktok.limits.textMaxChars).toBe(2200);
    const { send, contents } = await limitsComposer(server(), [['tiktok', 'Acme on TikTok']]);
    const textOnly = await send({ target_platforms: 'tiktok', content_type: 'text', text: 'Words alone' });
    expect(textOnly.status).toBe(422);
    expect(byId(textOnly.html, 'networks-error')).toMatch(/TikTok .*does not publish content_type text/);
    expect(textOnly.html).toMatch(/id="platform-tiktok" name="target_platforms" value="tiktok" checked[^>]*aria-invalid="true"/);

    const caption = 'c'.repeat(2201);
    const long = await send({ target_platforms: 'tiktok', content_type: 'video', media_url: 'https://cdn.example.com/clip.mp4', text: caption });
    expect(long.status).toBe(422);
    expect(byId(long.html, 'text-error')).toBe('Too long for TikTok: 2,201 characters, the limit is 2,200. Shorten it, or untick this network.');
    expect(long.html).toMatch(/<textarea id="text" name="text"[^>]* aria-invalid="true">/);
    expect(long.html).toContain(caption);
    expect(await contents()).toHaveLength(0);
  });

  it('Pinterest: a description over 800 characters and a video pin’s title over 100 are each refused next to their field', async () => {
    expect([PLATFORMS.pinterest.limits.textMaxChars, PLATFORMS.pinterest.limits.titleMaxChars]).toEqual([800, 100]);
    const { send, contents } = await limitsComposer(server(), [['pinterest', 'Acme on Pinterest']]);
    const pin = { target_platforms: 'pinterest', content_type: 'photo', media_url: 'https://cdn.example.com/pin.jpg' };

    const description = await send({ ...pin, text: 'd'.repeat(801), title: 'A fine pin' });
    expect(description.status).toBe(422);
    expect(byId(description.html, 'text-error')).toBe('Too long for Pinterest: 801 characters, the limit is 800. Shorten it, or untick this network.');
    expect(byId(description.html, 'title-error')).toBeUndefined();

    // A photo pin's title is sent and checked too, as a video pin's is.
    for (const kind of [pin, { ...pin, content_type: 'video', media_url: 'https://cdn.example.com/pin.mp4' }]) {
      const title = await send({ ...kind, text: 'Fits', title: 't'.repeat(101) });
      expect(title.status).toBe(422);
      expect(byId(title.html, 'title-error')).toBe('The title is too long for Pinterest: 101 characters, the limit is 100.');
      expect(title.html).toMatch(/<input id="title" name="title"[^>]* aria-invalid="true">/);
      expect(byId(title.html, 'text-error')).toBeUndefined();
    }
    expect(await contents()).toHaveLength(0);
  });

  it('Mastodon on a sandbox connection: over 500 characters is refused next to Text, counted as Mastodon counts a link', async () => {
    expect(PLATFORMS.mastodon.limits.textMaxChars).toBe(500);
    const { send, contents } = await limitsComposer(server(), [['mastodon', 'Acme on Mastodon']]);
    const plain = await send({ target_platforms: 'mastodon', content_type: 'text', text: 'm'.repeat(501) });
    expect(plain.status).toBe(422);
    expect(byId(plain.html, 'text-error')).toMatch(/^Too long for Mastodon: 501 characters, the limit is 500\./);

    // A link counts as 23 characters whatever its length: 478 + 1 + 23 = 502.
    const linked = await send({ target_platforms: 'mastodon', content_type: 'text', text: `${'m'.repeat(478)} https://example.com/${'a'.repeat(100)}` });
    expect(linked.status).toBe(422);
    expect(byId(linked.html, 'text-error')).toMatch(/^Too long for Mastodon: 502 characters as Mastodon counts them, the limit is 500\./);
    expect(byId(linked.html, 'text-count')).toContain('Mastodon counts 502 of 500: too long');
    expect(await contents()).toHaveLength(0);
  });
});
