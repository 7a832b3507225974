import type { Kysely } from 'kysely';
import { type ContentRow, insertContent } from '../../../db/repositories/contents.repo.js';
import { insertJobs } from '../../../db/repositories/jobs.repo.js';
import type { Database } from '../../../db/schema.js';
import { toIso } from '../clock.js';
import { newTimeOrderedUuid } from '../ids.js';
import { type IdempotentResult, requestHash } from '../idempotency/idempotency.service.js';
import { parseIdempotencyKey } from '../idempotency/idempotency.schema.js';
import { storeRequest } from '../jobs/stored-request.js';
import { type Timing, timingOf } from '../scheduling/publish-time.js';
import { brandNotFound } from '../brands/brands.service.js';
import { seesBrand } from '../permissions/authorize.js';
import type { Principal } from '../principal.js';
import { PAYMENT_MODE } from '../wallet/wallet.schema.js';
import { assertWorkspaceAccess } from '../workspaces/access.js';
import { recordAudit } from '../audit/record.js';
import { contentTarget } from './audit-target.js';
import { actorRef, recordReviewStep, releaseOrReview } from './approval.js';
import { chargeStart } from './charging.js';
import { type ContentPlan, planContent } from './content-plan.js';
import type { ContentFields, CreateContentInput, CreatedContent } from './contents.schema.js';
import { fieldsOf } from './fields.js';
import { renderWhen } from './render.js';
import { type ContentsDeps, jobRowsFor, type Placement, type RecordOutcome, takeQueueSlot, zoneOf } from './steps.js';

/**
 * Who may create what: a draft needs `contents.draft` on the content's brand; anything that schedules or
 * publishes needs `contents.publish` too. A brand the credential does not see is not found, as at creation.
 * @throws ServiceError `forbidden` naming the permission, `not_found` (brand).
 */
function authorizeCreation(principal: Principal, workspaceId: string, input: CreateContentInput): void {
  assertWorkspaceAccess(principal, workspaceId, 'contents.draft');
  if (!seesBrand(principal, input.brand_id)) throw brandNotFound(input.brand_id);
  // Going out (now or at a time) is decided by `releaseOrReview` below: published, or held for a person's approval.
}

/** Creating a content: `create`. */
export function contentCreation(deps: ContentsDeps) {
  const { db, clock, idempotency, wallet } = deps;

  /**
   * Stores a checked content as its timing asks; charges only what starts publishing now. A content that needs
   * approval (`review`) waits as pending_approval with the time it asked for (a queue slot's time, without holding
   * the slot): no job, no charge.
   */
  async function store(tx: Kysely<Database>, principal: Principal, workspaceId: string, plan: ContentPlan, fields: ContentFields, timing: Timing, review: boolean): Promise<CreatedContent> {
    const now = clock.now();
    const contentId = newTimeOrderedUuid(now);
    const asked: Placement =
      timing.kind === 'now'
        ? { status: 'publishing', time: null, slot: null }
        : timing.kind === 'draft'
          ? { status: 'draft', time: null, slot: null }
          : timing.kind === 'at'
            ? { status: 'scheduled', time: timing.time, slot: null }
            : await takeQueueSlot(tx, workspaceId, plan.brandId, now);
    const placement: Placement = review && asked.status !== 'draft' ? { status: 'pending_approval', time: asked.time, slot: null } : asked;
    const row: Omit<ContentRow, 'version'> = {
      id: contentId,
      workspaceId,
      brandId: plan.brandId,
      contentType: plan.contentType,
      status: placement.status,
      request: storeRequest(plan),
      createdAt: now,
      updatedAt: now,
      completedAt: null,
      publishAt: placement.status === 'publishing' ? now : (placement.time?.instant ?? null),
      timeZone: placement.time?.zone ?? null,
      localPublishAt: placement.time?.local ?? null,
      queueSlot: placement.slot,
      input: JSON.stringify(fields),
      submittedBy: placement.status === 'pending_approval' ? actorRef(principal) : null,
    };
    await insertContent(tx, row);
    // Before the charge: a refused charge rolls the entry back with the content.
    await recordAudit(tx, principal, 'content.created', contentTarget(contentId, fields, plan.contentType), now, {
      brand_id: plan.brandId,
      status: placement.status,
      publish_at: row.publishAt === null ? null : toIso(row.publishAt),
    });
    if (placement.status === 'pending_approval') await recordReviewStep(tx, principal, 'submitted', { ...row, version: 0 }, now);
    const jobs = placement.status === 'draft' || placement.status === 'pending_approval' ? [] : jobRowsFor(plan, contentId, workspaceId, now);
    await insertJobs(tx, jobs, placement.status === 'scheduled' ? placement.time!.instant : null);
    if (placement.status === 'publishing') await chargeStart(tx, wallet, { workspaceId, mode: fields.modo ?? PAYMENT_MODE.plan, contentId, jobs, plan: plan.workspacePlan });
    return {
      content_id: contentId,
      status: placement.status,
      ...renderWhen({ ...row, version: 0 }),
      created_at: toIso(now),
      jobs: jobs.map((j) => ({ job_id: j.id, platform_slug: j.platformSlug, connection_id: j.connectionId, status: placement.status === 'scheduled' ? ('scheduled' as const) : ('queued' as const) })),
    };
  }

  return {
    /**
     * Spec 4.3 with scheduling (README, Scheduling): checks everything, then in one transaction stores the content and, as its timing asks,
     * starts publishing (charging the meters and queueing one job per target), schedules it at `publish_at` or at
     * the brand's next free queue slot (jobs wait as `scheduled`, nothing is charged until they start), or saves
     * a draft (no jobs). A caller whose role needs approval on the brand (README, Approvals) gets a content
     * pending_approval instead of one that goes out: no job, no charge, until a person approves it. With an
     * Idempotency-Key, the first outcome is replayed for the same request.
     * @throws ServiceError `validation_failed` (also for a malformed key, naming `idempotency_key`; a bad or past
     *   `publish_at`; a brand without queue), `not_found`, `platform_not_supported`, `connections_required`,
     *   `caption_too_long`, `media_too_large`, `limit_reached`, `idempotency_conflict`. A replayed error carries
     *   `replayed: true`.
     */
    async create(principal: Principal, workspaceId: string, input: CreateContentInput, idempotencyKey?: string): Promise<IdempotentResult<CreatedContent>> {
      authorizeCreation(principal, workspaceId, input);
      // One rule for every door; a door that names the key otherwise (the REST header) checks it first.
      parseIdempotencyKey(idempotencyKey, 'idempotency_key');
      const run = async (record?: RecordOutcome<CreatedContent>) => {
        const fields = fieldsOf(input);
        const timing = timingOf(input, input.publish_at !== undefined && input.time_zone === undefined ? await zoneOf(db, workspaceId, input.brand_id) : 'UTC', clock.now());
        // Going out (now or at a time) needs approval for some roles: then it waits, pending_approval.
        // A draft was authorized above (`authorizeCreation`); only going out asks whether a person must approve.
        const review = timing.kind !== 'draft' && (await releaseOrReview(db, principal, workspaceId, input.brand_id)) === 'review';
        const plan = await planContent(db, workspaceId, fields, deps.probeMedia);
        return db.transaction().execute(async (tx) => {
          const created = await store(tx, principal, workspaceId, plan, fields, timing, review);
          if (record) await record(tx, created);
          return created;
        });
      };
      if (idempotencyKey === undefined) return { replayed: false, outcome: { ok: true, value: await run() } };
      return idempotency.run<CreatedContent>(workspaceId, idempotencyKey, requestHash({ op: 'create_content', input }), run);
    },
  };
}
