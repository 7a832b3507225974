/**
 * A media file read piece by piece, so a multi-gigabyte video goes to a network in chunks without ever being
 * held in memory whole.
 */
export interface MediaSource {
  size: number;
  /** `length` bytes from `offset` (fewer only at the end of the file). */
  read(offset: number, length: number): Promise<Buffer>;
  /**
   * The whole file as a Blob for a request body; a file on disk gives a file-backed Blob that fetch streams
   * from disk. Valid until `close`.
   */
  blob(type: string): Promise<Blob>;
  /** Releases the file (and removes a temporary download). */
  close(): Promise<void>;
}

/** A source over bytes already in memory (small files, tests). */
export function bufferSource(bytes: Buffer): MediaSource {
  return {
    size: bytes.length,
    read: async (offset, length) => bytes.subarray(offset, Math.min(offset + length, bytes.length)),
    blob: async (type) => new Blob([new Uint8Array(bytes)], { type }),
    close: async () => {},
  };
}
