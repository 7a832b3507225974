import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import type { Clock } from '../core/clock.js';
import type { MediaStore, StoredFile } from '../core/media/media-store.js';
import type { PublicMediaLinks } from '../core/media/public-links.js';
import { openFileSource, writeNewFile } from './file-source.js';
import { sniffContentType } from './content-sniff.js';
import { presignGetObject, type S3Credentials, type S3Location } from './s3-presign.js';

export interface S3StoreSettings extends S3Location {
  /** Static keys; the SDK's default chain (environment, shared files, instance roles) when undefined. */
  credentials: S3Credentials | undefined;
  /** Lifetime of the signed GET addresses. */
  urlTtlSeconds: number;
}

/**
 * Parts of a multipart upload (S3 wants at least 5 MiB for every part but the last). One part is held in memory
 * per upload under way; a file smaller than one part goes in a single PUT.
 */
export const S3_PART_BYTES = 8 * 1024 * 1024;

/** How long a temporary copy outlives `close` once a Blob of it was handed out. */
const BLOB_GRACE_MS = 10 * 60_000;

/** Credentials from the default chain are refreshed this long before they expire. */
const REFRESH_BEFORE_MS = 5 * 60_000;

/** One object per upload, named by the media id alone so that its signed address needs no database read. */
export const s3KeyOf = (mediaId: string) => `media/${mediaId}`;

/**
 * The object of a stored path: the key itself, or, for an upload recorded while the store was local disk
 * (`MEDIA_DIR/<workspace>/<media id>`), the key its file has once copied to the bucket under `media/<media id>`.
 */
const objectKeyOf = (path: string) => (/^media\/media_[^/]+$/.test(path) ? path : s3KeyOf(basename(path)));

/**
 * Uploads in an S3-compatible bucket shared by every host, and signed GET addresses of them from the bucket
 * itself. `downloadDir` (on the host's own disk) holds a file while a network upload reads it.
 */
export async function createS3MediaStore(settings: S3StoreSettings, deps: { clock: Clock; downloadDir: string }): Promise<{ store: MediaStore; links: PublicMediaLinks; close(): void }> {
  const client = new S3Client({
    region: settings.region,
    ...(settings.endpoint === undefined ? {} : { endpoint: settings.endpoint }),
    forcePathStyle: settings.forcePathStyle,
    // Checksums only where S3 requires them: many S3-compatible servers reject the newer checksum headers.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...(settings.credentials === undefined ? {} : { credentials: settings.credentials }),
  });
  const Bucket = settings.bucket;

  // Links are signed synchronously (a job's request is built without waiting), so credentials are resolved
  // ahead: once here, then again in the background before they expire.
  let credentials = await client.config.credentials();
  let refreshing = false;
  const currentCredentials = (): S3Credentials => {
    const expiration = credentials.expiration?.getTime();
    if (expiration !== undefined && expiration - deps.clock.now() < REFRESH_BEFORE_MS && !refreshing) {
      refreshing = true;
      client.config
        .credentials({ forceRefresh: true })
        .then((fresh) => (credentials = fresh))
        .catch(() => undefined)
        .finally(() => (refreshing = false));
    }
    return credentials;
  };

  async function putWhole(Key: string, parts: Buffer[]): Promise<void> {
    const body = Buffer.concat(parts);
    await client.send(new PutObjectCommand({ Bucket, Key, Body: body, ContentLength: body.length, ContentType: sniffContentType(body) }));
  }

  const store: MediaStore = {
    async save(_workspaceId, id, body: Readable, maxBytes): Promise<StoredFile> {
      const Key = s3KeyOf(id);
      let bytes = 0;
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      let uploadId: string | undefined;
      const done: { ETag: string | undefined; PartNumber: number }[] = [];
      const sendPart = async () => {
        const Body = Buffer.concat(pending);
        pending = [];
        pendingBytes = 0;
        if (uploadId === undefined) {
          const created = await client.send(new CreateMultipartUploadCommand({ Bucket, Key, ContentType: sniffContentType(Body) }));
          uploadId = created.UploadId;
        }
        const PartNumber = done.length + 1;
        const sent = await client.send(new UploadPartCommand({ Bucket, Key, UploadId: uploadId, PartNumber, Body, ContentLength: Body.length }));
        done.push({ ETag: sent.ETag, PartNumber });
      };
      try {
        // Leaving the loop early destroys `body`, as the local store's pipeline does.
        for await (const chunk of body as AsyncIterable<Buffer>) {
          bytes += chunk.length;
          if (bytes > maxBytes) break;
          pending.push(chunk);
          pendingBytes += chunk.length;
          if (pendingBytes >= S3_PART_BYTES) await sendPart();
        }
        if (bytes > maxBytes) {
          if (uploadId !== undefined) await abort(Key, uploadId);
          return { ok: false, reason: 'too_large' };
        }
        if (uploadId === undefined) {
          await putWhole(Key, pending);
        } else {
          if (pendingBytes > 0) await sendPart();
          await client.send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId: uploadId, MultipartUpload: { Parts: done } }));
        }
        return { ok: true, bytes, path: Key };
      } catch (err) {
        if (uploadId !== undefined) await abort(Key, uploadId);
        body.destroy();
        throw err;
      }
    },

    async remove(path) {
      // S3 answers a delete of a missing key with success, as `rm --force` does.
      await client.send(new DeleteObjectCommand({ Bucket, Key: objectKeyOf(path) }));
    },

    async open(path) {
      await mkdir(deps.downloadDir, { recursive: true });
      const file = join(deps.downloadDir, `download-${randomBytes(12).toString('hex')}`);
      const got = await client.send(new GetObjectCommand({ Bucket, Key: objectKeyOf(path) }));
      if (!got.Body) throw new Error('the media store returned no body');
      await writeNewFile(file, got.Body as Readable);
      const source = await openFileSource(file);
      let blobHandedOut = false;
      return {
        ...source,
        blob: (type) => {
          blobHandedOut = true;
          return source.blob(type);
        },
        async close() {
          await source.close();
          // A file-backed Blob reads its file when the request body is sent, which may be after `close` (the
          // Facebook adapter closes first): its copy stays a while, then goes (the sweep removes what a killed
          // process left).
          if (!blobHandedOut) await rm(file, { force: true });
          else setTimeout(() => void rm(file, { force: true }), BLOB_GRACE_MS).unref();
        },
      };
    },
  };

  async function abort(Key: string, UploadId: string): Promise<void> {
    // Parts left behind by a failed abort are invisible and billed only: a lifecycle rule on the bucket ends them.
    await client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId })).catch(() => undefined);
  }

  const links: PublicMediaLinks = {
    linkFor: (mediaId) => presignGetObject(settings, currentCredentials(), s3KeyOf(mediaId), deps.clock.now(), settings.urlTtlSeconds),
    // Uploads are served by the bucket, never by the service's own /media route.
    verify: () => false,
  };

  return { store, links, close: () => client.destroy() };
}
