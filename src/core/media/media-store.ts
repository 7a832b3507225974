import type { Readable } from 'node:stream';
import type { MediaSource } from '../../networks/media-source.js';

/**
 * `path` is the store's own name of the file (kept in the media row and in stored content requests): a path on
 * local disk, or an object key in a bucket.
 */
export type StoredFile = { ok: true; bytes: number; path: string } | { ok: false; reason: 'too_large' };

/**
 * Where uploads live: local disk under MEDIA_DIR (the embedded default) or an S3-compatible bucket shared by
 * every host (MEDIA_STORE=s3).
 */
export interface MediaStore {
  /** Streams `body` to storage, stopping as soon as it passes `maxBytes` (nothing is kept then). */
  save(workspaceId: string, id: string, body: Readable, maxBytes: number): Promise<StoredFile>;
  /** Removes a stored file; a file already gone is not an error. */
  remove(path: string): Promise<void>;
  /**
   * Opens a stored file for a network upload, on whichever host asks (a bucket's object is first copied to a
   * temporary file under the host's own MEDIA_DIR, removed on close).
   */
  open(path: string): Promise<MediaSource>;
}
