import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NewWorkspace } from '../../src/core/workspaces/workspaces.service.js';
import { PLATFORM_SLUGS } from '../../src/vocabulary/platforms.js';
import type { TestServer } from './server.js';

/** Every network the service publishes to, in the platform table's order: a network added there is covered here. */
export const ALL_PLATFORMS = PLATFORM_SLUGS;

/** A workspace with one brand and one sandbox connection per listed platform. */
export async function brandWithConnections(
  server: TestServer,
  platforms: readonly string[] = ALL_PLATFORMS,
  ws?: NewWorkspace,
): Promise<{ ws: NewWorkspace; brandId: string; connections: Record<string, string> }> {
  const workspace = ws ?? (await server.workspace());
  const brand = await server.request('POST', `/api/v1/workspaces/${workspace.workspace_id}/brands`, { key: workspace.api_key, body: { name: 'Acme' } });
  if (brand.status !== 201) throw new Error(`brand: ${brand.text}`);
  const brandId = brand.body.id as string;
  const connections: Record<string, string> = {};
  for (const platform of platforms) {
    const conn = await server.request('POST', `/api/v1/workspaces/${workspace.workspace_id}/brands/${brandId}/connections`, {
      key: workspace.api_key,
      body: { platform_slug: platform, mode: 'sandbox', name: `@acme-${platform}` },
    });
    if (conn.status !== 201) throw new Error(`connection: ${conn.text}`);
    connections[platform] = conn.body.id as string;
  }
  return { ws: workspace, brandId, connections };
}

/**
 * A local media host: `/video.mp4` and `/photo.jpg` report their size; `/big-photo.jpg` reports 9 MB;
 * `/nosize/<bytes>` streams that many bytes without Content-Length.
 */
export async function startMediaHost(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res): void => {
    const path = req.url ?? '/';
    const sized = (bytes: number, type: string) => {
      res.writeHead(200, { 'content-type': type, 'content-length': String(bytes) });
      res.end(req.method === 'HEAD' ? undefined : Buffer.alloc(bytes));
    };
    if (path === '/video.mp4') return sized(2048, 'video/mp4');
    if (path === '/photo.jpg') return sized(1024, 'image/jpeg');
    if (path === '/photo.png') return sized(1024, 'image/png');
    if (path === '/photo.webp') return sized(1024, 'image/webp');
    if (path === '/big-photo.jpg') return sized(9 * 1024 * 1024, 'image/jpeg');
    const nosize = /^\/nosize\/(\d+)$/.exec(path);
    if (nosize) {
      res.writeHead(200, { 'content-type': 'video/mp4' });
      if (req.method === 'HEAD') {
        res.end();
        return;
      }
      let left = Number(nosize[1]);
      const chunk = Buffer.alloc(1024 * 1024);
      const pump = () => {
        while (left > 0) {
          const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
          left -= piece.length;
          if (!res.write(piece)) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('error', () => undefined);
      pump();
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
