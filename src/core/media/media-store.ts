import type { Readable } from 'node:stream';

export type StoredFile = { ok: true; bytes: number; path: string } | { ok: false; reason: 'too_large' };

/** Where uploads live (the embedded default keeps them on local disk under MEDIA_DIR). */
export interface MediaStore {
  /** Streams `body` to storage, stopping as soon as it passes `maxBytes` (nothing is kept then). */
  save(workspaceId: string, id: string, body: Readable, maxBytes: number): Promise<StoredFile>;
  remove(path: string): Promise<void>;
}
