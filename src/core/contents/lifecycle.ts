import { EDITABLE_STATUSES, findContent, transitionContent } from '../../../db/repositories/contents.repo.js';
import { findConnectionsByIds } from '../../../db/repositories/connections.repo.js';
import { deleteScheduledJobs, insertJobs, listJobsForContent, requeueFailedJobs, startScheduledJobs } from '../../../db/repositories/jobs.repo.js';
import type { IdempotentResult } from '../idempotency/idempotency.service.js';
import { refreshContentOutcome } from '../jobs/outcome.js';
import { storeRequest } from '../jobs/stored-request.js';
import { CYCLE_METER } from '../meters/plans.js';
import { seesBrand } from '../permissions/authorize.js';
import type { Principal } from '../principal.js';
import { PAYMENT_MODE } from '../wallet/wallet.schema.js';
import { assertWorkspaceAccess } from '../workspaces/access.js';
import { recordAudit } from '../audit/record.js';
import { contentTarget } from './audit-target.js';
import { CONFIRMATION_ERROR_CODES } from '../../vocabulary/job-errors.js';
import { chargeStart } from './charging.js';
import { releaseOrReview } from './approval.js';
import { awaitingReview, contentNotFound, notEditable } from './content-errors.js';
import { ServiceError } from '../errors.js';
import { planContent } from './content-plan.js';
import type { Content, ContentStatus, Job } from './contents.schema.js';
import { storedFields } from './fields.js';
import { renderContent, skippedJob } from './render.js';
import { type ContentsDeps, editable, jobRowsFor, once, withVersionRetry } from './steps.js';
import { assertSeesContent } from './visibility.js';

/** A stored content's life after creation: `cancel`, `publishNow`, `retry`. */
export function contentLifecycle(deps: ContentsDeps) {
  const { db, clock, meters, idempotency, wallet } = deps;
  return {
    /**
     * Cancels a draft or scheduled content: it will never publish, its queue slot is free at once, and nothing was
     * charged. Canceling a canceled content answers it again. The cancel is one conditional update, so against the
     * scheduler at the due instant whichever commits first wins.
     * @throws ServiceError `not_found`, `content_not_editable` (publishing started or finished).
     */
    async cancel(principal: Principal, workspaceId: string, contentId: string, idempotencyKey?: string): Promise<IdempotentResult<Content>> {
      assertWorkspaceAccess(principal, workspaceId, 'contents.publish');
      await assertSeesContent(db, principal, workspaceId, contentId);
      return once<Content>(idempotency, workspaceId, idempotencyKey, { op: 'cancel_content', contentId }, (record) => {
        const now = clock.now();
        return db.transaction().execute(async (tx) => {
          const written = await transitionContent(tx, {
            workspaceId,
            id: contentId,
            from: EDITABLE_STATUSES,
            now,
            set: { status: 'canceled', queueSlot: null, completedAt: now },
          });
          let content: Content;
          if (written) {
            await recordAudit(tx, principal, 'content.canceled', contentTarget(contentId, written.input, written.contentType), now);
            await deleteScheduledJobs(tx, contentId);
            content = renderContent(written, [], now);
          } else {
            const row = await findContent(tx, workspaceId, contentId);
            if (!row) throw contentNotFound(contentId);
            if (row.status !== 'canceled') throw notEditable(row);
            content = renderContent(row, await listJobsForContent(tx, contentId), now);
          }
          if (record) await record(tx, content);
          return content;
        });
      });
    },

    /**
     * Publishes a draft or scheduled content now: a draft is checked again first; the content is charged as a new
     * content publishing now (in this cycle) and its jobs queued, in one transaction conditional on the content
     * still waiting (the scheduler or a cancel that committed first wins).
     * @throws ServiceError `not_found`, `content_not_editable`, the checks' errors (a draft), `limit_reached` and the
     *   credit errors (nothing changes then).
     */
    async publishNow(principal: Principal, workspaceId: string, contentId: string, idempotencyKey?: string): Promise<IdempotentResult<Content>> {
      assertWorkspaceAccess(principal, workspaceId, 'contents.publish');
      return once<Content>(idempotency, workspaceId, idempotencyKey, { op: 'publish_content_now', contentId }, (record) =>
        withVersionRetry(async () => {
          const row = await editable(db, workspaceId, contentId);
          if (!seesBrand(principal, row.brandId)) throw contentNotFound(contentId);
          if (row.status === 'pending_approval' || row.status === 'changes_requested') throw awaitingReview(row);
          // Publishing now is going out: a caller whose contents need approval submits instead.
          if ((await releaseOrReview(db, principal, workspaceId, row.brandId)) === 'review') {
            throw new ServiceError('forbidden', 'Your contents on this brand need a person\'s approval: submit it for approval (POST …/contents/{contentId}/submit) instead of publishing it.', {
              permission: 'contents.publish',
            });
          }
          const fields = storedFields(row);
          // A draft's connections and media may have changed since it was saved: it is checked again.
          const plan = row.status === 'draft' ? await planContent(db, workspaceId, fields, deps.probeMedia) : null;
          const now = clock.now();
          return db.transaction().execute(async (tx) => {
            const written = await transitionContent(tx, {
              workspaceId,
              id: contentId,
              from: [row.status],
              version: row.version,
              now,
              set: { status: 'publishing', publishAt: now, timeZone: null, localPublishAt: null, queueSlot: null, ...(plan ? { request: storeRequest(plan) } : {}) },
            });
            if (!written) return null;
            // Before the charge: a refused charge rolls the entry back with the change.
            await recordAudit(tx, principal, 'content.published_now', contentTarget(contentId, fields, row.contentType), now, { previous_status: row.status });
            let jobs: { id: string; platformSlug: string }[];
            if (plan) {
              const rows = jobRowsFor(plan, contentId, workspaceId, now);
              await insertJobs(tx, rows);
              jobs = rows;
            } else {
              jobs = await startScheduledJobs(tx, contentId, now);
            }
            await chargeStart(tx, wallet, { workspaceId, mode: fields.modo ?? PAYMENT_MODE.plan, contentId, jobs });
            const content = renderContent(written, await listJobsForContent(tx, contentId), now);
            if (record) await record(tx, content);
            return content;
          });
        }),
      );
    },

    /**
     * Re-queues the failed jobs the caller can retry: not those whose connection is not `active` (they would
     * fail again at once; they are named in `skipped` and cost nothing), nor the confirmation failures (their
     * post may be live) unless `force`. Counted on `publicacoes` like new publications, once per job actually requeued: retries
     * racing for one content (several processes, a double click) requeue each job once and charge it once,
     * because the requeue is a conditional update and the charge is the number of rows it changed, in the same
     * transaction (spec 7.3: a per-cycle meter is never given back, so an over-charge would be permanent).
     * A retry that finds nothing left to requeue answers with an empty `requeued` and charges nothing.
     * @throws ServiceError `not_found`, `limit_reached` (then nothing is requeued).
     */
    async retry(principal: Principal, workspaceId: string, contentId: string, options: { force?: boolean | undefined }) {
      assertWorkspaceAccess(principal, workspaceId, 'contents.publish');
      await assertSeesContent(db, principal, workspaceId, contentId);
      const now = clock.now();
      return db.transaction().execute(async (tx) => {
        // Requeue first, then charge what was requeued: the conditional update decides, not an earlier read.
        const requeued = await requeueFailedJobs(tx, {
          workspaceId,
          contentId,
          keepCodes: options.force === true ? [] : CONFIRMATION_ERROR_CODES,
          now,
        });
        const row = await findContent(tx, workspaceId, contentId);
        if (!row) throw contentNotFound(contentId);
        if (requeued.length > 0) {
          await recordAudit(tx, principal, 'content.retried', contentTarget(contentId, row.input, row.contentType), now, {
            jobs: requeued.map((j) => ({ job_id: j.id, platform_slug: j.platformSlug })),
            force: options.force === true,
          });
        }
        await meters.consume(tx, workspaceId, [{ meter: CYCLE_METER.publications, amount: requeued.length }]);
        await refreshContentOutcome(tx, contentId, now);
        const after = await findContent(tx, workspaceId, contentId);
        const stillFailed = (await listJobsForContent(tx, contentId)).filter((j) => j.status === 'failed');
        const connections = await findConnectionsByIds(tx, stillFailed.map((j) => j.connectionId));
        return {
          content_id: contentId,
          status: (after?.status ?? row.status) as ContentStatus,
          requeued: requeued.map((j) => ({ job_id: j.id, platform_slug: j.platformSlug as Job['platform_slug'], connection_id: j.connectionId, status: 'queued' as const })),
          skipped: stillFailed.map((j) => skippedJob(j, connections.get(j.connectionId)?.status ?? 'inactive')),
        };
      });
    },
  };
}
