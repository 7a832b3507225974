import { Readable } from 'node:stream';
import { expect, it } from 'vitest';
import type { Principal } from '../../src/core/principal.js';
import type { PlatformSlug } from '../../src/vocabulary/platforms.js';
import { DashboardClient, textOf } from '../support/dashboard.js';
import { describeEachDb, type TestServer } from '../support/server.js';

/**
 * The guided composer and the interface's words, over real HTTP on each database:
 * networks by the brand's connections, fields by content type, per-network overrides reaching the core, every
 * refusal in one answer, Pay with under Advanced in English, the workspace's name in the header.
 */

async function composer(server: TestServer, connections: [PlatformSlug, string][]) {
  const ws = await server.workspace();
  const principal: Principal = { kind: 'api_key', workspaceId: ws.workspace_id, keyId: ws.key_id, role: 'admin', brandIds: null };
  const { services } = server.container;
  const brand = await services.brands.create(principal, ws.workspace_id, { name: 'Acme' });
  const other = await services.brands.create(principal, ws.workspace_id, { name: 'Bistro' });
  for (const [platform_slug, name] of connections) await services.connections.createSandbox(principal, ws.workspace_id, brand.id, { platform_slug, mode: 'sandbox', name });
  await services.connections.createSandbox(principal, ws.workspace_id, other.id, { platform_slug: 'instagram', mode: 'sandbox', name: '@bistro' });
  const client = new DashboardClient(server.url);
  await client.signIn(ws.api_key);
  const send = async (entries: [string, string][]): Promise<{ status: number; html: string; location: string | null }> => {
    const page = await client.get('/dashboard/compose');
    const form = new FormData();
    form.append('csrf', client.csrf!);
    form.append('idempotency_key', /name="idempotency_key" value="([^"]+)"/.exec(page.html)![1]!);
    for (const [name, value] of entries) form.append(name, value);
    const res = await client.raw('/dashboard/compose', { method: 'POST', body: form, redirect: 'manual' });
    return { status: res.status, html: await res.text(), location: res.headers.get('location') };
  };
  const contents = async () => (await services.contents.list(principal, ws.workspace_id, { limit: 100 })).data;
  return { ws, brand, other, client, send, contents };
}

function byId(html: string, id: string): string | undefined {
  const match = new RegExp(`id="${id}"[^>]*>([\\s\\S]*?)</(p|output|div)>`).exec(html);
  return match ? textOf(match[1]!) : undefined;
}

/** The network block of `slug`: its checkbox part and its Connect part, each with whether it is hidden. */
function network(html: string, slug: string): { pick: boolean; connect: boolean; brands: string } {
  const block = new RegExp(`<div class="network" data-network="${slug}" data-brands="([^"]*)">([\\s\\S]*?data-network-connect>)`).exec(html)!;
  return {
    brands: block[1]!,
    pick: !/<div class="field check" hidden data-network-pick>/.test(block[2]!),
    connect: !/<p class="connect" hidden data-network-connect>/.test(block[2]!),
  };
}

describeEachDb('dashboard guided composer', (server) => {
  it('offers only the networks the chosen brand is connected to; the others link to Connect on its card', async () => {
    const { brand, other, client, send } = await composer(server(), [
      ['threads', '@acme'],
      ['linkedin', 'Acme Inc'],
    ]);
    const page = await client.get('/dashboard/compose');
    // Two brands and none chosen yet: every network some brand can use is offered, with the brands it works for.
    expect(network(page.html, 'threads')).toEqual({ brands: brand.id, pick: true, connect: false });
    expect(network(page.html, 'instagram')).toEqual({ brands: other.id, pick: true, connect: false });
    expect(network(page.html, 'youtube')).toEqual({ brands: '', pick: false, connect: true });

    // A form sent for Acme comes back for Acme: Instagram (only Bistro's) offers Connect, to Acme's card.
    const refused = await send([
      ['brand_id', brand.id],
      ['content_type', 'text'],
      ['text', 'Hi'],
    ]);
    expect(refused.status).toBe(400);
    expect(network(refused.html, 'instagram')).toMatchObject({ pick: false, connect: true });
    expect(network(refused.html, 'threads')).toMatchObject({ pick: true, connect: false });
    expect(refused.html).toContain(`href="/dashboard/brands#brand-${brand.id}" data-connect-link>Connect<span class="vh"> Instagram</span> →</a>`);
    const brands = await client.get('/dashboard/brands');
    expect(brands.html).toContain(`<section class="card" id="brand-${brand.id}"`);
  });

  it('fields follow the content type, and what another type would use is not sent', async () => {
    const { brand, send, contents, client } = await composer(server(), [['threads', '@acme']]);
    const page = await client.get('/dashboard/compose');
    expect(page.html).toMatch(/<div data-show-when-type="photo video reel" data-show-when-network="youtube tiktok pinterest">\s*<div class="field">\s*<label for="title">/);
    expect(page.html).toMatch(/<div data-show-when-type="photo video reel">\s*<fieldset class="field"[^>]*>\s*<legend>Media<\/legend>/);
    expect(page.html).toMatch(/<div data-show-when-type="text photo video reel">\s*<div class="field">\s*<label for="text">/);
    expect(page.html).toMatch(/<div data-show-when-type="thread">/);
    // A thread with posts typed: the main text box (visible without scripts) and a stray title are left out.
    const sent = await send([
      ['brand_id', brand.id],
      ['target_platforms', 'threads'],
      ['content_type', 'thread'],
      ['text', 'typed before switching'],
      ['title', 'A title'],
      ['thread', 'First post'],
      ['thread', 'Second post'],
    ]);
    expect(sent.status).toBe(303);
    const [made] = await contents();
    expect(made!.thread).toEqual(['First post', 'Second post']);
    expect(made!.text).toBeNull();
    expect(made!.title).toBeNull();
  });

  it('per-network text reaches the core as overrides and is what each network publishes', async () => {
    const { brand, send, contents, client } = await composer(server(), [
      ['threads', '@acme'],
      ['linkedin', 'Acme Inc'],
    ]);
    const page = await client.get('/dashboard/compose');
    expect(page.html).toContain('<details class="overrides" data-show-when-type="text photo video reel">');
    expect(page.html).toMatch(/<fieldset class="tab-panel" id="override-linkedin" data-tab="linkedin" data-tab-label="LinkedIn">/);
    const sent = await send([
      ['brand_id', brand.id],
      ['target_platforms', 'threads'],
      ['target_platforms', 'linkedin'],
      ['content_type', 'text'],
      ['text', 'Short for Threads'],
      ['override_text_linkedin', 'A longer story for LinkedIn readers.'],
      // Not ticked: its override is not sent.
      ['override_text_facebook', 'Never sent'],
    ]);
    expect(sent.status).toBe(303);
    const [made] = await contents();
    expect(made!.text).toBe('Short for Threads');
    const stored = await server().container.db.kysely.selectFrom('contents').selectAll().where('id', '=', made!.content_id).executeTakeFirst();
    const request = JSON.stringify(stored);
    expect(request).toContain('A longer story for LinkedIn readers.');
    expect(request).not.toContain('Never sent');

    // The preview shows each network its own text.
    const previewed = await send([
      ['brand_id', brand.id],
      ['target_platforms', 'threads'],
      ['target_platforms', 'linkedin'],
      ['content_type', 'text'],
      ['text', 'Short for Threads'],
      ['override_text_linkedin', 'A longer story for LinkedIn readers.'],
      ['intent', 'preview'],
    ]);
    expect(previewed.status).toBe(200);
    expect(textOf(/<article class="mock mock-linkedin"[\s\S]*?<\/article>/.exec(previewed.html)![0])).toContain('A longer story for LinkedIn readers.');
    expect(textOf(/<article class="mock mock-threads"[\s\S]*?<\/article>/.exec(previewed.html)![0])).toContain('Short for Threads');
  });

  it('every refusal in one answer: a network without a connection, a text too long for Threads and a LinkedIn override too long', async () => {
    const { brand, send, contents } = await composer(server(), [
      ['threads', '@acme'],
      ['linkedin', 'Acme Inc'],
    ]);
    const sent = await send([
      ['brand_id', brand.id],
      ['target_platforms', 'facebook'],
      ['target_platforms', 'threads'],
      ['target_platforms', 'linkedin'],
      ['content_type', 'text'],
      ['text', 'x'.repeat(594)],
      ['override_text_linkedin', 'y'.repeat(3001)],
    ]);
    expect(sent.status).toBeGreaterThanOrEqual(400);
    const networks = byId(sent.html, 'networks-error') ?? '';
    expect(networks).toContain('Facebook Pages');
    expect(byId(sent.html, 'text-error')).toContain('Too long for Threads: 594 characters, the limit is 500.');
    expect(byId(sent.html, 'override-text-linkedin-error')).toContain('Too long for LinkedIn: 3,001 characters, the limit is 3,000.');
    expect(await contents()).toHaveLength(0);
  });

  it('a missing date and a network without a connection are said together', async () => {
    const { brand, send } = await composer(server(), [['threads', '@acme']]);
    const sent = await send([
      ['brand_id', brand.id],
      ['target_platforms', 'threads'],
      ['target_platforms', 'youtube'],
      ['content_type', 'video'],
      ['media_url', 'https://example.com/v.mp4'],
      ['when', 'schedule'],
    ]);
    expect(sent.status).toBe(400);
    expect(byId(sent.html, 'when-error')).toBe('Choose a date and a time.');
    expect(byId(sent.html, 'networks-error')).toContain('YouTube');
  });

  it('Pay with sits under Advanced, in English words; the header names the workspace', async () => {
    const { client } = await composer(server(), [['threads', '@acme']]);
    const page = await client.get('/dashboard/compose');
    expect(page.html).toMatch(/<details class="advanced">\s*<summary>Advanced<\/summary>[\s\S]*?<label for="modo">Pay with<\/label>/);
    const text = textOf(page.html);
    expect(text).toContain('The workspace default (Plan)');
    expect(text).toContain('Plan, then credits — the plan while it lasts, then credits');
    expect(page.html).not.toMatch(/>[^<]*\bmodo (plano|creditos|automatico)/);
    expect(page.html).toMatch(/<span class="ws" title="Workspace ws_[^"]+"><span class="vh">Workspace: <\/span>Test workspace[^<]*<\/span>/);
  });

  it('"Use in composer" from the media library: ?media_id= offers that upload ticked, with a media type', async () => {
    const { client } = await composer(server(), [['facebook', 'Acme page']]);
    const page = await client.get('/dashboard/compose?media_id=media_abc123&content_type=video');
    expect(page.html).toContain('<input id="media-kept-1" name="media_id" type="checkbox" value="media_abc123" checked');
    expect(page.html).toContain('<option value="video" selected>');
    const photo = await client.get('/dashboard/compose?media_id=media_abc123&content_type=nonsense');
    expect(photo.html).toContain('<option value="photo" selected>');
    const plain = await client.get('/dashboard/compose');
    expect(plain.html).not.toContain('name="media_id"');
  });

  it('the preview draws an uploaded photo in each network’s frame: 4:5 on Instagram, 1.91:1 on LinkedIn', async () => {
    const { ws, brand, send, contents } = await composer(server(), [
      ['instagram', '@acme'],
      ['linkedin', 'Acme Inc'],
    ]);
    const principal: Principal = { kind: 'api_key', workspaceId: ws.workspace_id, keyId: ws.key_id, role: 'admin', brandIds: null };
    // A JPEG, the one photo type Instagram takes.
    const jpeg = Buffer.from('/9j/4AAQSkZJRgABAQEASABIAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////wgALCAABAAEBAREA/8QAFBABAAAAAAAAAAAAAAAAAAAAAP/aAAgBAQABPxA=', 'base64');
    const uploaded = await server().container.services.media.upload(principal, ws.workspace_id, 'image/jpeg', Readable.from([jpeg]));
    const sent = await send([
      ['brand_id', brand.id],
      ['target_platforms', 'instagram'],
      ['target_platforms', 'linkedin'],
      ['content_type', 'photo'],
      ['media_id', uploaded.id],
      ['text', 'A caption that is long enough to be folded on Instagram, which shows about one hundred and twenty-five characters first, then a link to see more.'],
      ['intent', 'preview'],
    ]);
    expect(sent.status).toBe(200);
    const insta = /<article class="mock mock-instagram"[\s\S]*?<\/article>/.exec(sent.html)![0];
    const linked = /<article class="mock mock-linkedin"[\s\S]*?<\/article>/.exec(sent.html)![0];
    expect(insta).toMatch(/<div class="crop crop-4x5" role="img" aria-label="photo 1, cropped to 4:5"><img src="[^"]*\/media\/[^"]+" alt=""><\/div>/);
    expect(linked).toMatch(/<div class="crop crop-191x1" role="img" aria-label="photo 1, cropped to 1.91:1"><img src=/);
    // Instagram folds this caption; LinkedIn (about 210 characters) shows it whole.
    expect(insta).toContain('…see more');
    expect(linked).not.toContain('…see more');
    expect(await contents()).toHaveLength(0);
  });
});
