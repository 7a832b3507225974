import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLocalMediaStore } from '../../src/media/local-store.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'local-store-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('a body stopped before the file is even open leaves no file behind (the open completes after the failure)', async () => {
  const store = createLocalMediaStore(dir);
  // Many at once, so that file opens and removals share the disk threads in every order.
  await Promise.all(
    Array.from({ length: 200 }, async (_, i) => {
      const body = new PassThrough();
      const saving = store.save('ws_stop', `media_${i}`, body, 1000);
      // The importer stops its body as soon as the download is over the room left: here, at once.
      body.destroy();
      await expect(saving).rejects.toThrow();
    }),
  );
  expect(readdirSync(join(dir, 'ws_stop'))).toEqual([]);
});

it('a body over the room left is too_large and leaves no file; one within it is kept', async () => {
  const store = createLocalMediaStore(dir);
  expect(await store.save('ws_room', 'media_big', Readable.from([Buffer.alloc(600), Buffer.alloc(600)]), 1000)).toEqual({ ok: false, reason: 'too_large' });
  expect(readdirSync(join(dir, 'ws_room'))).toEqual([]);
  expect(await store.save('ws_room', 'media_small', Readable.from([Buffer.alloc(600)]), 1000)).toEqual({ ok: true, bytes: 600, path: join(dir, 'ws_room', 'media_small') });
  expect(readdirSync(join(dir, 'ws_room'))).toEqual(['media_small']);
});
