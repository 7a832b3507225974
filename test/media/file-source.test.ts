import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openFileSource, openMediaSource, sweepStaleDownloads } from '../../src/media/file-source.js';
import { createSafeDispatcher } from '../../src/outbound/safe-fetch.js';

const BODY = randomBytes(3 * 1024 * 1024 + 17);
let server: Server;
let base: string;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'file-source-'));
  server = createServer((req, res) => {
    if (req.url === '/video.mp4') {
      res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(BODY.length) });
      res.end(BODY);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

const local = { allowLocal: true };
const options = (downloadDir: string) => ({ downloadDir, policy: local, fetch: { dispatcher: createSafeDispatcher(local) } });

describe('media sources for network uploads', () => {
  it('reads an upload in place, piece by piece, up to its end', async () => {
    const path = join(dir, 'upload.bin');
    writeFileSync(path, BODY);
    const source = await openMediaSource(`file://${path}`, options(join(dir, 'dl-a')));
    expect(source.size).toBe(BODY.length);
    const pieces: Buffer[] = [];
    for (let offset = 0; offset < source.size; offset += 1_000_000) pieces.push(await source.read(offset, 1_000_000));
    expect(Buffer.concat(pieces).equals(BODY)).toBe(true);
    expect((await source.read(BODY.length - 5, 100)).length).toBe(5);
    await source.close();
    // An upload is ours to keep: closing does not delete it.
    expect(readdirSync(dir)).toContain('upload.bin');
  });

  it('downloads a public address into a temporary file, and removes it on close', async () => {
    const downloads = join(dir, 'dl-b');
    const source = await openMediaSource(`${base}/video.mp4`, options(downloads));
    expect(source.size).toBe(BODY.length);
    expect((await source.read(1024, 4096)).equals(BODY.subarray(1024, 1024 + 4096))).toBe(true);
    expect(readdirSync(downloads)).toHaveLength(1);
    await source.close();
    expect(readdirSync(downloads)).toHaveLength(0);
  });

  it('an address that fails leaves nothing behind; a private address is refused by the guard', async () => {
    const downloads = join(dir, 'dl-c');
    await expect(openMediaSource(`${base}/missing.mp4`, options(downloads))).rejects.toThrow(/http_error/);
    expect(readdirSync(downloads)).toHaveLength(0);
    const strict = { allowLocal: false };
    await expect(openMediaSource(`${base}/video.mp4`, { downloadDir: downloads, policy: strict, fetch: { dispatcher: createSafeDispatcher(strict) } })).rejects.toThrow(/blocked/);
    expect(readdirSync(downloads)).toHaveLength(0);
  });

  it('a file source reports fewer bytes only at the end', async () => {
    const path = join(dir, 'small.bin');
    writeFileSync(path, Buffer.from('0123456789'));
    const source = await openFileSource(path);
    expect((await source.read(3, 4)).toString()).toBe('3456');
    expect((await source.read(8, 4)).toString()).toBe('89');
    expect((await source.read(10, 4)).length).toBe(0);
    await source.close();
  });

  it('the maintenance sweep removes downloads a killed process left, older than a day, and nothing else', async () => {
    const downloads = join(dir, 'dl-d');
    mkdirSync(downloads, { recursive: true });
    for (const name of ['download-old', 'download-new', 'keep-me']) writeFileSync(join(downloads, name), 'x');
    const twoDaysAgo = (Date.now() - 2 * 86_400_000) / 1000;
    utimesSync(join(downloads, 'download-old'), twoDaysAgo, twoDaysAgo);
    utimesSync(join(downloads, 'keep-me'), twoDaysAgo, twoDaysAgo);
    expect(await sweepStaleDownloads(downloads, 86_400_000)).toBe(1);
    expect(readdirSync(downloads).sort()).toEqual(['download-new', 'keep-me']);
    expect(await sweepStaleDownloads(join(dir, 'no-such-dir'), 86_400_000)).toBe(0);
  });
});
