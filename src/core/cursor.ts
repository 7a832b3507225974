import { ServiceError } from './errors.js';

/** Keyset position of a list sorted newest first on (created_at, id); opaque to callers. */
export interface CursorPosition {
  createdAt: number;
  id: string;
}

export function encodeCursor(row: CursorPosition): string {
  return Buffer.from(`${row.createdAt}:${row.id}`).toString('base64url');
}

/** @throws ServiceError `validation_failed` for text that is not a cursor this service returned. */
export function decodeCursor(cursor: string): CursorPosition {
  const [at, id] = Buffer.from(cursor, 'base64url').toString('utf8').split(':');
  const createdAt = Number(at);
  if (!Number.isSafeInteger(createdAt) || id === undefined || id.length === 0) {
    throw new ServiceError('validation_failed', 'cursor: is not a cursor returned by this list', { fields: [{ path: 'cursor', message: 'invalid cursor' }] });
  }
  return { createdAt, id };
}
