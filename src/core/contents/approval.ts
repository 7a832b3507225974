import type { Kysely } from 'kysely';
import { findApiKey } from '../../../db/repositories/api-keys.repo.js';
import { findApprovalRoles, insertContentReview } from '../../../db/repositories/approvals.repo.js';
import type { ContentRow } from '../../../db/repositories/contents.repo.js';
import { findUser } from '../../../db/repositories/users.repo.js';
import type { Database } from '../../../db/schema.js';
import { recordAudit } from '../audit/record.js';
import { ServiceError } from '../errors.js';
import { type ApprovalEventType, recordApprovalEvent } from '../events/events.js';
import { newTimeOrderedId } from '../ids.js';
import { authorize } from '../permissions/authorize.js';
import { roleCan } from '../permissions/roles.js';
import type { Access, Principal } from '../principal.js';
import { contentTarget } from './audit-target.js';

/**
 * Who needs a person's approval before a content goes out (README, Approvals): a role that may not publish
 * (contributor) always; otherwise a role the brand lists in `approval_roles`, or, when the brand sets none, the
 * workspace's default list.
 */
export function needsApproval(access: Access, roles: { brand: readonly string[] | null; workspace: readonly string[] | null }): boolean {
  if (!roleCan(access.role, 'contents.publish')) return true;
  return (roles.brand ?? roles.workspace ?? []).includes(access.role);
}

/** `needsApproval` for `principal` on one brand, reading the brand's and the workspace's lists. */
export async function approvalRequired(db: Kysely<Database>, principal: Principal, workspaceId: string, brandId: string): Promise<boolean> {
  return needsApproval(principal, await findApprovalRoles(db, workspaceId, brandId));
}

/**
 * The decision for a content that asks to go out (scheduled or published now), replacing the `contents.publish`
 * check: `review` when the caller needs approval (the content waits as pending_approval, nothing runs), `release`
 * when it may publish itself.
 * @throws ServiceError `forbidden` (with `permission`) when the caller may not even draft on the brand.
 */
export async function releaseOrReview(db: Kysely<Database>, principal: Principal, workspaceId: string, brandId: string): Promise<'release' | 'review'> {
  authorize(principal, workspaceId, 'contents.draft', brandId);
  if (await approvalRequired(db, principal, workspaceId, brandId)) return 'review';
  authorize(principal, workspaceId, 'contents.publish', brandId);
  return 'release';
}

/** The actor a content remembers as its submitter: the approver may not be the same one (see `assertMayApprove`). */
export function actorRef(principal: Principal): string {
  switch (principal.kind) {
    case 'user':
      return `user:${principal.userId}`;
    case 'api_key':
      return `api_key:${principal.keyId}`;
    case 'oauth':
      return `oauth:${principal.clientId}`;
  }
}

/**
 * May `principal` approve (or send back) this content? It needs `contents.approve` on the content's brand, and
 * nobody approves what they submitted themselves unless they could have published it without approval anyway
 * (an owner or admin submitting voluntarily may approve; a contributor's or an editor-under-approval's own
 * content needs someone else).
 * @throws ServiceError `forbidden` (with `permission: contents.approve`).
 */
export async function assertMayApprove(db: Kysely<Database>, principal: Principal, row: ContentRow): Promise<void> {
  authorize(principal, row.workspaceId, 'contents.approve', row.brandId);
  if (row.submittedBy === actorRef(principal) && (await approvalRequired(db, principal, row.workspaceId, row.brandId))) {
    throw new ServiceError('forbidden', 'Nobody approves a content they submitted themselves unless they could publish it without approval: another approver must.', {
      permission: 'contents.approve',
    });
  }
}

/** The actor as copied into the review thread and the events: a readable label read now. */
export interface ActorLabel {
  type: 'user' | 'api_key' | 'oauth';
  id: string;
  label: string | null;
  role: string;
}

export async function describeActor(db: Kysely<Database>, principal: Principal): Promise<ActorLabel> {
  switch (principal.kind) {
    case 'user':
      return { type: 'user', id: principal.userId, label: (await findUser(db, principal.userId))?.email ?? null, role: principal.role };
    case 'api_key':
      return { type: 'api_key', id: principal.keyId, label: (await findApiKey(db, principal.workspaceId, principal.keyId))?.name ?? null, role: principal.role };
    case 'oauth':
      return { type: 'oauth', id: principal.clientId, label: principal.clientId, role: principal.role };
  }
}

const STEP: Record<'submitted' | 'approved' | 'changes_requested', { audit: string; event: ApprovalEventType }> = {
  submitted: { audit: 'content.submitted', event: 'content.approval_requested' },
  approved: { audit: 'content.approved', event: 'content.approved' },
  changes_requested: { audit: 'content.changes_requested', event: 'content.changes_requested' },
};

/**
 * Records one review step in the transaction that took it: the thread entry, the audit entry and the webhook
 * event (sent only to endpoints that list its type).
 */
export async function recordReviewStep(
  tx: Kysely<Database>,
  principal: Principal,
  step: keyof typeof STEP,
  row: ContentRow,
  now: number,
  comment: string | null = null,
  details: Record<string, unknown> = {},
): Promise<void> {
  const actor = await describeActor(tx, principal);
  await insertContentReview(tx, {
    id: newTimeOrderedId('rev_', now),
    workspaceId: row.workspaceId,
    contentId: row.id,
    kind: step,
    actorType: actor.type,
    actorId: actor.id,
    actorLabel: actor.label,
    actorRole: actor.role,
    body: comment,
    createdAt: now,
  });
  // Named by its first words, as every other content entry is, so the log reads without looking ids up.
  await recordAudit(tx, principal, STEP[step].audit, contentTarget(row.id, row.input, row.contentType), now, { status: row.status, ...details });
  await recordApprovalEvent(tx, {
    type: STEP[step].event,
    content: { id: row.id, workspaceId: row.workspaceId, brandId: row.brandId, status: row.status, publishAt: row.publishAt },
    actor: { type: actor.type, id: actor.id, label: actor.label, role: actor.role },
    comment,
    now,
  });
}
