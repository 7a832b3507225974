import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { createS3MediaStore } from '../../src/media/s3-store.js';
import { LOCAL_S3_KEY, startLocalS3, type LocalS3 } from '../support/s3.js';

let s3: LocalS3;
let downloadDir: string;
beforeAll(async () => {
  s3 = await startLocalS3();
  downloadDir = mkdtempSync(join(tmpdir(), 's3-local-paths-'));
});
afterAll(async () => {
  await s3.close();
  rmSync(downloadDir, { recursive: true, force: true });
});

it('an upload recorded while the store was local disk is read and deleted from its copy at media/<id> in the bucket', async () => {
  const { store, close } = await createS3MediaStore(
    { bucket: s3.bucket, region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, credentials: LOCAL_S3_KEY, urlTtlSeconds: 60 },
    { clock: new ManualClock(Date.now()), downloadDir },
  );
  try {
    // What an operator's copy of MEDIA_DIR/<workspace>/<id> to the bucket leaves.
    const bytes = Buffer.from('bytes kept on the old disk');
    expect(await store.save('ws_1', 'media_legacy', Readable.from([bytes]), 1000)).toEqual({ ok: true, bytes: bytes.length, path: 'media/media_legacy' });
    for (const recorded of ['/var/lib/publisher/media/ws_1/media_legacy', 'media/ws_1/media_legacy']) {
      const source = await store.open(recorded);
      expect(await source.read(0, 100)).toEqual(bytes);
      await source.close();
    }
    await store.remove('./data/media/ws_1/media_legacy');
    expect(s3.keys()).not.toContain('media/media_legacy');
    await expect(store.open('media/media_legacy')).rejects.toThrow();
  } finally {
    close();
  }
});
