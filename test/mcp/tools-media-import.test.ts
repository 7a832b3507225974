import { readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { MediaItem } from '../../src/core/media/media.schema.js';
import { describeEachDb, type TestServer } from '../support/server.js';
import { call, callFailing, closeClientsAfterEach, connect, mediaOnLoopback } from './tool-calls.js';

closeClientsAfterEach();

const TINY_PLAN = { brands: 1, connections: 5, media_storage: 1000, webhooks: 1, inspiration_library: 1, criacao_de_conteudos: 5, publicacoes: 5 };

/**
 * A local file host. `/photo.jpg` is a 1024-byte JPEG, `/sized/<n>.png` an n-byte PNG, `/page.html` a web page,
 * `/empty.jpg` a 0-byte JPEG, `/nosize/<n>` n bytes of MP4 without a length, `/disguised.jpg` a JPEG to HEAD and
 * a web page to GET, `/slow.jpg` never answers. Every request is recorded.
 */
const requests: string[] = [];
let host: Server;
let hostUrl = '';
beforeAll(async () => {
  host = createServer((req, res) => {
    const path = req.url ?? '/';
    requests.push(`${req.method} ${path}`);
    const send = (bytes: number, type: string) => {
      res.writeHead(200, { 'content-type': type, 'content-length': String(bytes) });
      res.end(req.method === 'HEAD' ? undefined : Buffer.alloc(bytes, 7));
    };
    const sized = /^\/sized\/(\d+)\.png$/.exec(path);
    const nosize = /^\/nosize\/(\d+)$/.exec(path);
    if (path === '/photo.jpg') send(1024, 'image/jpeg');
    else if (sized) send(Number(sized[1]), 'image/png');
    else if (path === '/page.html') send(40, 'text/html; charset=utf-8');
    else if (path === '/empty.jpg') send(0, 'image/jpeg');
    else if (path === '/disguised.jpg') send(40, req.method === 'HEAD' ? 'image/jpeg' : 'text/html');
    else if (nosize) {
      res.writeHead(200, { 'content-type': 'video/mp4' });
      res.end(req.method === 'HEAD' ? undefined : Buffer.alloc(Number(nosize[1]), 1));
    } else if (path === '/slow.jpg') res.on('error', () => undefined);
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
  hostUrl = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
});
afterAll(
  () =>
    new Promise<void>((r) => {
      host.closeAllConnections();
      host.close(() => r());
    }),
);

async function storageUsed(s: TestServer, wsId: string): Promise<number> {
  return (await s.container.services.meters.usage(wsId)).meters.find((m) => m.meter === 'media_storage')!.used;
}

/** Files under the workspace's media folder: a refused import leaves none behind. */
function storedFiles(s: TestServer, wsId: string): string[] {
  try {
    return readdirSync(join(s.container.config.mediaDir, wsId));
  } catch {
    return [];
  }
}

describeEachDb(
  'MCP import_media_from_url (local addresses allowed)',
  (server) => {
    beforeAll(() => mediaOnLoopback(server()));

    it('copies a file into the library: the item REST and list_media show, its signed url serves the bytes, publish_content uses it', async () => {
      const ws = await server().workspace();
      const client = await connect(server(), ws.api_key);
      const item = await call<MediaItem>(client, 'import_media_from_url', { url: `${hostUrl}/photo.jpg` });
      expect(item).toMatchObject({ id: expect.stringMatching(/^media_/), content_type: 'image/jpeg', size_bytes: 1024, used_by: [] });
      expect(await storageUsed(server(), ws.workspace_id)).toBe(1024);
      const file = await fetch(item.url);
      expect(file.status).toBe(200);
      expect(Buffer.from(await file.arrayBuffer())).toEqual(Buffer.alloc(1024, 7));

      const listed = await call<{ data: MediaItem[] }>(client, 'list_media', {});
      expect(listed.data.map((m) => ({ ...m, url: undefined }))).toEqual([{ ...item, url: undefined }]);
      const rest = await server().request<{ data: MediaItem[] }>('GET', `/api/v1/workspaces/${ws.workspace_id}/media`, { key: ws.api_key });
      expect(rest.body.data.map((m) => m.id)).toEqual([item.id]);

      const brand = await call<{ id: string }>(client, 'create_brand', { name: 'Bakery' });
      await call(client, 'add_sandbox_connection', { brand_id: brand.id, platform_slug: 'instagram', mode: 'sandbox', name: '@bakery' });
      const preview = await call<{ jobs: unknown[] }>(client, 'preview_content', {
        brand_id: brand.id,
        target_platforms: ['instagram'],
        content_type: 'photo',
        text: 'Fresh bread.',
        media: [{ media_id: item.id }],
      });
      expect(preview.jobs).toHaveLength(1);
      // The other workspace does not see it.
      const other = await connect(server(), (await server().workspace('Other')).api_key);
      expect(await call(other, 'list_media', {})).toEqual({ data: [], next_cursor: null });
    });

    it('a web page, an empty file, a 404 and a file that turns out not to be media are validation_failed naming url, and nothing is kept', async () => {
      const ws = await server().workspace();
      const client = await connect(server(), ws.api_key);
      const cases: [string, RegExp][] = [
        ['/page.html', /^url: the address serves text\/html; it must be one of image\/jpeg, /],
        ['/empty.jpg', /^url: the address served an empty file \(0 bytes\)$/],
        ['/missing.jpg', /^url: the address answered HTTP 404$/],
        ['/disguised.jpg', /^url: the address serves text\/html; it must be one of /],
      ];
      for (const [path, message] of cases) {
        const body = await callFailing(client, 'import_media_from_url', { url: `${hostUrl}${path}` });
        expect(body, path).toMatchObject({ error: 'validation_failed', message: expect.stringMatching(message), fields: [{ path: 'url', message: expect.any(String) }] });
      }
      // The web page was refused on its HEAD alone: its body was never asked for.
      expect(requests.filter((r) => r === 'GET /page.html')).toEqual([]);
      expect(await call(client, 'list_media', {})).toEqual({ data: [], next_cursor: null });
      expect(await storageUsed(server(), ws.workspace_id)).toBe(0);
      expect(storedFiles(server(), ws.workspace_id)).toEqual([]);
      expect(await callFailing(client, 'import_media_from_url', { url: 'not an address' })).toMatchObject({ error: 'validation_failed', fields: [{ path: 'url' }] });
    });

    it('a file larger than what is left of media_storage is limit_reached, as the REST upload answers, whether its size is declared or not', async () => {
      const ws = await server().workspace();
      await server().container.services.workspaces.setPlan(ws.workspace_id, 'tiny');
      const client = await connect(server(), ws.api_key);
      const upload = await server().request('POST', `/api/v1/workspaces/${ws.workspace_id}/media`, {
        key: ws.api_key,
        rawBody: 'x'.repeat(1024),
        headers: { 'content-type': 'image/jpeg' },
      });
      expect(upload.status).toBe(403);
      const extra = { error: 'limit_reached', meter: 'media_storage', limit: 1000, used: 0, resolve: 'desativar_outra' };
      expect(upload.body).toMatchObject(extra);
      for (const path of ['/photo.jpg', '/nosize/5000']) {
        const body = await callFailing(client, 'import_media_from_url', { url: `${hostUrl}${path}` });
        expect(body, path).toMatchObject(extra);
        expect(Object.keys(body).sort(), path).toEqual(Object.keys(upload.body).sort());
      }
      expect(await storageUsed(server(), ws.workspace_id)).toBe(0);
      expect(storedFiles(server(), ws.workspace_id)).toEqual([]);
    });

    it('two imports at once that fit the meter only one at a time: one is stored, the other is limit_reached, the meter counts one', async () => {
      const ws = await server().workspace();
      await server().container.services.workspaces.setPlan(ws.workspace_id, 'tiny');
      const client = await connect(server(), ws.api_key);
      const other = await connect(server(), ws.api_key);
      const results = await Promise.all(
        [client, other].map(async (c, i) => {
          const result = (await c.callTool({ name: 'import_media_from_url', arguments: { url: `${hostUrl}/sized/60${i}.png` } })) as {
            isError?: boolean;
            content: { type: string; text?: string }[];
          };
          return { isError: result.isError ?? false, body: JSON.parse(result.content[0]?.text ?? 'null') as { error?: string; size_bytes?: number } };
        }),
      );
      const stored = results.filter((r) => !r.isError);
      expect(stored).toHaveLength(1);
      expect(results.filter((r) => r.isError).map((r) => r.body.error)).toEqual(['limit_reached']);
      expect(await storageUsed(server(), ws.workspace_id)).toBe(stored[0]!.body.size_bytes);
      expect(storedFiles(server(), ws.workspace_id)).toHaveLength(1);
    });
  },
  { ALLOW_LOCAL_URLS: 'true', PLANS_JSON: JSON.stringify({ tiny: TINY_PLAN }) },
  () => ({ workers: false }),
);

describeEachDb(
  'MCP import_media_from_url: bounded by its deadline',
  (server) => {
    beforeAll(() => mediaOnLoopback(server(), 400));

    it('a host that never answers fails within the deadline with validation_failed, and nothing is kept', async () => {
      const ws = await server().workspace();
      const client = await connect(server(), ws.api_key);
      const started = performance.now();
      const body = await callFailing(client, 'import_media_from_url', { url: `${hostUrl}/slow.jpg` });
      expect(performance.now() - started).toBeLessThan(3_000);
      expect(body).toMatchObject({ error: 'validation_failed', message: 'url: the address did not deliver the file within 0.4 s', fields: [{ path: 'url' }] });
      expect(await storageUsed(server(), ws.workspace_id)).toBe(0);
    });
  },
  { ALLOW_LOCAL_URLS: 'true' },
  () => ({ workers: false }),
);

describeEachDb(
  'MCP import_media_from_url (the default outbound policy)',
  (server) => {
    it('refuses loopback, private and metadata addresses and plain http before connecting, as publish_content refuses them in media', async () => {
      const ws = await server().workspace();
      const client = await connect(server(), ws.api_key);
      const brand = await call<{ id: string }>(client, 'create_brand', { name: 'Bakery' });
      await call(client, 'add_sandbox_connection', { brand_id: brand.id, platform_slug: 'instagram', mode: 'sandbox', name: '@bakery' });
      const before = requests.length;
      for (const url of [`${hostUrl}/photo.jpg`, 'https://127.0.0.1/photo.jpg', 'https://10.0.0.8/photo.jpg', 'https://169.254.169.254/latest/meta-data', 'https://[::1]/photo.jpg', 'http://example.com/photo.jpg']) {
        const body = await callFailing(client, 'import_media_from_url', { url });
        expect(body, url).toMatchObject({ error: 'validation_failed', message: 'url: the address is not a public https address', fields: [{ path: 'url' }] });
        // The contents' media addresses answer the same code for the same address.
        const content = await callFailing(client, 'preview_content', { brand_id: brand.id, target_platforms: ['instagram'], content_type: 'photo', media: [{ url }] });
        expect(content, url).toMatchObject({ error: 'validation_failed', message: 'media[0].url: the address is not a public https address' });
      }
      expect(requests.slice(before)).toEqual([]);
      expect(await call(client, 'list_media', {})).toEqual({ data: [], next_cursor: null });
    });
  },
  {},
  () => ({ workers: false }),
);
