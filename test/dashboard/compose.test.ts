import { expect, it } from 'vitest';
import type { Principal } from '../../src/core/principal.js';
import type { PlatformSlug } from '../../src/vocabulary/platforms.js';
import { DashboardClient, textOf } from '../support/dashboard.js';
import { startMediaHost } from '../support/factories.js';
import { describeEachDb, type TestServer } from '../support/server.js';

/** A 1×1 transparent PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

type Entry = [name: string, value: string] | [name: string, value: Blob, filename: string];

interface Sent {
  status: number;
  /** Where a 303 sent us, or null when the form came back. */
  location: string | null;
  html: string;
}

async function composer(server: TestServer, connections: [PlatformSlug, string][]) {
  const ws = await server.workspace();
  const principal: Principal = { kind: 'api_key', workspaceId: ws.workspace_id, keyId: ws.key_id, role: 'admin', brandIds: null };
  const { services } = server.container;
  const brand = await services.brands.create(principal, ws.workspace_id, { name: 'Acme' });
  const conns = [];
  for (const [platform_slug, name] of connections) conns.push(await services.connections.createSandbox(principal, ws.workspace_id, brand.id, { platform_slug, mode: 'sandbox', name }));
  const client = new DashboardClient(server.url);
  await client.signIn(ws.api_key);

  /** Opens the page and sends its form as multipart, the CSRF token first, like a browser. */
  const send = async (entries: Entry[], options: { csrf?: string | null; idempotencyKey?: string } = {}): Promise<Sent> => {
    const page = await client.get('/dashboard/compose');
    const key = options.idempotencyKey ?? /name="idempotency_key" value="([^"]+)"/.exec(page.html)![1]!;
    const form = new FormData();
    const csrf = options.csrf === undefined ? client.csrf! : options.csrf;
    if (csrf !== null) form.append('csrf', csrf);
    form.append('idempotency_key', key);
    for (const entry of entries) {
      if (entry.length === 3) form.append(entry[0], entry[1], entry[2]);
      else form.append(entry[0], entry[1]);
    }
    const res = await client.raw('/dashboard/compose', { method: 'POST', body: form });
    if (res.status === 303) {
      const location = res.headers.get('location')!;
      const next = await client.get(location);
      return { status: 303, location, html: next.html };
    }
    const html = await res.text();
    expect(html).not.toMatch(/\n\s+at .+\(.+:\d+:\d+\)/);
    return { status: res.status, location: null, html };
  };

  const contents = async () => (await services.contents.list(principal, ws.workspace_id, { limit: 100 })).data;
  const mediaRows = () => server.container.db.kysely.selectFrom('media').selectAll().where('workspace_id', '=', ws.workspace_id).execute();
  return { ws, principal, brand, conns, client, send, contents, mediaRows };
}

/** The text of the element with this id (an error paragraph, a counter). */
function byId(html: string, id: string): string | undefined {
  const match = new RegExp(`id="${id}"[^>]*>([\\s\\S]*?)</(p|output|div)>`).exec(html);
  return match ? textOf(match[1]!) : undefined;
}

const contentIdOf = (location: string | null) => /^\/dashboard\/contents\/([0-9a-f-]{36})$/.exec(location ?? '')?.[1];

describeEachDb('dashboard compose', (server) => {
  it('renders one multipart form, CSRF token first, with the labelled fields and the live counter', async () => {
    const { client } = await composer(server(), [['threads', 'Acme threads']]);
    const page = await client.get('/dashboard/compose');
    expect(page.status).toBe(200);
    const form = /<form method="post" action="\/dashboard\/compose" enctype="multipart\/form-data"[^>]*>\s*<input type="hidden" name="csrf" value="[^"]+">\s*<input type="hidden" name="idempotency_key" value="[0-9a-f-]{36}">/.exec(page.html);
    expect(form, 'csrf, then the idempotency key, open the form').not.toBeNull();
    for (const label of ['Brand', 'Facebook Pages', 'Threads', 'Instagram', 'YouTube', 'LinkedIn', 'Content type', 'Text', 'Title', 'Upload files', 'Media URL 1', 'Pay with', 'Post 1']) {
      expect(page.html, label).toMatch(new RegExp(`<label for="[^"]+">${label}</label>`));
    }
    expect(page.html).toContain('<legend>Networks</legend>');
    expect(page.html).toContain('<legend>Media</legend>');
    expect(page.html).toMatch(/<select id="content_type" name="content_type"/);
    expect(page.html).toMatch(/<textarea id="text" name="text"/);
    expect(page.html).toMatch(/<output class="counter" id="text-count" data-counter-for="text" data-limits="\{&quot;instagram&quot;:2200,/);
    expect(page.html).toContain('data-thread-editor data-max="25"');
    expect(page.html).toMatch(/<button type="submit" class="primary">Publish<\/button>/);
    expect(page.html).toContain('name="intent" value="preview"');
    // A fresh key per render, so two renders never share one.
    const again = await client.get('/dashboard/compose');
    const key = (html: string) => /name="idempotency_key" value="([^"]+)"/.exec(html)![1];
    expect(key(again.html)).not.toBe(key(page.html));
  });

  it('without a brand, points to Brands & connections instead of showing the form', async () => {
    const ws = await server().workspace();
    const client = new DashboardClient(server().url);
    await client.signIn(ws.api_key);
    const page = await client.get('/dashboard/compose');
    expect(page.html).not.toContain('enctype="multipart/form-data"');
    expect(page.html).toContain('href="/dashboard/brands"');
  });

  it('publishes to two networks: a redirect to the content, a flash, and two jobs in the API', async () => {
    const { ws, brand, send } = await composer(server(), [['facebook', 'Acme page'], ['threads', 'Acme threads']]);
    const sent = await send([
      ['brand_id', brand.id],
      ['target_platforms', 'facebook'],
      ['target_platforms', 'threads'],
      ['content_type', 'text'],
      ['text', 'Hello from the dashboard'],
      ['thread', ''],
      ['media_url', ''],
      ['modo', ''],
    ]);
    expect(sent.status).toBe(303);
    const id = contentIdOf(sent.location);
    expect(id).toBeDefined();
    expect(textOf(sent.html)).toContain('Sent to 2 networks: each one’s progress is below.');
    const api = await server().request<{ text: string; jobs: { platform_slug: string }[] }>('GET', `/api/v1/workspaces/${ws.workspace_id}/contents/${id}`, { key: ws.api_key });
    expect(api.status).toBe(200);
    expect(api.body.text).toBe('Hello from the dashboard');
    expect(api.body.jobs.map((j) => j.platform_slug).sort()).toEqual(['facebook', 'threads']);
  });

  it('a replayed submit with the same Idempotency-Key returns the same content and publishes once', async () => {
    const { brand, send, contents } = await composer(server(), [['threads', 'Acme threads']]);
    const fields: Entry[] = [
      ['brand_id', brand.id],
      ['target_platforms', 'threads'],
      ['content_type', 'text'],
      ['text', 'Only once'],
    ];
    const key = crypto.randomUUID();
    const first = await send(fields, { idempotencyKey: key });
    const second = await send(fields, { idempotencyKey: key });
    expect(first.status).toBe(303);
    expect(second.location).toBe(first.location);
    expect(textOf(second.html)).toContain('already sent');
    expect(await contents()).toHaveLength(1);
  });

  it('a double click on a form with a file uploads it once and publishes once', async () => {
    const { brand, send, contents, mediaRows } = await composer(server(), [['facebook', 'Acme page']]);
    const fields: Entry[] = [
      ['brand_id', brand.id],
      ['target_platforms', 'facebook'],
      ['content_type', 'photo'],
      ['media_file', new Blob([PNG], { type: 'image/png' }), 'dot.png'],
    ];
    const key = crypto.randomUUID();
    const [a, b] = await Promise.all([send(fields, { idempotencyKey: key }), send(fields, { idempotencyKey: key })]);
    expect([a.status, b.status]).toEqual([303, 303]);
    expect(a.location).toBe(b.location);
    expect(await contents()).toHaveLength(1);
    expect(await mediaRows()).toHaveLength(1);
  });

  it('Preview with a file says truthfully that the file went to the media library, and publishes nothing', async () => {
    const { brand, send, contents, mediaRows } = await composer(server(), [['facebook', 'Acme page']]);
    const sent = await send([
      ['brand_id', brand.id],
      ['target_platforms', 'facebook'],
      ['content_type', 'photo'],
      ['media_file', new Blob([PNG], { type: 'image/png' }), 'dot.png'],
      ['intent', 'preview'],
    ]);
    expect(sent.status).toBe(200);
    const status = textOf(/<section class="card" aria-labelledby="preview-h"[^>]*>[\s\S]*?<\/p>/.exec(sent.html)![0]);
    expect(status).toContain('Nothing was published or counted on your plan. The file you chose was added to your media library (it counts on your media storage) and stays ticked below.');
    const [row] = await mediaRows();
    expect(sent.html).toMatch(new RegExp(`name="media_id" type="checkbox" value="${row!.id}" checked`));
    expect(await contents()).toHaveLength(0);
  });

  it('a Threads text over 500 characters is refused next to Text with 422, values kept, nothing created', async () => {
    const { brand, send, contents } = await composer(server(), [['threads', 'Acme threads']]);
    const long = `${'Long sentence here. '.repeat(30)}end`;
    const sent = await send([
      ['brand_id', brand.id],
      ['target_platforms', 'threads'],
      ['content_type', 'text'],
      ['text', long],
    ]);
    expect(sent.status).toBe(422);
    const error = byId(sent.html, 'text-error');
    expect(error).toMatch(/Too long for Threads: 603 characters, the limit is 500/);
    expect(sent.html).toMatch(/<textarea id="text" name="text"[^>]* aria-describedby="text-hint text-count text-error" aria-invalid="true">/);
    expect(sent.html).toContain(long);
    expect(sent.html).toMatch(/id="platform-threads" name="target_platforms" value="threads" checked/);
    expect(byId(sent.html, 'text-count')).toContain('Threads 500: too long');
    expect(await contents()).toHaveLength(0);
  });

  it('a text that fits in characters but not as X counts them is refused with X\'s own count, and the counter shows each network\'s count', async () => {
    const { brand, send, contents } = await composer(server(), [
      ['x', 'Acme on X'],
      ['bluesky', 'Acme on Bluesky'],
    ]);
    // 200 characters: within X's 280 and Bluesky's 300, but X weighs each of these as 2.
    const wide = '漢'.repeat(200);
    const sent = await send([
      ['brand_id', brand.id],
      ['target_platforms', 'x'],
      ['target_platforms', 'bluesky'],
      ['content_type', 'text'],
      ['text', wide],
    ]);
    expect(sent.status).toBe(422);
    expect(byId(sent.html, 'text-error')).toMatch(/^Too long for X: 400 characters as X counts them, the limit is 280\./);
    const counter = textOf(byId(sent.html, 'text-count') ?? '');
    expect(counter).toMatch(/^200 characters — /);
    expect(counter).toContain('X counts 400 of 280: too long');
    expect(counter).toContain('Bluesky 300');
    expect(counter).not.toContain('Bluesky 300: too long');
    // The per-network box counts as its network does, and tells the page script how.
    expect(sent.html).toMatch(/<output class="counter" id="override-text-x-count" data-counter-for="override-text-x" data-limit="280" data-counting="x_weighted">0 characters/);
    expect(sent.html).toMatch(/data-countings="\{[^"]*&quot;x&quot;:&quot;x_weighted&quot;/);
    expect(await contents()).toHaveLength(0);
  });

  it('no network chosen: the error is next to Networks with 400', async () => {
    const { brand, send, contents } = await composer(server(), [['threads', 'Acme threads']]);
    const sent = await send([
      ['brand_id', brand.id],
      ['content_type', 'text'],
      ['text', 'Hello'],
    ]);
    expect(sent.status).toBe(400);
    expect(byId(sent.html, 'networks-error')).toBe('Choose at least one network.');
    expect(sent.html).toMatch(/id="platform-threads"[^>]*aria-invalid="true"/);
    expect(await contents()).toHaveLength(0);
  });

  it('a network the content type does not fit is refused next to Networks', async () => {
    const { brand, send } = await composer(server(), [['threads', 'Acme threads']]);
    const sent = await send([
      ['brand_id', brand.id],
      ['target_platforms', 'threads'],
      ['content_type', 'reel'],
      ['media_url', 'https://cdn.example.com/clip.mp4'],
    ]);
    expect(sent.status).toBe(422);
    expect(byId(sent.html, 'networks-error')).toMatch(/Threads .*does not publish content_type reel/);
  });

  it('two connections on one network: the connection choice appears, is required, and the chosen one publishes', async () => {
    const { ws, brand, conns, client, send } = await composer(server(), [['threads', 'Main account'], ['threads', 'Second account']]);
    const page = await client.get('/dashboard/compose');
    expect(page.html).toMatch(/<label for="connection-1">Connection for Threads \(Acme\)<\/label>/);
    const base: Entry[] = [
      ['brand_id', brand.id],
      ['target_platforms', 'threads'],
      ['content_type', 'text'],
      ['text', 'Which account?'],
    ];
    const unchosen = await send([...base, ['connection', '']]);
    expect(unchosen.status).toBe(422);
    const error = byId(unchosen.html, 'connections-error')!;
    expect(error).toContain('Main account');
    expect(error).toContain('Second account');
    expect(unchosen.html).toMatch(/<select id="connection-1" name="connection" aria-describedby="connections-error" aria-invalid="true">/);
    const second = conns[1]!;
    const chosen = await send([...base, ['connection', second.id]]);
    expect(chosen.status).toBe(303);
    const api = await server().request<{ jobs: { connection_id: string }[] }>('GET', `/api/v1/workspaces/${ws.workspace_id}/contents/${contentIdOf(chosen.location)}`, { key: ws.api_key });
    expect(api.body.jobs.map((j) => j.connection_id)).toEqual([second.id]);
  });

  it('several files chosen at once are each stored as an upload and published in the order chosen', async () => {
    const { brand, send, mediaRows, contents } = await composer(server(), [['facebook', 'Acme page']]);
    const page = await (await composer(server(), [['facebook', 'Acme page']])).client.get('/dashboard/compose');
    expect(page.html).toMatch(/<input id="media_file" name="media_file" type="file" multiple accept="image\/\*,video\/\*"/);
    // Three PNGs told apart by their sizes (bytes after the image end are ignored by decoders).
    const files = [PNG, Buffer.concat([PNG, Buffer.alloc(7)]), Buffer.concat([PNG, Buffer.alloc(3)])];
    const sent = await send([
      ['brand_id', brand.id],
      ['target_platforms', 'facebook'],
      ['content_type', 'photo'],
      ['text', 'Three dots'],
      ...files.map((bytes, i): Entry => ['media_file', new Blob([bytes], { type: 'image/png' }), `dot-${i}.png`]),
    ]);
    expect(sent.status, sent.html.slice(0, 300)).toBe(303);
    expect(await mediaRows()).toHaveLength(3);
    const stored = await server().container.db.kysely.selectFrom('contents').select('request').where('id', '=', contentIdOf(sent.location)!).executeTakeFirstOrThrow();
    expect((JSON.parse(stored.request).media as { sizeBytes: number }[]).map((m) => m.sizeBytes)).toEqual(files.map((f) => f.length));
    expect(await contents()).toHaveLength(1);
  });

  it('a video takes one file: a second is refused at the upload field and not stored, the first is kept', async () => {
    const { brand, send, mediaRows, contents } = await composer(server(), [['youtube', 'Acme videos']]);
    const sent = await send([
      ['brand_id', brand.id],
      ['target_platforms', 'youtube'],
      ['content_type', 'video'],
      ['title', 'Clip'],
      ['media_file', new Blob([Buffer.from('fake mp4 one')], { type: 'video/mp4' }), 'one.mp4'],
      ['media_file', new Blob([Buffer.from('fake mp4 two')], { type: 'video/mp4' }), 'two.mp4'],
    ]);
    expect(sent.status).toBe(400);
    expect(byId(sent.html, 'media_file-error')).toBe('A video takes one file, and this post already has one: the other files were not uploaded. To post several images, choose the content type Photo.');
    expect(sent.html).toMatch(/<input id="media_file"[^>]*aria-invalid="true">/);
    const rows = await mediaRows();
    expect(rows).toHaveLength(1);
    expect(sent.html).toMatch(new RegExp(`name="media_id" type="checkbox" value="${rows[0]!.id}" checked`));
    expect(await contents()).toHaveLength(0);
  });

  it('after Preview the preview, after a refused submit the error summary, is marked to take focus when the page loads', async () => {
    const { brand, send } = await composer(server(), [['threads', 'Acme threads']]);
    const preview = await send([['brand_id', brand.id], ['target_platforms', 'threads'], ['content_type', 'text'], ['text', 'Hello'], ['intent', 'preview']]);
    expect(preview.status).toBe(200);
    expect(preview.html).toContain('<section class="card" aria-labelledby="preview-h" id="preview" tabindex="-1" data-focus-on-load>');
    expect(preview.html.match(/data-focus-on-load/g)).toHaveLength(1);
    const refused = await send([['brand_id', brand.id], ['content_type', 'text'], ['text', 'Hello']]);
    expect(refused.status).toBe(400);
    expect(refused.html).toContain('<div class="error-banner" role="alert" tabindex="-1" data-focus-on-load><p>Nothing was published: see the messages next to the fields below.</p>');
  });

  it('an uploaded file is streamed to media storage and published as a media item', async () => {
    const { brand, send, mediaRows, contents } = await composer(server(), [['facebook', 'Acme page']]);
    const sent = await send([
      ['brand_id', brand.id],
      ['target_platforms', 'facebook'],
      ['content_type', 'photo'],
      ['text', 'A dot'],
      ['media_url', ''],
      ['media_file', new Blob([PNG], { type: 'image/png' }), 'dot.png'],
      ['modo', ''],
    ]);
    expect(sent.status).toBe(303);
    const rows = await mediaRows();
    expect(rows).toHaveLength(1);
    // PostgreSQL returns BIGINT as text.
    expect({ ...rows[0], size_bytes: Number(rows[0]!.size_bytes) }).toMatchObject({ content_type: 'image/png', size_bytes: PNG.length });
    const stored = await server().container.db.kysely.selectFrom('contents').select('request').where('id', '=', contentIdOf(sent.location)!).executeTakeFirstOrThrow();
    expect(JSON.parse(stored.request).media).toEqual([expect.objectContaining({ mediaId: rows[0]!.id, sizeBytes: PNG.length })]);
    expect(await contents()).toHaveLength(1);
  });

  it('a title over the video network\'s limit is refused next to Title with 422, from the path the core names', async () => {
    const { brand, send, contents } = await composer(server(), [['youtube', 'Acme videos']]);
    const sent = await send([
      ['brand_id', brand.id],
      ['target_platforms', 'youtube'],
      ['content_type', 'video'],
      ['title', 't'.repeat(101)],
      ['media_file', new Blob([Buffer.from('fake mp4')], { type: 'video/mp4' }), 'clip.mp4'],
    ]);
    expect(sent.status).toBe(422);
    expect(byId(sent.html, 'title-error')).toBe('The title is too long for YouTube: 101 characters, the limit is 100.');
    expect(byId(sent.html, 'text-error')).toBeUndefined();
    expect(await contents()).toHaveLength(0);
  });

  it('an upload kept across a failed submit is sent again; an unsupported file is refused next to the upload', async () => {
    const { brand, send, mediaRows, contents } = await composer(server(), [['facebook', 'Acme page'], ['youtube', 'Acme videos']]);
    // YouTube needs a title: the upload is stored, and the form offers to reuse it.
    const failed = await send([
      ['brand_id', brand.id],
      ['target_platforms', 'youtube'],
      ['content_type', 'video'],
      ['media_file', new Blob([Buffer.from('fake mp4')], { type: 'video/mp4' }), 'clip.mp4'],
    ]);
    expect(failed.status).toBe(400);
    expect(byId(failed.html, 'title-error')).toContain('YouTube needs a title');
    const [row] = await mediaRows();
    expect(failed.html).toMatch(new RegExp(`<input id="media-kept-1" name="media_id" type="checkbox" value="${row!.id}" checked>`));
    const retried = await send([
      ['brand_id', brand.id],
      ['target_platforms', 'youtube'],
      ['content_type', 'video'],
      ['title', 'A clip'],
      ['media_id', row!.id],
    ]);
    expect(retried.status).toBe(303);
    expect(await mediaRows()).toHaveLength(1);

    const wrong = await send([
      ['brand_id', brand.id],
      ['target_platforms', 'facebook'],
      ['content_type', 'photo'],
      ['media_file', new Blob([Buffer.from('plain')], { type: 'text/plain' }), 'notes.txt'],
    ]);
    expect(wrong.status).toBe(400);
    expect(byId(wrong.html, 'media_file-error')).toContain('This kind of file is not accepted');
    expect(wrong.html).toMatch(/<input id="media_file"[^>]*aria-invalid="true">/);
    expect(await contents()).toHaveLength(1);
  });

  it('an empty file is refused next to the upload as empty, not as the wrong kind; nothing stored', async () => {
    const { brand, send, contents, mediaRows } = await composer(server(), [['facebook', 'Acme page']]);
    const empty = await send([
      ['brand_id', brand.id],
      ['target_platforms', 'facebook'],
      ['content_type', 'photo'],
      ['media_file', new Blob([], { type: 'image/png' }), 'empty.png'],
    ]);
    expect(empty.status).toBe(400);
    expect(byId(empty.html, 'media_file-error')).toContain('The file is empty');
    expect(await mediaRows()).toHaveLength(0);
    expect(await contents()).toHaveLength(0);
  });

  it('a media address over the network\'s size limit is refused next to that address with 422', async () => {
    const host = await startMediaHost();
    try {
      const { brand, send, contents } = await composer(server(), [['instagram', 'Acme gram']]);
      const sent = await send([
        ['brand_id', brand.id],
        ['target_platforms', 'instagram'],
        ['content_type', 'photo'],
        ['media_url', `${host.url}/photo.jpg`],
        ['media_url', `${host.url}/big-photo.jpg`],
        ['media_url', ''],
      ]);
      expect(sent.status).toBe(422);
      expect(byId(sent.html, 'media-url-2-error')).toBe('This file is larger than Instagram accepts for a photo: at most 8.0 MB.');
      expect(sent.html).toMatch(/<input id="media-url-2" name="media_url" type="url" maxlength="2048" value="[^"]+big-photo.jpg" aria-describedby="media-url-2-error" aria-invalid="true">/);
      expect(await contents()).toHaveLength(0);
    } finally {
      await host.close();
    }
  });

  it('a multipart form without its CSRF token, or with a wrong one, is refused with 403 and stores nothing', async () => {
    const { brand, send, mediaRows, contents } = await composer(server(), [['facebook', 'Acme page']]);
    const fields: Entry[] = [
      ['brand_id', brand.id],
      ['target_platforms', 'facebook'],
      ['content_type', 'photo'],
      ['media_file', new Blob([PNG], { type: 'image/png' }), 'dot.png'],
    ];
    const missing = await send(fields, { csrf: null });
    expect(missing.status).toBe(403);
    expect(textOf(missing.html)).toContain('This form could not be accepted');
    const wrong = await send(fields, { csrf: 'x'.repeat(43) });
    expect(wrong.status).toBe(403);
    expect(await mediaRows()).toHaveLength(0);
    expect(await contents()).toHaveLength(0);
  });

  it('Preview shows the jobs with their final text and the meters, keeps the values and creates nothing', async () => {
    const { brand, send, contents } = await composer(server(), [['threads', 'Acme threads'], ['linkedin', 'Acme in']]);
    const long = `${'A sentence that goes on. '.repeat(30)}Done.`;
    const sent = await send([
      ['brand_id', brand.id],
      ['target_platforms', 'threads'],
      ['target_platforms', 'linkedin'],
      ['content_type', 'text'],
      ['text', long],
      ['thread_split', 'auto'],
      ['thread_numbering', 'true'],
      ['intent', 'preview'],
    ]);
    expect(sent.status).toBe(200);
    const section = /<section class="card" aria-labelledby="preview-h"[^>]*>[\s\S]*?<h3>Plan meters<\/h3>[\s\S]*?<\/section>/.exec(sent.html)![0];
    const preview = textOf(section);
    expect(preview).toContain('Nothing was published or counted');
    // Each network as its feed shows it: the thread split into its posts, each under the account's name.
    expect(preview).toMatch(/Threads — a thread of 2 posts Sandbox: simulated/);
    expect(section.match(/<article class="mock mock-threads" aria-label="Threads, post \d of 2">/g)).toHaveLength(2);
    expect(preview).toContain('A Acme threads sandbox');
    expect(preview).toContain('1/2');
    // LinkedIn folds its text after about 210 characters behind "…see more".
    expect(section).toMatch(/<article class="mock mock-linkedin"[\s\S]*?<details class="mock-fold">[\s\S]*?…see more/);
    expect(preview).toMatch(/Publications this cycle 0 2 \d+/);
    expect(preview).not.toContain('Inspiration library');
    expect(sent.html).toContain(long);
    expect(sent.html).toMatch(/id="thread_split" name="thread_split" type="checkbox" value="auto" checked/);
    expect(await contents()).toHaveLength(0);
  });

  it('a thread post over 500 characters is shown under that post, the posts typed are kept plus an empty one', async () => {
    const { brand, send, contents } = await composer(server(), [['threads', 'Acme threads']]);
    const sent = await send([
      ['brand_id', brand.id],
      ['target_platforms', 'threads'],
      ['content_type', 'thread'],
      ['thread', 'First post'],
      ['thread', 'y'.repeat(501)],
      ['thread', ''],
    ]);
    expect(sent.status).toBe(422);
    expect(byId(sent.html, 'thread-2-error')).toBe('Post 2 is too long for Threads: 501 characters, the limit is 500.');
    expect(sent.html).toMatch(/<textarea id="thread-1" name="thread"[^>]*>\nFirst post<\/textarea>/);
    expect(sent.html).toMatch(/<textarea id="thread-3" name="thread"[^>]*>\n<\/textarea>/);
    expect(sent.html).not.toContain('id="thread-4"');
    expect(await contents()).toHaveLength(0);
  });

  it('a field past the form limits is refused with 413 and a banner, nothing created', async () => {
    const { brand, send, contents } = await composer(server(), [['facebook', 'Acme page']]);
    const sent = await send([
      ['brand_id', brand.id],
      ['target_platforms', 'facebook'],
      ['content_type', 'text'],
      ['text', 'a'.repeat(600 * 1024)],
    ]);
    expect(sent.status).toBe(413);
    expect(textOf(/<div class="error-banner" role="alert"[^>]*>[\s\S]*?<\/div>/.exec(sent.html)![0])).toContain('larger than the dashboard accepts');
    expect(await contents()).toHaveLength(0);
  });

  it('paying with credits without a balance shows the wallet problem in a banner with a link to the wallet', async () => {
    const { brand, send, contents } = await composer(server(), [['threads', 'Acme threads']]);
    const sent = await send([
      ['brand_id', brand.id],
      ['target_platforms', 'threads'],
      ['content_type', 'text'],
      ['text', 'Paid post'],
      ['modo', 'creditos'],
    ]);
    expect(sent.status).toBe(402);
    const banner = textOf(/<div class="error-banner" role="alert"[^>]*>[\s\S]*?<\/div>/.exec(sent.html)![0]);
    expect(banner).toMatch(/credits|price/i);
    expect(sent.html).toMatch(/<a href="\/dashboard\/wallet">Open the wallet<\/a>/);
    expect(await contents()).toHaveLength(0);
  });
}, { ALLOW_LOCAL_URLS: 'true' });
