import type { ContentRow } from '../../../db/repositories/contents.repo.js';
import { ServiceError } from '../errors.js';
import type { ContentStatus } from '../../vocabulary/content-statuses.js';

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
    status: row.status as ContentStatus,
  });
}

/** A content waiting on its review cannot be published directly: it is approved (or sent back) first. */
export function awaitingReview(row: ContentRow): ServiceError {
  const why = row.status === 'pending_approval' ? 'it is waiting for approval: an approver approves it (POST …/approve, optionally with publish_now)' : 'changes were requested: edit it, then submit it again';
  return new ServiceError('content_not_editable', `Content ${row.id} cannot be published now: ${why}.`, { status: row.status as ContentStatus });
}

/** A review step asked of a content not in the status it needs (approve a content not pending, submit a scheduled one). */
export function wrongReviewStatus(row: ContentRow, expected: string): ServiceError {
  return new ServiceError('content_not_editable', `Content ${row.id} is ${row.status}; this step needs a content that is ${expected}.`, { status: row.status as ContentStatus });
}

export function invalid(path: string, message: string): ServiceError {
  return new ServiceError('validation_failed', `${path}: ${message}`, { fields: [{ path, message }] });
}
