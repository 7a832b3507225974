import type { Config } from '../config.js';
import type { Clock } from '../core/clock.js';
import type { MediaStore } from '../core/media/media-store.js';
import { createPublicMediaLinks, type PublicMediaLinks } from '../core/media/public-links.js';
import { createLocalMediaStore } from './local-store.js';

/**
 * The media store MEDIA_STORE names and the signed addresses that go with it: local disk served by the service's
 * own /media route, or a bucket that serves its objects itself.
 */
export async function createConfiguredMediaStore(
  config: Pick<Config, 'mediaStore' | 'mediaDir' | 'baseUrl'>,
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
