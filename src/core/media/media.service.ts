import { PassThrough, type Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import { contentMediaSources, contentsMentioningMedia, deleteMedia, findMedia, findMediaById, findMediaMany, insertMedia, listMedia, type MediaRow } from '../../../db/repositories/media.repo.js';
import type { Database } from '../../../db/schema.js';
import type { MediaFetcher } from './media-fetcher.js';
import type { MediaStore, StoredFile } from './media-store.js';
import type { PublicMediaLinks } from './public-links.js';
import { type Clock, toIso } from '../clock.js';
import { ServiceError } from '../errors.js';
import { newId } from '../ids.js';
import type { MetersService } from '../meters/meters.service.js';
import type { Principal } from '../principal.js';
import { assertWorkspaceAccess } from '../workspaces/access.js';
import { recordAudit } from '../audit/record.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import type { ContentStatus } from '../../vocabulary/content-statuses.js';
import { MEDIA_PROBE_DEADLINE_MS } from '../contents/content-plan.js';
import { MEDIA_NEEDED_BY, type MediaItem, type MediaList, type MediaListQuery, UPLOAD_CONTENT_TYPES, type UploadedMedia } from './media.schema.js';

type UploadType = (typeof UPLOAD_CONTENT_TYPES)[number];

/** The upload type a Content-Type header names (parameters and case ignored), or undefined for any other. */
function uploadTypeOf(contentType: string | null): UploadType | undefined {
  const bare = contentType?.split(';')[0]?.trim().toLowerCase();
  return UPLOAD_CONTENT_TYPES.find((t) => t === bare);
}

/** The media ids a stored content request or input names (`media: [{media_id}]`); anything unreadable names none. */
function mediaIdsOf(json: string | null): string[] {
  if (json === null) return [];
  try {
    const parsed = JSON.parse(json) as { media?: unknown };
    if (!Array.isArray(parsed.media)) return [];
    return parsed.media.flatMap((m: unknown) => (typeof m === 'object' && m !== null && typeof (m as { media_id?: unknown }).media_id === 'string' ? [(m as { media_id: string }).media_id] : []));
  } catch {
    return [];
  }
}

export type MediaService = ReturnType<typeof createMediaService>;

/** An address without its query and fragment, which may carry a signature or a token: what the audit log keeps. */
function withoutQuery(url: string): string | null {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return null;
  }
}

export function createMediaService(deps: {
  db: Kysely<Database>;
  clock: Clock;
  meters: MetersService;
  store: MediaStore;
  links: PublicMediaLinks;
  /** How `importFromUrl` reads an address: the outbound guard under the service's policy. */
  fetcher: MediaFetcher;
  /** Overrides MEDIA_PROBE_DEADLINE_MS for `importFromUrl` (tests). */
  importDeadlineMs?: number;
}) {
  const { db, clock, meters, store, links, fetcher } = deps;
  const importDeadlineMs = deps.importDeadlineMs ?? MEDIA_PROBE_DEADLINE_MS;

  /** What is left of the workspace's `media_storage` meter, in bytes. */
  async function storageRoom(workspaceId: string): Promise<{ limit: number; used: number; room: number }> {
    const storage = (await meters.usage(workspaceId)).meters.find((m) => m.meter === 'media_storage')!;
    return { limit: storage.limit, used: storage.used, room: Math.max(0, storage.limit - storage.used) };
  }

  function storageFull(storage: { limit: number; used: number }, what: string): ServiceError {
    return new ServiceError('limit_reached', `${what} does not fit the plan's media_storage (${storage.limit} bytes).`, {
      meter: 'media_storage',
      limit: storage.limit,
      used: storage.used,
      resolve: 'desativar_outra',
    });
  }

  /**
   * Counts a stored file on the meter and records it, in one transaction; the file is removed when that fails
   * (the meter may have filled meanwhile: `limit_reached`).
   */
  async function record(principal: Principal, workspaceId: string, id: string, type: UploadType, saved: Extract<StoredFile, { ok: true }>, source: string | null): Promise<MediaRow> {
    const row: MediaRow = { id, workspaceId, contentType: type, sizeBytes: saved.bytes, storagePath: saved.path, createdAt: clock.now() };
    try {
      await db.transaction().execute(async (tx) => {
        await meters.consume(tx, workspaceId, [{ meter: 'media_storage', amount: saved.bytes }]);
        await insertMedia(tx, row);
        await recordAudit(tx, principal, 'media.uploaded', { type: 'media', id, label: type }, row.createdAt, { content_type: type, size_bytes: saved.bytes, ...(source === null ? {} : { source_url: source }) });
      });
    } catch (err) {
      await store.remove(saved.path);
      throw err;
    }
    return row;
  }

  /** For each of `ids`, the contents that use it, newest first (read from their stored media lists). */
  async function usedBy(workspaceId: string, ids: readonly string[], executor: Kysely<Database> = db): Promise<Map<string, { content_id: string; status: ContentStatus }[]>> {
    const out = new Map<string, { content_id: string; status: ContentStatus }[]>(ids.map((id) => [id, []]));
    for (const c of await contentsMentioningMedia(executor, workspaceId, ids)) {
      const named = new Set([...mediaIdsOf(c.request), ...mediaIdsOf(c.input)]);
      for (const id of named) out.get(id)?.push({ content_id: c.id, status: c.status as ContentStatus });
    }
    return out;
  }

  const item = (row: MediaRow, uses: { content_id: string; status: ContentStatus }[]): MediaItem => ({
    id: row.id,
    content_type: row.contentType as MediaItem['content_type'],
    size_bytes: row.sizeBytes,
    created_at: toIso(row.createdAt),
    url: links.linkFor(row.id),
    used_by: uses,
  });

  return {
    /**
     * The workspace's uploads, newest first, each with a signed address of the file (a thumbnail for people) and
     * the contents that use it. Cursor-paginated like every list.
     * @throws ServiceError `validation_failed` (cursor).
     */
    async list(principal: Principal, workspaceId: string, query: MediaListQuery): Promise<MediaList> {
      assertWorkspaceAccess(principal, workspaceId, 'media.read');
      const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
      const rows = await listMedia(db, workspaceId, { after, limit: query.limit + 1 });
      const page = rows.slice(0, query.limit);
      const uses = await usedBy(workspaceId, page.map((r) => r.id));
      const last = page.at(-1);
      return { data: page.map((r) => item(r, uses.get(r.id) ?? [])), next_cursor: rows.length > query.limit && last ? encodeCursor(last) : null };
    },

    /**
     * The uploads each content names, in its order, each with a signed address (thumbnails of a list of posts).
     * Deleted uploads are left out; contents of other workspaces name none.
     */
    async ofContents(principal: Principal, workspaceId: string, contentIds: readonly string[]): Promise<Map<string, Pick<MediaItem, 'id' | 'content_type' | 'url'>[]>> {
      assertWorkspaceAccess(principal, workspaceId, 'media.read');
      const sources = await contentMediaSources(db, workspaceId, contentIds);
      const named = new Map(sources.map((c) => [c.id, [...new Set([...mediaIdsOf(c.input), ...mediaIdsOf(c.request)])]]));
      const rows = new Map((await findMediaMany(db, workspaceId, [...new Set([...named.values()].flat())])).map((r) => [r.id, r]));
      const out = new Map<string, Pick<MediaItem, 'id' | 'content_type' | 'url'>[]>();
      for (const [contentId, ids] of named) {
        out.set(
          contentId,
          ids.flatMap((id) => {
            const row = rows.get(id);
            return row ? [{ id: row.id, content_type: row.contentType as MediaItem['content_type'], url: links.linkFor(row.id) }] : [];
          }),
        );
      }
      return out;
    },

    /** One upload as the list shows it. @throws ServiceError `not_found`. */
    async get(principal: Principal, workspaceId: string, mediaId: string): Promise<MediaItem> {
      assertWorkspaceAccess(principal, workspaceId, 'media.read');
      const row = await findMedia(db, workspaceId, mediaId);
      if (!row) throw new ServiceError('not_found', `Media ${mediaId} was not found in this workspace.`);
      return item(row, (await usedBy(workspaceId, [row.id])).get(row.id) ?? []);
    },

    /**
     * Deletes an upload and gives its bytes back to the `media_storage` meter. Refused while a content that may
     * still publish uses it (draft, scheduled, publishing): the file is what it would send. Contents that finished
     * (published, partial, failed, canceled) keep their record but lose the file: a later retry of a failed one
     * fails on it. The check and the delete run in one transaction, so the refusal reflects the moment of the
     * delete; a content created in the same instant may still name it (its job then fails on the missing file).
     * @throws ServiceError `not_found`, `media_in_use` (with the contents that need it).
     */
    async remove(principal: Principal, workspaceId: string, mediaId: string): Promise<void> {
      assertWorkspaceAccess(principal, workspaceId, 'media.delete');
      const gone = () => new ServiceError('not_found', `Media ${mediaId} was not found in this workspace.`);
      const deleted = await db.transaction().execute(async (tx) => {
        const row = await findMedia(tx, workspaceId, mediaId);
        if (!row) throw gone();
        const needing = ((await usedBy(workspaceId, [mediaId], tx)).get(mediaId) ?? []).filter((u) => (MEDIA_NEEDED_BY as readonly string[]).includes(u.status));
        if (needing.length > 0) {
          throw new ServiceError('media_in_use', `Media ${mediaId} is used by ${needing.length === 1 ? 'a content' : `${needing.length} contents`} that may still publish (${needing.map((u) => `${u.content_id}: ${u.status}`).join(', ')}). Delete or edit ${needing.length === 1 ? 'it' : 'them'} first, or wait until publishing ends.`, {
            contents: needing,
          });
        }
        const removed = await deleteMedia(tx, workspaceId, mediaId);
        if (!removed) throw gone();
        await meters.release(tx, workspaceId, 'media_storage', removed.sizeBytes);
        await recordAudit(tx, principal, 'media.deleted', { type: 'media', id: mediaId, label: removed.contentType }, clock.now(), { size_bytes: removed.sizeBytes });
        return removed;
      });
      // After the commit: a failed delete never leaves a row without its file.
      await store.remove(deleted.storagePath);
    },

    /**
     * Stores an upload, streamed (never held in memory), counted on the `media_storage` meter in bytes. The
     * service's 100 MB cap for unknown-size addresses does not apply (spec 8): the meter bounds it. An empty
     * body is refused: no network publishes a 0-byte file, and it would fail only later, after a charge.
     * @throws ServiceError `validation_failed` (type, or an empty body: field `body`), `limit_reached`
     *   (media_storage).
     */
    async upload(principal: Principal, workspaceId: string, contentType: string, body: Readable): Promise<UploadedMedia> {
      assertWorkspaceAccess(principal, workspaceId, 'media.upload');
      const type = uploadTypeOf(contentType);
      if (type === undefined) {
        body.resume();
        throw new ServiceError('validation_failed', `Content-Type: must be one of ${UPLOAD_CONTENT_TYPES.join(', ')}`, {
          fields: [{ path: 'Content-Type', message: 'unsupported media type' }],
        });
      }
      const storage = await storageRoom(workspaceId);
      const id = newId('media_');
      const saved = await store.save(workspaceId, id, body, storage.room);
      if (!saved.ok) throw storageFull(storage, 'The upload');
      if (saved.bytes === 0) {
        await store.remove(saved.path);
        throw new ServiceError('validation_failed', 'body: the file is empty (0 bytes); send the file itself as the request body', {
          fields: [{ path: 'body', message: 'must not be empty' }],
        });
      }
      const row = await record(principal, workspaceId, id, type, saved, null);
      return { id, content_type: type, size_bytes: saved.bytes, created_at: toIso(row.createdAt) };
    },

    /**
     * Copies the file at a public address into the library, as `upload` stores a sent one: the same types, the
     * same `media_storage` meter (the file never passes what is left of it) and the same storage, streamed. The
     * address goes through the outbound guard (public https only; every redirect and connection is checked
     * again); its type is checked from a HEAD (or one-byte) probe before any body is read, and again on the
     * download. The whole copy ends within the media probe deadline (10 s), so a caller never waits longer on a
     * slow host. Each call makes a new upload.
     * @throws ServiceError `validation_failed` (field `url`: not a public https address, unreachable, an HTTP
     *   error, too slow, not one of the upload types, an empty file), `limit_reached` (media_storage).
     */
    async importFromUrl(principal: Principal, workspaceId: string, url: string): Promise<MediaItem> {
      assertWorkspaceAccess(principal, workspaceId, 'media.upload');
      const refused = (why: string) => new ServiceError('validation_failed', `url: the address ${why}`, { fields: [{ path: 'url', message: why }] });
      const deadline = new AbortController();
      const timer = setTimeout(() => deadline.abort(), importDeadlineMs);
      // Same words as the contents' media addresses (content-plan.ts), so both doors read alike.
      const failed = (result: { reason: string; status?: number | undefined }) =>
        refused(
          deadline.signal.aborted
            ? `did not deliver the file within ${importDeadlineMs / 1000} s`
            : result.reason === 'blocked'
              ? 'is not a public https address'
              : result.reason === 'http_error'
                ? `answered HTTP ${result.status ?? 'error'}`
                : 'could not be reached',
        );
      const wrongType = (type: string | null) =>
        refused(`${type === null ? 'does not say what type of file it serves' : `serves ${type.split(';')[0]?.trim() ?? type}`}; it must be one of ${UPLOAD_CONTENT_TYPES.join(', ')}`);
      try {
        const probed = await fetcher.probe(url, deadline.signal);
        if (!probed.ok) throw failed(probed);
        if (probed.contentType !== null && uploadTypeOf(probed.contentType) === undefined) throw wrongType(probed.contentType);
        const storage = await storageRoom(workspaceId);
        if (probed.size !== null && probed.size > storage.room) throw storageFull(storage, 'The file');

        const id = newId('media_');
        const body = new PassThrough();
        const saving = store.save(workspaceId, id, body, storage.room);
        // A store that fails stops reading: destroying the stream fails the pending write, so the download stops
        // too, and the store's own error is the answer (a fault, not the address's).
        const storeFailure: { err?: unknown } = {};
        saving.catch((err: unknown) => {
          storeFailure.err = err ?? new Error('media store failed');
          body.destroy();
        });
        // The write callback comes once the store took the piece: the download goes at the store's pace.
        const sink = (chunk: Buffer) => new Promise<void>((resolve, reject) => body.write(chunk, (err) => (err ? reject(err) : resolve())));
        const got = await fetcher.stream(url, storage.room, deadline.signal, sink);
        if (!got.ok) {
          // Read before stopping the store ourselves, which fails `saving` too.
          const storeError = storeFailure.err;
          body.destroy();
          await saving.catch(() => undefined);
          if (storeError !== undefined) throw storeError;
          throw got.reason === 'too_large' ? storageFull(storage, 'The file') : failed(got);
        }
        body.end();
        const saved = await saving;
        if (!saved.ok) throw storageFull(storage, 'The file');
        const served = got.contentType ?? probed.contentType;
        const type = uploadTypeOf(served);
        if (type === undefined || saved.bytes === 0) {
          await store.remove(saved.path);
          throw type === undefined ? wrongType(served) : refused('served an empty file (0 bytes)');
        }
        return item(await record(principal, workspaceId, id, type, saved, withoutQuery(url)), []);
      } finally {
        clearTimeout(timer);
        deadline.abort();
      }
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
