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

/** Keyset position of a list sorted earliest first on (publish_at, id): the calendar feed. */
export interface WindowCursorPosition {
  at: number;
  id: string;
}

/** A calendar cursor is marked (`w:`) so a cursor of the other order is refused rather than misread. */
export function encodeWindowCursor(row: WindowCursorPosition): string {
  return Buffer.from(`w:${row.at}:${row.id}`).toString('base64url');
}

/** @throws ServiceError `validation_failed` for text that is not a calendar cursor this service returned. */
export function decodeWindowCursor(cursor: string): WindowCursorPosition {
  const [mark, at, id] = Buffer.from(cursor, 'base64url').toString('utf8').split(':');
  const when = Number(at);
  if (mark !== 'w' || !Number.isSafeInteger(when) || id === undefined || id.length === 0) {
    throw new ServiceError('validation_failed', 'cursor: is not a cursor returned by this calendar list', { fields: [{ path: 'cursor', message: 'invalid cursor' }] });
  }
  return { at: when, id };
}
