import { type ContentChanges, transitionContent } from '../../../db/repositories/contents.repo.js';
import { deleteScheduledJobs, insertJobs, listJobsForContent } from '../../../db/repositories/jobs.repo.js';
import type { IdempotentResult } from '../idempotency/idempotency.service.js';
import { storeRequest } from '../jobs/stored-request.js';
import { timingOf } from '../scheduling/publish-time.js';
import { seesBrand } from '../permissions/authorize.js';
import type { Principal } from '../principal.js';
import { contentNotFound } from './content-errors.js';
import { assertWorkspaceAccess } from '../workspaces/access.js';
import { toIso } from '../clock.js';
import { recordAudit } from '../audit/record.js';
import { contentTarget } from './audit-target.js';
import { authorize } from '../permissions/authorize.js';
import { actorRef, approvalRequired, recordReviewStep } from './approval.js';
import { planContent } from './content-plan.js';
import type { UpdateContentInput, UpdatedContent } from './contents.schema.js';
import { keptOverrides, mergeFields, storedFields } from './fields.js';
import { renderContent } from './render.js';
import { type ContentsDeps, editable, jobRowsFor, once, type Placement, takeQueueSlot, withVersionRetry, zoneOf } from './steps.js';

/** Editing a draft or scheduled content: `update`. */
export function contentUpdate(deps: ContentsDeps) {
  const { db, clock, idempotency } = deps;
  return {
    /**
     * Edits a draft or scheduled content (README, Scheduling): the fields sent replace the stored ones, the result is checked
     * again as at creation, and its jobs are rebuilt from it. A time (`publish_at`, `queue`) schedules it, `draft`
     * turns it back into a draft. The write is conditional on the version and status read, so an edit never
     * overwrites another and never touches a content the scheduler or a cancel took first. Charges nothing.
     * A platform with its own text or title in `overrides` keeps it when the shared one changes; the answer's
     * `kept_overrides` names those platforms.
     * Approvals: a content waiting on its review keeps its status (only `draft: true` withdraws it to a draft);
     * an edit that leaves a content scheduled, by a caller whose contents need approval, sends it back to
     * pending_approval (its jobs are removed; it waits for a person again).
     * @throws ServiceError `not_found`, `content_not_editable`, `forbidden`, and the checks' errors as `create`.
     */
    async update(principal: Principal, workspaceId: string, contentId: string, patch: UpdateContentInput, idempotencyKey?: string): Promise<IdempotentResult<UpdatedContent>> {
      assertWorkspaceAccess(principal, workspaceId, 'contents.draft');
      return once<UpdatedContent>(idempotency, workspaceId, idempotencyKey, { op: 'update_content', contentId, patch }, (record) =>
        withVersionRetry(async () => {
          const row = await editable(db, workspaceId, contentId);
          if (!seesBrand(principal, row.brandId)) throw contentNotFound(contentId);
          const stored = storedFields(row);
          const fields = mergeFields(stored, patch);
          const now = clock.now();
          // A new local time without a zone is read in the content's zone, else the brand's.
          const zone = patch.publish_at !== undefined && patch.time_zone === undefined ? (row.timeZone ?? (await zoneOf(db, workspaceId, row.brandId))) : 'UTC';
          const timing = timingOf(patch, zone, now);
          const plan = await planContent(db, workspaceId, { ...fields, brand_id: row.brandId }, deps.probeMedia);
          authorize(principal, workspaceId, 'contents.draft', row.brandId);
          const review = await approvalRequired(db, principal, workspaceId, row.brandId);
          return db.transaction().execute(async (tx) => {
            const current: Placement = {
              status: row.status as Placement['status'],
              time: row.publishAt === null ? null : { instant: row.publishAt, zone: row.timeZone ?? 'UTC', local: row.localPublishAt ?? '' },
              slot: row.queueSlot,
            };
            const asked: Placement =
              timing.kind === 'now'
                ? current
                : timing.kind === 'draft'
                  ? { status: 'draft', time: null, slot: null }
                  : timing.kind === 'at'
                    ? { status: 'scheduled', time: timing.time, slot: null }
                    : await takeQueueSlot(tx, workspaceId, row.brandId, now, row.queueSlot);
            const placement = afterReview(row.status, asked, review);
            const set: ContentChanges = {
              status: placement.status,
              request: storeRequest(plan),
              input: JSON.stringify(fields),
              contentType: plan.contentType,
              publishAt: placement.time?.instant ?? null,
              timeZone: placement.time?.zone ?? null,
              localPublishAt: placement.time?.local ?? null,
              queueSlot: placement.slot,
              ...(placement.status === 'pending_approval' && row.status !== 'pending_approval' ? { submittedBy: actorRef(principal) } : {}),
            };
            const written = await transitionContent(tx, { workspaceId, id: contentId, from: [row.status], version: row.version, now, set });
            if (!written) return null;
            await recordAudit(tx, principal, 'content.updated', contentTarget(contentId, fields, plan.contentType), now, {
              fields: Object.keys(patch).sort(),
              status: placement.status,
              publish_at: placement.time === null ? null : toIso(placement.time.instant),
            });
            // Sent back for approval by this edit (it was scheduled or a draft given a time by someone who needs approval).
            if (placement.status === 'pending_approval' && row.status !== 'pending_approval') await recordReviewStep(tx, principal, 'submitted', written, now, null, { edited_from: row.status });
            await deleteScheduledJobs(tx, contentId);
            const jobs = placement.status === 'scheduled' ? jobRowsFor(plan, contentId, workspaceId, now) : [];
            await insertJobs(tx, jobs, placement.time?.instant ?? null);
            const content = { ...renderContent(written, await listJobsForContent(tx, contentId), now), kept_overrides: keptOverrides(stored, fields, patch) };
            if (record) await record(tx, content);
            return content;
          });
        }),
      );
    },
  };
}

/**
 * Where an edit leaves a content once the review is counted: one waiting on its review stays there (its time
 * updated, holding no queue slot) unless withdrawn to a draft; one that would be scheduled goes to
 * pending_approval when its editor needs approval.
 */
function afterReview(from: string, asked: Placement, review: boolean): Placement {
  if (from === 'pending_approval' || from === 'changes_requested') {
    return asked.status === 'draft' ? asked : { status: from, time: asked.time, slot: null };
  }
  if (asked.status === 'scheduled' && review) return { status: 'pending_approval', time: asked.time, slot: null };
  return asked;
}
