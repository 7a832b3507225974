import { findApprovalRoles, insertContentReview, listContentReviews, listPendingContents, setWorkspaceApprovalRoles } from '../../../db/repositories/approvals.repo.js';
import { findContent, transitionContent } from '../../../db/repositories/contents.repo.js';
import { insertJobs, listJobsForContent } from '../../../db/repositories/jobs.repo.js';
import type { ApprovalPolicy, ApproveInput, CommentInput, PendingList, PendingListQuery, RequestChangesInput, ReviewEntry, ReviewThread } from '../approvals/approvals.schema.js';
import { APPROVAL_ROLES } from '../approvals/approvals.schema.js';
import { recordAudit } from '../audit/record.js';
import { toIso } from '../clock.js';
import { newTimeOrderedId } from '../ids.js';
import { storeRequest } from '../jobs/stored-request.js';
import { authorize, brandScope } from '../permissions/authorize.js';
import type { Principal } from '../principal.js';
import { type PublishTime, resolvePublishAt } from '../scheduling/publish-time.js';
import { PAYMENT_MODE } from '../wallet/wallet.schema.js';
import { actorRef, assertMayApprove, describeActor, recordReviewStep } from './approval.js';
import { chargeStart } from './charging.js';
import { contentNotFound, invalid, wrongReviewStatus } from './content-errors.js';
import { planContent } from './content-plan.js';
import type { Content } from './contents.schema.js';
import { storedFields } from './fields.js';
import { renderContent } from './render.js';
import { type ContentsDeps, jobRowsFor, withVersionRetry, zoneOf } from './steps.js';

/**
 * The review of a content (README, Approvals): submit, approve, request changes, the comment thread and the list
 * of contents waiting. Every step is one conditional update on the content's status (and version), so of an
 * approval, an edit and a cancel racing for one content exactly one moves it, and a double approval starts and
 * charges it once.
 */
export function contentReview(deps: ContentsDeps) {
  const { db, clock, wallet } = deps;

  async function found(workspaceId: string, contentId: string) {
    const row = await findContent(db, workspaceId, contentId);
    if (!row) throw contentNotFound(contentId);
    return row;
  }

  return {
    /**
     * Submits a draft (or a content sent back with changes requested) for approval: it becomes pending_approval,
     * keeping its publish_at; nothing runs until a person approves it. Submitting a content already pending
     * answers it as it is.
     * @throws ServiceError `not_found`, `forbidden`, `content_not_editable` (not a draft nor changes_requested).
     */
    async submit(principal: Principal, workspaceId: string, contentId: string): Promise<Content> {
      authorize(principal, workspaceId, 'contents.read');
      return withVersionRetry(async () => {
        const row = await found(workspaceId, contentId);
        authorize(principal, workspaceId, 'contents.draft', row.brandId);
        if (row.status === 'pending_approval') return renderContent(row, [], clock.now());
        if (row.status !== 'draft' && row.status !== 'changes_requested') throw wrongReviewStatus(row, 'a draft or changes_requested');
        const now = clock.now();
        return db.transaction().execute(async (tx) => {
          const written = await transitionContent(tx, {
            workspaceId,
            id: contentId,
            from: [row.status],
            version: row.version,
            now,
            set: { status: 'pending_approval', queueSlot: null, submittedBy: actorRef(principal) },
          });
          if (!written) return null;
          await recordReviewStep(tx, principal, 'submitted', written, now);
          return renderContent(written, [], now);
        });
      });
    },

    /**
     * Approves a content pending approval; it then goes out exactly as a creation that schedules or publishes
     * would: at `publish_at` (the one given, else its own) with its jobs waiting as scheduled and nothing charged
     * until they start, or at once (`publish_now`, or a content that never had a time) with its jobs queued and
     * the content charged by the one charge rule, in the same transaction. A content whose time has passed needs
     * `publish_now` or a new `publish_at`. The content is checked again (connections, media) first.
     * One conditional update decides: an edit or a cancel that committed first wins (409), and so does the
     * first of two approvals.
     * @throws ServiceError `not_found`, `forbidden` (no `contents.approve`, or one's own content, see
     *   `assertMayApprove`), `content_not_editable` (not pending, or changed meanwhile), `validation_failed`
     *   (`publish_at`), the checks' errors, `limit_reached` and the credit errors (nothing changes then).
     */
    async approve(principal: Principal, workspaceId: string, contentId: string, input: ApproveInput = {}): Promise<Content> {
      // The permission first, then on the content's brand, then its state: a caller who may not approve learns
      // nothing of the content's status.
      authorize(principal, workspaceId, 'contents.approve');
      const row = await found(workspaceId, contentId);
      await assertMayApprove(db, principal, row);
      if (row.status !== 'pending_approval') throw wrongReviewStatus(row, 'pending_approval');
      const now = clock.now();
      let time: PublishTime | null;
      if (input.publish_now === true) time = null;
      else if (input.publish_at !== undefined) time = resolvePublishAt(input.publish_at, input.time_zone ?? row.timeZone ?? (await zoneOf(db, workspaceId, row.brandId)), now);
      else if (row.publishAt === null) time = null;
      else if (row.publishAt <= now) throw invalid('publish_at', 'the content\'s time has passed while it waited (approval_overdue): send publish_now: true or a new publish_at');
      else time = { instant: row.publishAt, zone: row.timeZone ?? 'UTC', local: row.localPublishAt ?? '' };
      const fields = storedFields(row);
      const plan = await planContent(db, workspaceId, { ...fields, brand_id: row.brandId }, deps.probeMedia);
      return db.transaction().execute(async (tx) => {
        const written = await transitionContent(tx, {
          workspaceId,
          id: contentId,
          from: ['pending_approval'],
          version: row.version,
          now,
          set: {
            status: time === null ? 'publishing' : 'scheduled',
            request: storeRequest(plan),
            publishAt: time === null ? now : time.instant,
            timeZone: time?.zone ?? null,
            localPublishAt: time?.local ?? null,
            queueSlot: null,
          },
        });
        if (!written) {
          const after = await findContent(tx, workspaceId, contentId);
          if (!after) throw contentNotFound(contentId);
          // Changed while it was being approved (an edit, a cancel, another approval): this approval saw another version.
          throw wrongReviewStatus(after, after.status === 'pending_approval' ? 'pending_approval and unchanged since this approval read it; read it again' : 'pending_approval');
        }
        const jobs = jobRowsFor(plan, contentId, workspaceId, now);
        await insertJobs(tx, jobs, time?.instant ?? null);
        if (time === null) await chargeStart(tx, wallet, { workspaceId, mode: fields.modo ?? PAYMENT_MODE.plan, contentId, jobs, plan: plan.workspacePlan });
        await recordReviewStep(tx, principal, 'approved', written, now, null, { publish_now: time === null });
        return renderContent(written, await listJobsForContent(tx, contentId), now);
      });
    },

    /**
     * Sends a content pending approval back to its author with a comment (added to its thread): it becomes
     * changes_requested; the author edits it and submits it again. Nothing was charged and nothing runs.
     * @throws ServiceError `not_found`, `forbidden`, `content_not_editable` (not pending).
     */
    async requestChanges(principal: Principal, workspaceId: string, contentId: string, input: RequestChangesInput): Promise<Content> {
      // As for an approval: the permission before the content's state.
      authorize(principal, workspaceId, 'contents.approve');
      const row = await found(workspaceId, contentId);
      authorize(principal, workspaceId, 'contents.approve', row.brandId);
      if (row.status !== 'pending_approval') throw wrongReviewStatus(row, 'pending_approval');
      const now = clock.now();
      return db.transaction().execute(async (tx) => {
        const written = await transitionContent(tx, { workspaceId, id: contentId, from: ['pending_approval'], now, set: { status: 'changes_requested' } });
        if (!written) {
          const after = await findContent(tx, workspaceId, contentId);
          throw after ? wrongReviewStatus(after, 'pending_approval') : contentNotFound(contentId);
        }
        await recordReviewStep(tx, principal, 'changes_requested', written, now, input.comment);
        return renderContent(written, [], now);
      });
    },

    /** The content's thread: comments and approval steps, oldest first. @throws ServiceError `not_found`, `forbidden`. */
    async comments(principal: Principal, workspaceId: string, contentId: string): Promise<ReviewThread> {
      authorize(principal, workspaceId, 'contents.read');
      const row = await found(workspaceId, contentId);
      authorize(principal, workspaceId, 'contents.read', row.brandId);
      return { data: (await listContentReviews(db, workspaceId, contentId)).map(renderEntry) };
    },

    /** Adds an internal comment to a content's thread (never published). @throws ServiceError `not_found`, `forbidden`. */
    async comment(principal: Principal, workspaceId: string, contentId: string, input: CommentInput): Promise<ReviewEntry> {
      authorize(principal, workspaceId, 'contents.read');
      const row = await found(workspaceId, contentId);
      authorize(principal, workspaceId, 'contents.comment', row.brandId);
      const now = clock.now();
      return db.transaction().execute(async (tx) => {
        const actor = await describeActor(tx, principal);
        const entry = {
          id: newTimeOrderedId('rev_', now),
          workspaceId,
          contentId,
          kind: 'comment',
          actorType: actor.type,
          actorId: actor.id,
          actorLabel: actor.label,
          actorRole: actor.role,
          body: input.body,
          createdAt: now,
        };
        await insertContentReview(tx, entry);
        await recordAudit(tx, principal, 'content.commented', { type: 'content', id: contentId }, now, { comment_id: entry.id });
        return renderEntry(entry);
      });
    },

    /** The contents waiting for approval in the brands the caller sees, earliest time first. */
    async pending(principal: Principal, workspaceId: string, query: PendingListQuery): Promise<PendingList> {
      authorize(principal, workspaceId, 'contents.read');
      const now = clock.now();
      const rows = await listPendingContents(db, workspaceId, brandScope(principal), query.limit);
      return { data: rows.map((r) => renderContent(r, [], now)) };
    },

    /** The workspace's default approval roles (brands without their own list use it). */
    async approvalPolicy(principal: Principal, workspaceId: string): Promise<ApprovalPolicy> {
      authorize(principal, workspaceId, 'workspace.read');
      return { approval_roles: knownRoles((await findApprovalRoles(db, workspaceId, null)).workspace ?? []) };
    },

    /** Sets the workspace's default approval roles. @throws ServiceError `forbidden` (needs `brands.manage`). */
    async setApprovalPolicy(principal: Principal, workspaceId: string, input: ApprovalPolicy): Promise<ApprovalPolicy> {
      authorize(principal, workspaceId, 'brands.manage');
      const now = clock.now();
      await db.transaction().execute(async (tx) => {
        await setWorkspaceApprovalRoles(tx, workspaceId, input.approval_roles);
        await recordAudit(tx, principal, 'workspace.approval_policy_changed', { type: 'workspace', id: workspaceId }, now, { approval_roles: input.approval_roles });
      });
      return { approval_roles: input.approval_roles };
    },
  };
}

function knownRoles(roles: readonly string[]): ApprovalPolicy['approval_roles'] {
  return roles.filter((r): r is ApprovalPolicy['approval_roles'][number] => (APPROVAL_ROLES as readonly string[]).includes(r));
}

function renderEntry(r: { id: string; kind: string; actorType: string; actorId: string | null; actorLabel: string | null; actorRole: string | null; body: string | null; createdAt: number }): ReviewEntry {
  return {
    id: r.id,
    kind: r.kind as ReviewEntry['kind'],
    author: { type: r.actorType as ReviewEntry['author']['type'], id: r.actorId, label: r.actorLabel },
    role: r.actorRole,
    body: r.body,
    created_at: toIso(r.createdAt),
  };
}
