import type { Clock } from '../core/clock.js';
import type { MediaStore } from '../core/media/media-store.js';
import { createPublicMediaLinks, type PublicMediaLinks } from '../core/media/public-links.js';
import { createLocalMediaStore } from './local-store.js';
import type { S3StoreSettings } from './s3-store.js';

/** What the store is made from (MEDIA_STORE and the S3_* settings, MEDIA_DIR, BASE_URL), as configuration reads it. */
export interface MediaStoreConfig {
  mediaStore: { kind: 'local' } | ({ kind: 's3' } & S3StoreSettings);
  mediaDir: string;
  baseUrl: string | undefined;
}

/**
 * The media store MEDIA_STORE names and the signed addresses that go with it: local disk served by the service's
 * own /media route, or a bucket that serves its objects itself.
 */
export async function createConfiguredMediaStore(
  config: MediaStoreConfig,
  deps: { clock: Clock; secretKey: Buffer; downloadDir: string },
): Promise<{ store: MediaStore; links: PublicMediaLinks; close(): void }> {
  const settings = config.mediaStore;
  if (settings.kind === 's3') {
    // Loaded only here: the AWS SDK adds start time and memory that the local default does not need.
    const { createS3MediaStore } = await import('./s3-store.js');
    return createS3MediaStore(settings, deps);
  }
  return {
    store: createLocalMediaStore(config.mediaDir),
    // Long enough for a network to download a file while a job waits on it; renewed on every attempt.
    links: createPublicMediaLinks({ secretKey: deps.secretKey, baseUrl: config.baseUrl ?? '', clock: deps.clock, ttlMs: 24 * 3_600_000 }),
    close: () => undefined,
  };
}
