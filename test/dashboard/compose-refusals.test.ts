import { expect, it } from 'vitest';
import type { Principal } from '../../src/core/principal.js';
import type { PlatformSlug } from '../../src/vocabulary/platforms.js';
import { DashboardClient, textOf } from '../support/dashboard.js';
import { describeEachDb, type TestServer } from '../support/server.js';

/**
 * The compose form pre-checks only what the core cannot say (the Brand select left on “Choose…”); every other
 * refusal comes from the schema or the core and must still land next to the control it concerns.
 */

async function composer(server: TestServer, connections: [PlatformSlug, string][]) {
  const ws = await server.workspace();
  const principal: Principal = { kind: 'api_key', workspaceId: ws.workspace_id, keyId: ws.key_id };
  const { services } = server.container;
  const brand = await services.brands.create(principal, ws.workspace_id, { name: 'Acme' });
  for (const [platform_slug, name] of connections) await services.connections.createSandbox(principal, ws.workspace_id, brand.id, { platform_slug, mode: 'sandbox', name });
  const client = new DashboardClient(server.url);
  await client.signIn(ws.api_key);

  /** Sends the form as a browser would: the CSRF token first, then the key the page rendered (or `key`). */
  const send = async (entries: ([string, string] | [string, Blob, string])[], key?: string): Promise<{ status: number; html: string }> => {
    const page = await client.get('/dashboard/compose');
    const form = new FormData();
    form.append('csrf', client.csrf!);
    form.append('idempotency_key', key ?? /name="idempotency_key" value="([^"]+)"/.exec(page.html)![1]!);
    for (const entry of entries) {
      if (entry.length === 3) form.append(entry[0], entry[1], entry[2]);
      else form.append(entry[0], entry[1]);
    }
    const res = await client.raw('/dashboard/compose', { method: 'POST', body: form });
    return { status: res.status, html: await res.text() };
  };
  const contents = async () => (await services.contents.list(principal, ws.workspace_id, { limit: 100 })).data;
  const mediaRows = () => server.container.db.kysely.selectFrom('media').selectAll().where('workspace_id', '=', ws.workspace_id).execute();
  return { brand, send, contents, mediaRows };
}

/** The text of the element with this id (an error paragraph). */
function byId(html: string, id: string): string | undefined {
  const match = new RegExp(`id="${id}"[^>]*>([\\s\\S]*?)</(p|output|div)>`).exec(html);
  return match ? textOf(match[1]!) : undefined;
}

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
      const banner = textOf(/<div class="error-banner" role="alert">[\s\S]*?<\/div>/.exec(sent.html)![0]);
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
