import { expect, it } from 'vitest';
import { byId, composer } from '../support/dashboard.js';
import { describeEachDb } from '../support/server.js';

/** Compose offers TikTok's own choices (privacy, comments, duets, stitches) with nothing chosen beforehand. */
describeEachDb('dashboard compose: the creator’s TikTok choices', (server) => {
  it('shows the choices unpicked, and sends the ones picked with the content', async () => {
    const c = await composer(server(), [['tiktok', 'Acme on TikTok']]);
    const page = await c.send([['brand_id', c.brand.id], ['target_platforms', 'tiktok'], ['content_type', 'video'], ['media_url', 'https://cdn.example.com/x'], ['text', '']]);
    // Nothing is preselected: no privacy level selected, no interaction radio checked.
    const fieldset = /<fieldset class="tiktok-choices[^]*?Stitches[^]*?<\/fieldset>/.exec(page.html)?.[0] ?? '';
    expect(fieldset).toContain('Who can see this post');
    expect(fieldset).toContain('<option value="" selected>Choose…</option>');
    expect(fieldset).not.toMatch(/<option value="[A-Z_]+" selected>/);
    expect(fieldset).not.toContain(' checked');

    const sent = await c.send([
      ['brand_id', c.brand.id],
      ['target_platforms', 'tiktok'],
      ['content_type', 'video'],
      ['media_file', new Blob([Buffer.alloc(64)], { type: 'video/mp4' }), 'clip.mp4'],
      ['text', 'A clip'],
      ['tiktok_privacy_level', 'FOLLOWER_OF_CREATOR'],
      ['tiktok_allow_comment', 'true'],
      ['tiktok_allow_duet', 'false'],
      ['tiktok_allow_stitch', 'true'],
    ]);
    expect(byId(sent.html, 'tiktok-choices-error')).toBeUndefined();
    const rows = await server().container.db.kysely.selectFrom('contents').select('request').execute();
    const stored = rows.map((r) => JSON.parse(r.request) as { targets: { platform: string; tiktok?: unknown }[] }).flatMap((r) => r.targets);
    expect(stored).toContainEqual(expect.objectContaining({ platform: 'tiktok', tiktok: { privacy_level: 'FOLLOWER_OF_CREATOR', allow_comment: true, allow_duet: false, allow_stitch: true } }));
  });
});
