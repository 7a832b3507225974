import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import { findMediaById, insertMedia } from '../../../db/repositories/media.repo.js';
import type { Database } from '../../../db/schema.js';
import type { MediaStore } from './media-store.js';
import type { PublicMediaLinks } from './public-links.js';
import { type Clock, toIso } from '../clock.js';
import { ServiceError } from '../errors.js';
import { newId } from '../ids.js';
import type { MetersService } from '../meters/meters.service.js';
import type { Principal } from '../principal.js';
import { assertWorkspaceAccess } from '../workspaces/access.js';
import { UPLOAD_CONTENT_TYPES, type UploadedMedia } from './media.schema.js';

export type MediaService = ReturnType<typeof createMediaService>;

export function createMediaService(deps: { db: Kysely<Database>; clock: Clock; meters: MetersService; store: MediaStore; links: PublicMediaLinks }) {
  const { db, clock, meters, store, links } = deps;

  return {
    /**
     * Stores an upload, streamed (never held in memory), counted on the `media_storage` meter in bytes. The
     * service's 100 MB cap for unknown-size addresses does not apply (spec 8): the meter bounds it. An empty
     * body is refused: no network publishes a 0-byte file, and it would fail only later, after a charge.
     * @throws ServiceError `validation_failed` (type, or an empty body: field `body`), `limit_reached`
     *   (media_storage).
     */
    async upload(principal: Principal, workspaceId: string, contentType: string, body: Readable): Promise<UploadedMedia> {
      assertWorkspaceAccess(principal, workspaceId);
      const type = UPLOAD_CONTENT_TYPES.find((t) => t === contentType.split(';')[0]?.trim().toLowerCase());
      if (type === undefined) {
        body.resume();
        throw new ServiceError('validation_failed', `Content-Type: must be one of ${UPLOAD_CONTENT_TYPES.join(', ')}`, {
          fields: [{ path: 'Content-Type', message: 'unsupported media type' }],
        });
      }
      const storage = (await meters.usage(workspaceId)).meters.find((m) => m.meter === 'media_storage')!;
      const room = Math.max(0, storage.limit - storage.used);
      const id = newId('media_');
      const saved = await store.save(workspaceId, id, body, room);
      const full = () =>
        new ServiceError('limit_reached', `The upload does not fit the plan's media_storage (${storage.limit} bytes).`, {
          meter: 'media_storage',
          limit: storage.limit,
          used: storage.used,
          resolve: 'desativar_outra',
        });
      if (!saved.ok) throw full();
      if (saved.bytes === 0) {
        await store.remove(saved.path);
        throw new ServiceError('validation_failed', 'body: the file is empty (0 bytes); send the file itself as the request body', {
          fields: [{ path: 'body', message: 'must not be empty' }],
        });
      }
      const now = clock.now();
      try {
        await db.transaction().execute(async (tx) => {
          await meters.consume(tx, workspaceId, [{ meter: 'media_storage', amount: saved.bytes }]);
          await insertMedia(tx, { id, workspaceId, contentType: type, sizeBytes: saved.bytes, storagePath: saved.path, createdAt: now });
        });
      } catch (err) {
        await store.remove(saved.path);
        throw err;
      }
      return { id, content_type: type, size_bytes: saved.bytes, created_at: toIso(now) };
    },

    /** A signed address of an upload that a network can download it from, for the links' lifetime. */
    publicLink(mediaId: string): string {
      return links.linkFor(mediaId);
    },

    /**
     * Opens an upload through its signed address. Every refusal is the same `not_found`, so a prober learns
     * nothing about which ids exist.
     * @throws ServiceError `not_found`.
     */
    async openPublic(mediaId: string, exp: string, sig: string): Promise<{ path: string; contentType: string; sizeBytes: number }> {
      const gone = () => new ServiceError('not_found', 'This media address is unknown or has expired.');
      if (!links.verify(mediaId, exp, sig)) throw gone();
      const row = await findMediaById(db, mediaId);
      if (!row) throw gone();
      return { path: row.storagePath, contentType: row.contentType, sizeBytes: row.sizeBytes };
    },
  };
}
