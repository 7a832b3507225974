import type { ContentRow } from '../../../db/repositories/contents.repo.js';
import { ServiceError } from '../errors.js';
import type { SETTLED_STATUSES } from '../../vocabulary/content-statuses.js';

export function contentNotFound(id: string): ServiceError {
  return new ServiceError('not_found', `Content ${id} was not found in this workspace.`);
}

export function notEditable(row: ContentRow): ServiceError {
  const why =
    row.status === 'canceled'
      ? 'it was canceled'
      : row.status === 'publishing'
        ? 'publishing has started'
        : `it has finished publishing (${row.status})`;
  return new ServiceError('content_not_editable', `Content ${row.id} can no longer be changed: ${why}. Only draft and scheduled contents can be edited, canceled or published now.`, {
    status: row.status as (typeof SETTLED_STATUSES)[number],
  });
}

export function invalid(path: string, message: string): ServiceError {
  return new ServiceError('validation_failed', `${path}: ${message}`, { fields: [{ path, message }] });
}
