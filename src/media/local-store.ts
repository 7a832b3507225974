import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import type { MediaStore } from '../core/media/media-store.js';
import { openFileSource, writeNewFile } from './file-source.js';

class TooLarge extends Error {}

/** Uploads on local disk, one folder per workspace, files readable by the service's user only. */

export function createLocalMediaStore(dir: string): MediaStore {
  return {
    async save(workspaceId, id, body, maxBytes) {
      const folder = join(dir, workspaceId);
      await mkdir(folder, { recursive: true });
      const path = join(folder, id);
      let bytes = 0;
      const counter = new Transform({
        transform(chunk: Buffer, _enc, done) {
          bytes += chunk.length;
          if (bytes > maxBytes) done(new TooLarge());
          else done(null, chunk);
        },
      });
      try {
        await writeNewFile(path, body, counter);
        return { ok: true, bytes, path };
      } catch (err) {
        if (err instanceof TooLarge) return { ok: false, reason: 'too_large' };
        throw err;
      }
    },
    async remove(path) {
      await rm(path, { force: true });
    },
    open: (path) => openFileSource(path),
  };
}
