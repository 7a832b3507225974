import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { type ContentRow, findContent, insertContent, listContents } from '../../../db/repositories/contents.repo.js';
import { insertJobs, type JobRow, listJobsForContent, listJobsForContents, requeueFailedJobs } from '../../../db/repositories/jobs.repo.js';
import type { Database } from '../../../db/schema.js';
import { type Clock, toIso } from '../clock.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { ServiceError } from '../errors.js';
import { newId } from '../ids.js';
import { type IdempotencyService, type IdempotentResult, requestHash } from '../idempotency/idempotency.service.js';
import { parseIdempotencyKey } from '../idempotency/idempotency.schema.js';
import { refreshContentOutcome } from '../jobs/outcome.js';
import { parseStoredRequest, storeRequest } from '../jobs/stored-request.js';
import type { MetersService } from '../meters/meters.service.js';
import type { Principal } from '../principal.js';
import type { WalletService } from '../wallet/wallet.service.js';
import type { Modo } from '../wallet/wallet.schema.js';
import { assertWorkspaceAccess } from '../workspaces/access.js';
import { type ContentPlan, type ProbeMedia, planContent } from './content-plan.js';
import type {
  Content,
  ContentListQuery,
  ContentStatus,
  CreateContentInput,
  CreatedContent,
  Job,
  JobStatus,
  Preview,
} from './contents.schema.js';
import { CONFIRMATION_ERROR_CODES, type JobErrorCode } from '../../vocabulary/job-errors.js';

function renderJob(j: JobRow): Job {
  return {
    job_id: j.id,
    platform_slug: j.platformSlug as Job['platform_slug'],
    connection_id: j.connectionId,
    status: j.status as JobStatus,
    error_code: j.errorCode as JobErrorCode | null,
    error_message: j.errorMessage,
    external_post_url: j.externalPostUrl,
    previous_status: j.previousStatus,
    attempts: j.attempts,
    created_at: toIso(j.createdAt),
    updated_at: toIso(j.updatedAt),
    published_at: j.publishedAt === null ? null : toIso(j.publishedAt),
  };
}

function renderContent(row: ContentRow, jobs: JobRow[]): Content {
  const request = parseStoredRequest(row.request);
  const thread = request.targets.find((t) => t.thread !== null)?.thread ?? null;
  return {
    content_id: row.id,
    brand_id: row.brandId,
    content_type: row.contentType as Content['content_type'],
    status: row.status as ContentStatus,
    text: request.text,
    title: request.title,
    thread,
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
    completed_at: row.completedAt === null ? null : toIso(row.completedAt),
    jobs: jobs.map(renderJob),
  };
}

function contentNotFound(id: string): ServiceError {
  return new ServiceError('not_found', `Content ${id} was not found in this workspace.`);
}

export type ContentsService = ReturnType<typeof createContentsService>;

export function createContentsService(deps: {
  db: Kysely<Database>;
  clock: Clock;
  meters: MetersService;
  idempotency: IdempotencyService;
  probeMedia: ProbeMedia;
  wallet: WalletService;
}) {
  const { db, clock, meters, idempotency, wallet } = deps;

  async function createFromPlan(tx: Kysely<Database>, workspaceId: string, plan: ContentPlan, modo: Modo): Promise<CreatedContent> {
    const now = clock.now();
    const contentId = randomUUID();
    const charge = await wallet.chargeContent(tx, { workspaceId, modo, publications: plan.targets.length, reference: contentId });
    await insertContent(tx, {
      id: contentId,
      workspaceId,
      brandId: plan.brandId,
      contentType: plan.contentType,
      status: 'publishing',
      request: storeRequest(plan),
      createdAt: now,
      updatedAt: now,
      completedAt: null,
    });
    const jobs = plan.targets.map((t) => ({
      id: newId('job_'),
      contentId,
      workspaceId,
      connectionId: t.connection.id,
      platformSlug: t.platform,
      sandboxOutcome: t.sandboxOutcome,
      now,
    }));
    await insertJobs(tx, jobs);
    // The last `paidPublications` jobs were paid in credits: each records its share, refundable on failure.
    if (charge.creditBatchId !== null && charge.publicationPrice > 0) {
      for (const job of jobs.slice(jobs.length - charge.paidPublications)) {
        await wallet.recordJobCredit(tx, job.id, charge.creditBatchId, charge.publicationPrice);
      }
    }
    return {
      content_id: contentId,
      status: 'publishing',
      created_at: toIso(now),
      jobs: jobs.map((j) => ({ job_id: j.id, platform_slug: j.platformSlug, connection_id: j.connectionId, status: 'queued' as const })),
    };
  }

  async function create(principal: Principal, workspaceId: string, input: CreateContentInput, idempotencyKey?: string): Promise<IdempotentResult<CreatedContent>> {
    assertWorkspaceAccess(principal, workspaceId);
    // One rule for every door; a door that names the key otherwise (the REST header) checks it first.
    parseIdempotencyKey(idempotencyKey, 'idempotency_key');
    const run = async (record?: (tx: Kysely<Database>, value: CreatedContent) => Promise<void>) => {
      const plan = await planContent(db, workspaceId, input, deps.probeMedia);
      return db.transaction().execute(async (tx) => {
        const created = await createFromPlan(tx, workspaceId, plan, input.modo ?? 'plano');
        if (record) await record(tx, created);
        return created;
      });
    };
    if (idempotencyKey === undefined) return { replayed: false, outcome: { ok: true, value: await run() } };
    return idempotency.run<CreatedContent>(workspaceId, idempotencyKey, requestHash({ op: 'create_content', input }), run);
  }

  return {
    /**
     * Spec 4.3: checks everything, then in one transaction takes the meters, stores the content and queues one
     * job per target. With an Idempotency-Key, the first outcome is replayed for the same request.
     * @throws ServiceError `validation_failed` (also for a malformed key, naming `idempotency_key`), `not_found`,
     *   `platform_not_supported`, `connections_required`,
     *   `caption_too_long`, `media_too_large`, `limit_reached`, `idempotency_conflict`. A replayed error carries
     *   `replayed: true`.
     */
    create,

    /**
     * Dry run: every check of `create` and the meter consumption it would need, creating nothing.
     * @throws the same errors as `create`, including `limit_reached` when a meter would not suffice.
     */
    async preview(principal: Principal, workspaceId: string, input: CreateContentInput): Promise<Preview> {
      assertWorkspaceAccess(principal, workspaceId);
      const plan = await planContent(db, workspaceId, input, deps.probeMedia);
      const usage = await meters.usage(workspaceId);
      const needs = [
        { meter: 'criacao_de_conteudos' as const, consumes: 1 },
        { meter: 'publicacoes' as const, consumes: plan.targets.length },
      ];
      const report = needs.map(({ meter, consumes }) => {
        const m = usage.meters.find((u) => u.meter === meter)!;
        return { meter, used: m.used, consumes, limit: m.limit };
      });
      // Only modo plano is bound by the plan's ceilings; the other modes pay the excess in credits.
      const over = (input.modo ?? 'plano') === 'plano' ? report.find((r) => r.used + r.consumes > r.limit) : undefined;
      if (over) {
        throw new ServiceError('limit_reached', `The plan's ${over.meter} meter is at its ceiling (${over.limit}).`, {
          meter: over.meter,
          limit: over.limit,
          used: over.used,
          resolve: 'upgrade',
        });
      }
      return {
        dry_run: true,
        content_type: plan.contentType,
        jobs: plan.targets.map((t) => ({
          platform_slug: t.platform,
          connection_id: t.connection.id,
          connection_mode: t.connection.mode as 'sandbox' | 'live',
          text: t.text,
          title: t.title,
          thread: t.thread,
        })),
        meters: report,
      };
    },

    /** @throws ServiceError `not_found`. */
    async get(principal: Principal, workspaceId: string, contentId: string): Promise<Content> {
      assertWorkspaceAccess(principal, workspaceId);
      const row = await findContent(db, workspaceId, contentId);
      if (!row) throw contentNotFound(contentId);
      return renderContent(row, await listJobsForContent(db, contentId));
    },

    /** Newest first, cursor-paginated, filtered by status and creation date. */
    async list(principal: Principal, workspaceId: string, query: ContentListQuery): Promise<{ data: Content[]; next_cursor: string | null }> {
      assertWorkspaceAccess(principal, workspaceId);
      const rows = await listContents(db, workspaceId, {
        status: query.status,
        createdAfter: query.created_after === undefined ? undefined : Date.parse(query.created_after),
        createdBefore: query.created_before === undefined ? undefined : Date.parse(query.created_before),
        after: query.cursor === undefined ? undefined : decodeCursor(query.cursor),
        limit: query.limit + 1,
      });
      const page = rows.slice(0, query.limit);
      const jobs = await listJobsForContents(db, page.map((r) => r.id));
      return {
        data: page.map((r) => renderContent(r, jobs.filter((j) => j.contentId === r.id))),
        next_cursor: rows.length > query.limit ? encodeCursor(page[page.length - 1]!) : null,
      };
    },

    /**
     * Re-queues the failed jobs the caller can retry: not the confirmation failures (their post may be live)
     * unless `force`. Counted on `publicacoes` like new publications, once per job actually requeued: retries
     * racing for one content (several processes, a double click) requeue each job once and charge it once,
     * because the requeue is a conditional update and the charge is the number of rows it changed, in the same
     * transaction (spec 7.3: a per-cycle meter is never given back, so an over-charge would be permanent).
     * A retry that finds nothing left to requeue answers with an empty `requeued` and charges nothing.
     * @throws ServiceError `not_found`, `limit_reached` (then nothing is requeued).
     */
    async retry(principal: Principal, workspaceId: string, contentId: string, options: { force?: boolean | undefined }) {
      assertWorkspaceAccess(principal, workspaceId);
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
        await meters.consume(tx, workspaceId, [{ meter: 'publicacoes', amount: requeued.length }]);
        await refreshContentOutcome(tx, contentId, now);
        const after = await findContent(tx, workspaceId, contentId);
        return {
          content_id: contentId,
          status: (after?.status ?? row.status) as ContentStatus,
          requeued: requeued.map((j) => ({ job_id: j.id, platform_slug: j.platformSlug as Job['platform_slug'], connection_id: j.connectionId, status: 'queued' as const })),
        };
      });
    },
  };
}
