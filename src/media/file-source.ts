import { randomBytes } from 'node:crypto';
import { createWriteStream, openAsBlob } from 'node:fs';
import { mkdir, open, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { MediaSource } from '../networks/media-source.js';
import { type MediaFetchOptions, streamMediaCapped } from './probe.js';
import type { OutboundPolicy } from '../outbound/safe-fetch.js';

/**
 * Writes a stream into a new file readable by the service's user only; when the stream fails, the file is
 * removed and the failure thrown. A stream stopped before its file was open still creates the file once the open
 * completes, so the removal waits for the file to close.
 */
export async function writeNewFile(path: string, ...streams: [Readable, ...Transform[]]): Promise<void> {
  const file = createWriteStream(path, { flags: 'wx', mode: 0o600 });
  try {
    await pipeline([...streams, file]);
  } catch (err) {
    if (!file.closed) await new Promise<void>((resolve) => file.once('close', () => resolve()));
    await rm(path, { force: true });
    throw err;
  }
}

/** A file on disk read piece by piece; a temporary one is removed on close. */
export async function openFileSource(path: string, temporary = false): Promise<MediaSource> {
  const handle = await open(path, 'r');
  const { size } = await handle.stat();
  return {
    size,
    async read(offset, length) {
      const buffer = Buffer.alloc(Math.max(0, Math.min(length, size - offset)));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
      return buffer.subarray(0, bytesRead);
    },
    blob: (type) => openAsBlob(path, { type }),
    async close() {
      await handle.close();
      if (temporary) await rm(path, { force: true });
    },
  };
}

/**
 * Opens a media address for a network upload: our own uploads (`file://`) in place, a public address downloaded
 * through the guard into a temporary file first, so a large video is never held in memory.
 */
export async function openMediaSource(url: string, options: { downloadDir: string; policy: OutboundPolicy; fetch: MediaFetchOptions }): Promise<MediaSource> {
  if (url.startsWith('file://')) return openFileSource(url.slice('file://'.length));
  await mkdir(options.downloadDir, { recursive: true });
  const path = join(options.downloadDir, `download-${randomBytes(12).toString('hex')}`);
  const out = createWriteStream(path, { flags: 'wx', mode: 0o600 });
  const write = (chunk: Buffer) =>
    new Promise<void>((resolve, reject) => {
      out.write(chunk, (err) => (err ? reject(err) : resolve()));
    });
  let fetched;
  try {
    fetched = await streamMediaCapped(url, Number.MAX_SAFE_INTEGER, options.policy, options.fetch, write);
  } finally {
    await new Promise<void>((resolve) => out.end(resolve));
  }
  if (!fetched.ok) {
    await rm(path, { force: true });
    throw new Error(`media could not be read (${fetched.reason})`);
  }
  return openFileSource(path, true);
}

/**
 * Removes temporary downloads older than `olderThanMs` (file times are wall-clock time): what a process killed in
 * the middle of an upload left behind. Old enough that no running upload still reads them.
 */
export async function sweepStaleDownloads(downloadDir: string, olderThanMs: number, now = Date.now()): Promise<number> {
  let names: string[];
  try {
    names = await readdir(downloadDir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names.filter((n) => n.startsWith('download-'))) {
    const path = join(downloadDir, name);
    const info = await stat(path).catch(() => null);
    if (info && now - info.mtimeMs > olderThanMs) {
      await rm(path, { force: true });
      removed++;
    }
  }
  return removed;
}
