import { expect, it } from 'vitest';
import { byId, composer, textOf } from '../support/dashboard.js';
import { describeEachDb } from '../support/server.js';

/**
 * The compose form pre-checks only what the core cannot say (the Brand select left on “Choose…”); every other
 * refusal comes from the schema or the core and must still land next to the control it concerns.
 */

describeEachDb('dashboard compose refusals', (server) => {
  it('no brand chosen and no network ticked: both errors at once, each next to its control, 400', async () => {
    const { send, contents } = await composer(server(), [['threads', 'Acme threads']]);
    const sent = await send([
      ['brand_id', ''],
      ['content_type', 'text'],
      ['text', 'Hello'],
    ]);
    expect(sent.status).toBe(400);
    expect(byId(sent.html, 'brand_id-error')).toBe('Choose a brand.');
    expect(byId(sent.html, 'networks-error')).toBe('Choose at least one network.');
    expect(await contents()).toHaveLength(0);
  });

  it('a brand that no longer exists is refused by the core next to Brand', async () => {
    const { send } = await composer(server(), [['threads', 'Acme threads']]);
    const sent = await send([
      ['brand_id', 'brand_gone'],
      ['target_platforms', 'threads'],
      ['content_type', 'text'],
      ['text', 'Hello'],
    ]);
    expect(sent.status).toBe(404);
    expect(byId(sent.html, 'brand_id-error')).toContain('brand_gone was not found');
    expect(sent.html).toMatch(/<select id="brand_id" name="brand_id"[^>]*aria-invalid="true">/);
  });

  it('a network the brand has no connection on is refused by the core next to that network', async () => {
    const { brand, send, contents } = await composer(server(), [['threads', 'Acme threads']]);
    const sent = await send([
      ['brand_id', brand.id],
      ['target_platforms', 'threads'],
      ['target_platforms', 'linkedin'],
      ['content_type', 'text'],
      ['text', 'Hello'],
    ]);
    expect(sent.status).toBe(400);
    expect(byId(sent.html, 'networks-error')).toMatch(/^LinkedIn: .*no active connection on linkedin/);
    expect(sent.html).toMatch(/id="platform-linkedin"[^>]*aria-invalid="true"/);
    expect(sent.html).not.toMatch(/id="platform-threads"[^>]*aria-invalid="true"/);
    expect(await contents()).toHaveLength(0);
  });

  it('a thread without posts is refused next to the thread posts', async () => {
    const { brand, send } = await composer(server(), [['threads', 'Acme threads']]);
    const sent = await send([
      ['brand_id', brand.id],
      ['target_platforms', 'threads'],
      ['content_type', 'thread'],
      ['thread', ''],
    ]);
    expect(sent.status).toBe(400);
    expect(byId(sent.html, 'thread-error')).toMatch(/needs `thread`/);
  });

  it('a photo without media is refused next to Media', async () => {
    const { brand, send } = await composer(server(), [['facebook', 'Acme page']]);
    const sent = await send([
      ['brand_id', brand.id],
      ['target_platforms', 'facebook'],
      ['content_type', 'photo'],
      ['media_url', ''],
    ]);
    expect(sent.status).toBe(400);
    expect(byId(sent.html, 'media-error')).toMatch(/needs at least one media item/);
  });

  it('a malformed idempotency key is refused in a banner with 400, not dropped: nothing published, no upload stored', async () => {
    const { brand, send, contents, mediaRows } = await composer(server(), [['facebook', 'Acme page']]);
    const fields: [string, string][] = [
      ['brand_id', brand.id],
      ['target_platforms', 'facebook'],
      ['content_type', 'text'],
      ['text', 'Hello'],
    ];
    for (const key of ['has spaces in it', 'k'.repeat(256), 'clé']) {
      const sent = await send(fields, key);
      expect(sent.status, key).toBe(400);
      const banner = textOf(/<div class="error-banner" role="alert"[^>]*>[\s\S]*?<\/div>/.exec(sent.html)![0]);
      expect(banner).toContain('idempotency key was refused: it must be 1 to 255 printable ASCII characters');
      // The values come back, with a fresh, valid key to send them again.
      expect(sent.html).toContain('>\nHello</textarea>');
      expect(/name="idempotency_key" value="([^"]+)"/.exec(sent.html)![1]).toMatch(/^[0-9a-f-]{36}$/);
    }
    const photo = await send(
      [
        ['brand_id', brand.id],
        ['target_platforms', 'facebook'],
        ['content_type', 'photo'],
        ['media_file', new Blob([Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64')], { type: 'image/png' }), 'dot.png'],
      ],
      'has spaces in it',
    );
    expect(photo.status).toBe(400);
    expect(textOf(photo.html)).toContain('choose the file again');
    expect(await mediaRows()).toHaveLength(0);
    expect(await contents()).toHaveLength(0);
    // The same form with a valid key publishes.
    expect((await send(fields)).status).toBe(303);
  });
});
