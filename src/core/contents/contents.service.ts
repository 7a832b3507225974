import type { Kysely } from 'kysely';
import { findBrandQueue, lockBrandQueue } from '../../../db/repositories/brand-queues.repo.js';
import {
  type ContentChanges,
  type ContentRow,
  EDITABLE_STATUSES,
  findContent,
  findContentWithJobs,
  heldQueueSlots,
  insertContent,
  listContents,
  listContentsByPublishAt,
  transitionContent,
} from '../../../db/repositories/contents.repo.js';
import {
  deleteScheduledJobs,
  insertJobs,
  type JobRow,
  listJobsForContent,
  listJobsForContents,
  requeueFailedJobs,
  startScheduledJobs,
} from '../../../db/repositories/jobs.repo.js';
import type { Database } from '../../../db/schema.js';
import type { Transact } from '../../../db/transaction-batch.js';
import { type Clock, toIso } from '../clock.js';
import { decodeCursor, decodeWindowCursor, encodeCursor, encodeWindowCursor } from '../cursor.js';
import { ServiceError, validationError } from '../errors.js';
import { newTimeOrderedId, newTimeOrderedUuid } from '../ids.js';
import { type IdempotencyService, type IdempotentResult, requestHash } from '../idempotency/idempotency.service.js';
import { parseIdempotencyKey } from '../idempotency/idempotency.schema.js';
import { refreshContentOutcome } from '../jobs/outcome.js';
import { parseStoredRequest, storeRequest } from '../jobs/stored-request.js';
import { MAX_SCHEDULE_AHEAD_MS, type PublishTime, slotTime, type Timing, timingOf } from '../scheduling/publish-time.js';
import { nextSlots } from '../scheduling/queue-slots.js';
import { brandTimeZone, storedQueue } from '../scheduling/queue.service.js';
import type { MetersService } from '../meters/meters.service.js';
import type { Principal } from '../principal.js';
import type { WalletService } from '../wallet/wallet.service.js';
import { assertWorkspaceAccess } from '../workspaces/access.js';
import { chargeStart } from './charging.js';
import { type ContentPlan, type ProbeMedia, planContent } from './content-plan.js';
import {
  type Content,
  type ContentFields,
  contentFieldsSchema,
  type ContentListQuery,
  type ContentStatus,
  type CreateContentInput,
  type CreatedContent,
  type Job,
  type JobStatus,
  type Preview,
  type SkippedJob,
  type UpdateContentInput,
  type UpdatedContent,
} from './contents.schema.js';
import { CONNECTION_STATUSES, type ConnectionStatus } from '../connections/connections.schema.js';
import { findConnectionsByIds } from '../../../db/repositories/connections.repo.js';
import type { SETTLED_STATUSES } from '../../vocabulary/content-statuses.js';
import { CONFIRMATION_ERROR_CODES, type JobErrorCode } from '../../vocabulary/job-errors.js';

/**
 * Why a retry left a failed job alone: its connection cannot publish (checked first, since even `force` would not
 * make it publish), or its post may already be live.
 */
function skippedJob(j: JobRow, connectionStatus: string): SkippedJob {
  const base = { job_id: j.id, platform_slug: j.platformSlug as Job['platform_slug'], connection_id: j.connectionId };
  const status = (CONNECTION_STATUSES as readonly string[]).includes(connectionStatus) ? (connectionStatus as ConnectionStatus) : 'inactive';
  if (status !== 'active') {
    return {
      ...base,
      connection_status: status,
      reason: 'connection_not_active',
      message:
        status === 'expired'
          ? `The connection ${j.connectionId} has expired: reconnect it, then retry.`
          : `The connection ${j.connectionId} is inactive: it can no longer publish.`,
    };
  }
  return {
    ...base,
    connection_status: status,
    reason: 'may_be_live',
    message: 'The job failed confirmation and its post may already be live: check the network, then retry with force if it is not there.',
  };
}

function renderJob(j: JobRow): Job {
  return {
    job_id: j.id,
    platform_slug: j.platformSlug as Job['platform_slug'],
    connection_id: j.connectionId,
    status: j.status as JobStatus,
    error_code: j.errorCode as JobErrorCode | null,
    error_message: j.errorMessage,
    external_post_url: j.externalPostUrl,
    notice: j.notice,
    previous_status: j.previousStatus,
    attempts: j.attempts,
    created_at: toIso(j.createdAt),
    updated_at: toIso(j.updatedAt),
    published_at: j.publishedAt === null ? null : toIso(j.publishedAt),
  };
}

function renderWhen(row: ContentRow) {
  return {
    publish_at: row.publishAt === null ? null : toIso(row.publishAt),
    time_zone: row.timeZone,
    local_publish_at: row.localPublishAt,
    queued: row.queueSlot !== null,
  };
}

type Overrides = NonNullable<ContentFields['overrides']>;

/**
 * The per-platform texts a content was given (its stored fields' `overrides`); none for a content stored before
 * its fields were kept with it.
 */
function overridesOf(row: ContentRow): Overrides | null {
  if (row.input === null) return null;
  const fields = JSON.parse(row.input) as { overrides?: Overrides };
  return fields.overrides === undefined || Object.keys(fields.overrides).length === 0 ? null : fields.overrides;
}

function renderContent(row: ContentRow, jobs: JobRow[]): Content {
  const request = parseStoredRequest(row.request);
  const thread = request.targets.find((t) => t.thread !== null)?.thread ?? null;
  const overrides = overridesOf(row);
  return {
    content_id: row.id,
    brand_id: row.brandId,
    content_type: row.contentType as Content['content_type'],
    status: row.status as ContentStatus,
    target_platforms: request.targets.map((t) => t.platform as Content['target_platforms'][number]),
    ...renderWhen(row),
    text: request.text,
    title: request.title,
    thread,
    media: request.media.map((m) => (m.mediaId !== null ? { media_id: m.mediaId } : { url: m.url ?? '' })),
    overrides,
    // What each platform publishes is the stored request's, so what is shown is what the publisher sends.
    targets: request.targets.map((t) => {
      const own = overrides?.[t.platform as keyof Overrides];
      return {
        platform_slug: t.platform as Content['target_platforms'][number],
        text: t.text,
        title: t.title,
        own_text: own?.text !== undefined,
        own_title: own?.title !== undefined,
      };
    }),
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
    completed_at: row.completedAt === null ? null : toIso(row.completedAt),
    jobs: jobs.map(renderJob),
  };
}

function contentNotFound(id: string): ServiceError {
  return new ServiceError('not_found', `Content ${id} was not found in this workspace.`);
}

function notEditable(row: ContentRow): ServiceError {
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

function invalid(path: string, message: string): ServiceError {
  return new ServiceError('validation_failed', `${path}: ${message}`, { fields: [{ path, message }] });
}

/** The content fields of a creation request (its timing is not stored with them). */
function fieldsOf(input: CreateContentInput): ContentFields {
  return withoutTiming(input);
}

/** A request's fields without its timing (publish_at, time_zone, queue, draft). */
function withoutTiming<T extends { publish_at?: unknown; time_zone?: unknown; queue?: unknown; draft?: unknown }>(input: T): Omit<T, 'publish_at' | 'time_zone' | 'queue' | 'draft'> {
  const out: Record<string, unknown> = { ...input };
  for (const key of ['publish_at', 'time_zone', 'queue', 'draft']) delete out[key];
  return out as Omit<T, 'publish_at' | 'time_zone' | 'queue' | 'draft'>;
}

/** An edit applied to the stored fields: sent fields replace, `null` clears; the result is checked as at creation. */
function mergeFields(stored: ContentFields, patch: UpdateContentInput): ContentFields {
  const changes = withoutTiming(patch);
  const merged: Record<string, unknown> = { ...stored };
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  const parsed = contentFieldsSchema.safeParse(merged);
  if (!parsed.success) throw validationError(parsed.error, 'body');
  return parsed.data;
}

/**
 * The platforms whose own text or title an edit left in place while it changed the shared one: an edit that
 * sends `overrides` chose them itself, so nothing is reported then.
 */
function keptOverrides(stored: ContentFields, fields: ContentFields, patch: UpdateContentInput): UpdatedContent['kept_overrides'] {
  if (patch.overrides !== undefined) return [];
  const changed = {
    text: patch.text !== undefined && (patch.text ?? undefined) !== stored.text,
    title: patch.title !== undefined && (patch.title ?? undefined) !== stored.title,
  };
  const kept: UpdatedContent['kept_overrides'] = [];
  for (const platform of fields.target_platforms) {
    const own = fields.overrides?.[platform];
    const which = (['text', 'title'] as const).filter((f) => changed[f] && own?.[f] !== undefined);
    if (which.length > 0) kept.push({ platform_slug: platform, fields: which });
  }
  return kept;
}

/** Where a stored content's time stands, as columns. */
interface Placement {
  status: 'draft' | 'scheduled' | 'publishing';
  time: PublishTime | null;
  slot: number | null;
}

export type ContentsService = ReturnType<typeof createContentsService>;

export function createContentsService(deps: {
  db: Kysely<Database>;
  clock: Clock;
  meters: MetersService;
  idempotency: IdempotencyService;
  probeMedia: ProbeMedia;
  wallet: WalletService;
  /** How a creation's writes are committed; on SQLite, together with the creations that arrive meanwhile. */
  transact?: Transact;
}) {
  const { db, clock, meters, idempotency, wallet } = deps;
  const transact: Transact = deps.transact ?? ((work) => db.transaction().execute(work));

  /** The brand's zone: a local publish_at without a zone is read in it. */
  async function zoneOf(workspaceId: string, brandId: string): Promise<string> {
    return brandTimeZone(await findBrandQueue(db, workspaceId, brandId));
  }

  /**
   * Takes the brand's earliest free queue slot under the queue's row lock (taken first, so requests racing for
   * the brand's next slot are served one after another); `releasing` is a slot the caller gives up at the same
   * time. The unique index on (brand_id, queue_slot) backs the lock.
   * @throws ServiceError validation_failed (`queue`) when the brand has no queue or no free slot within 365 days.
   */
  async function takeQueueSlot(tx: Kysely<Database>, workspaceId: string, brandId: string, now: number, releasing: number | null = null): Promise<Placement> {
    const row = await lockBrandQueue(tx, workspaceId, brandId);
    if (!row) throw invalid('queue', `brand ${brandId} has no queue; set its slots first with PUT /api/v1/workspaces/{wsId}/brands/${brandId}/queue`);
    const queue = storedQueue(row);
    const held = await heldQueueSlots(tx, brandId, now);
    if (releasing !== null) held.delete(releasing);
    const [slot] = nextSlots(queue, now, 1, held);
    if (slot === undefined || slot > now + MAX_SCHEDULE_AHEAD_MS) throw invalid('queue', `the queue of brand ${brandId} has no free slot in the next 365 days`);
    return { status: 'scheduled', time: slotTime(slot, queue.time_zone), slot };
  }

  function jobRowsFor(plan: ContentPlan, contentId: string, workspaceId: string, now: number) {
    return plan.targets.map((t) => ({
      id: newTimeOrderedId('job_', now),
      contentId,
      workspaceId,
      connectionId: t.connection.id,
      platformSlug: t.platform,
      sandboxOutcome: t.sandboxOutcome,
      now,
    }));
  }

  /** Stores a checked content as its timing asks; charges only what starts publishing now. */
  async function store(tx: Kysely<Database>, workspaceId: string, plan: ContentPlan, fields: ContentFields, timing: Timing): Promise<CreatedContent> {
    const now = clock.now();
    const contentId = newTimeOrderedUuid(now);
    const placement: Placement =
      timing.kind === 'now'
        ? { status: 'publishing', time: null, slot: null }
        : timing.kind === 'draft'
          ? { status: 'draft', time: null, slot: null }
          : timing.kind === 'at'
            ? { status: 'scheduled', time: timing.time, slot: null }
            : await takeQueueSlot(tx, workspaceId, plan.brandId, now);
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
    };
    await insertContent(tx, row);
    const jobs = placement.status === 'draft' ? [] : jobRowsFor(plan, contentId, workspaceId, now);
    await insertJobs(tx, jobs, placement.status === 'scheduled' ? placement.time!.instant : null);
    if (placement.status === 'publishing') await chargeStart(tx, wallet, { workspaceId, modo: fields.modo ?? 'plano', contentId, jobs, plan: plan.workspacePlan });
    return {
      content_id: contentId,
      status: placement.status,
      ...renderWhen({ ...row, version: 0 }),
      created_at: toIso(now),
      jobs: jobs.map((j) => ({ job_id: j.id, platform_slug: j.platformSlug, connection_id: j.connectionId, status: placement.status === 'scheduled' ? ('scheduled' as const) : ('queued' as const) })),
    };
  }

  async function create(principal: Principal, workspaceId: string, input: CreateContentInput, idempotencyKey?: string): Promise<IdempotentResult<CreatedContent>> {
    assertWorkspaceAccess(principal, workspaceId);
    // One rule for every door; a door that names the key otherwise (the REST header) checks it first.
    parseIdempotencyKey(idempotencyKey, 'idempotency_key');
    const run = async (record?: (tx: Kysely<Database>, value: CreatedContent) => Promise<void>) => {
      const fields = fieldsOf(input);
      const timing = timingOf(input, input.publish_at !== undefined && input.time_zone === undefined ? await zoneOf(workspaceId, input.brand_id) : 'UTC', clock.now());
      const plan = await planContent(db, workspaceId, fields, deps.probeMedia);
      return transact(async (tx) => {
        const created = await store(tx, workspaceId, plan, fields, timing);
        if (record) await record(tx, created);
        return created;
      });
    };
    if (idempotencyKey === undefined) return { replayed: false, outcome: { ok: true, value: await run() } };
    return idempotency.run<CreatedContent>(workspaceId, idempotencyKey, requestHash({ op: 'create_content', input }), run);
  }

  /** Runs a change of one content under an optional Idempotency-Key (one outcome per key and body). */
  async function once<T>(
    workspaceId: string,
    idempotencyKey: string | undefined,
    hash: unknown,
    work: (record?: (tx: Kysely<Database>, value: T) => Promise<void>) => Promise<T>,
  ): Promise<IdempotentResult<T>> {
    parseIdempotencyKey(idempotencyKey, 'idempotency_key');
    if (idempotencyKey === undefined) return { replayed: false, outcome: { ok: true, value: await work() } };
    return idempotency.run<T>(workspaceId, idempotencyKey, requestHash(hash), work);
  }

  /** The content as it stands, or the error that stops a change of it. */
  async function editable(workspaceId: string, contentId: string): Promise<ContentRow> {
    const row = await findContent(db, workspaceId, contentId);
    if (!row) throw contentNotFound(contentId);
    if (!(EDITABLE_STATUSES as readonly string[]).includes(row.status)) throw notEditable(row);
    return row;
  }

  /**
   * Retries a change that lost the version race to another edit (never one that lost to the scheduler or a
   * cancel: those leave the content not editable, which the next read reports).
   */
  async function withVersionRetry<T>(attempt: () => Promise<T | null>): Promise<T> {
    for (let i = 0; i < 5; i += 1) {
      const result = await attempt();
      if (result !== null) return result;
    }
    throw new ServiceError('server_error', 'The content kept changing while this change was applied; retry.');
  }

  function storedFields(row: ContentRow): ContentFields {
    if (row.input === null) throw notEditable(row);
    return contentFieldsSchema.parse(JSON.parse(row.input));
  }

  return {
    /**
     * Spec 4.3 and issue 16: checks everything, then in one transaction stores the content and, as its timing asks,
     * starts publishing (charging the meters and queueing one job per target), schedules it at `publish_at` or at
     * the brand's next free queue slot (jobs wait as `scheduled`, nothing is charged until they start), or saves
     * a draft (no jobs). With an Idempotency-Key, the first outcome is replayed for the same request.
     * @throws ServiceError `validation_failed` (also for a malformed key, naming `idempotency_key`; a bad or past
     *   `publish_at`; a brand without queue), `not_found`, `platform_not_supported`, `connections_required`,
     *   `caption_too_long`, `media_too_large`, `limit_reached`, `idempotency_conflict`. A replayed error carries
     *   `replayed: true`.
     */
    create,

    /**
     * Edits a draft or scheduled content (issue 16): the fields sent replace the stored ones, the result is checked
     * again as at creation, and its jobs are rebuilt from it. A time (`publish_at`, `queue`) schedules it, `draft`
     * turns it back into a draft. The write is conditional on the version and status read, so an edit never
     * overwrites another and never touches a content the scheduler or a cancel took first. Charges nothing.
     * A platform with its own text or title in `overrides` keeps it when the shared one changes; the answer's
     * `kept_overrides` names those platforms.
     * @throws ServiceError `not_found`, `content_not_editable`, and the checks' errors as `create`.
     */
    async update(principal: Principal, workspaceId: string, contentId: string, patch: UpdateContentInput, idempotencyKey?: string): Promise<IdempotentResult<UpdatedContent>> {
      assertWorkspaceAccess(principal, workspaceId);
      return once<UpdatedContent>(workspaceId, idempotencyKey, { op: 'update_content', contentId, patch }, (record) =>
        withVersionRetry(async () => {
          const row = await editable(workspaceId, contentId);
          const stored = storedFields(row);
          const fields = mergeFields(stored, patch);
          const now = clock.now();
          // A new local time without a zone is read in the content's zone, else the brand's.
          const zone = patch.publish_at !== undefined && patch.time_zone === undefined ? (row.timeZone ?? (await zoneOf(workspaceId, row.brandId))) : 'UTC';
          const timing = timingOf(patch, zone, now);
          const plan = await planContent(db, workspaceId, { ...fields, brand_id: row.brandId }, deps.probeMedia);
          return db.transaction().execute(async (tx) => {
            const current: Placement = {
              status: row.status as 'draft' | 'scheduled',
              time: row.publishAt === null ? null : { instant: row.publishAt, zone: row.timeZone ?? 'UTC', local: row.localPublishAt ?? '' },
              slot: row.queueSlot,
            };
            const placement: Placement =
              timing.kind === 'now'
                ? current
                : timing.kind === 'draft'
                  ? { status: 'draft', time: null, slot: null }
                  : timing.kind === 'at'
                    ? { status: 'scheduled', time: timing.time, slot: null }
                    : await takeQueueSlot(tx, workspaceId, row.brandId, now, row.queueSlot);
            const set: ContentChanges = {
              status: placement.status,
              request: storeRequest(plan),
              input: JSON.stringify(fields),
              contentType: plan.contentType,
              publishAt: placement.time?.instant ?? null,
              timeZone: placement.time?.zone ?? null,
              localPublishAt: placement.time?.local ?? null,
              queueSlot: placement.slot,
            };
            const written = await transitionContent(tx, { workspaceId, id: contentId, from: [row.status], version: row.version, now, set });
            if (!written) return null;
            await deleteScheduledJobs(tx, contentId);
            const jobs = placement.status === 'scheduled' ? jobRowsFor(plan, contentId, workspaceId, now) : [];
            await insertJobs(tx, jobs, placement.time?.instant ?? null);
            const content = { ...renderContent(written, await listJobsForContent(tx, contentId)), kept_overrides: keptOverrides(stored, fields, patch) };
            if (record) await record(tx, content);
            return content;
          });
        }),
      );
    },

    /**
     * Cancels a draft or scheduled content: it will never publish, its queue slot is free at once, and nothing was
     * charged. Canceling a canceled content answers it again. The cancel is one conditional update, so against the
     * scheduler at the due instant whichever commits first wins.
     * @throws ServiceError `not_found`, `content_not_editable` (publishing started or finished).
     */
    async cancel(principal: Principal, workspaceId: string, contentId: string, idempotencyKey?: string): Promise<IdempotentResult<Content>> {
      assertWorkspaceAccess(principal, workspaceId);
      return once<Content>(workspaceId, idempotencyKey, { op: 'cancel_content', contentId }, (record) => {
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
            await deleteScheduledJobs(tx, contentId);
            content = renderContent(written, []);
          } else {
            const row = await findContent(tx, workspaceId, contentId);
            if (!row) throw contentNotFound(contentId);
            if (row.status !== 'canceled') throw notEditable(row);
            content = renderContent(row, await listJobsForContent(tx, contentId));
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
      assertWorkspaceAccess(principal, workspaceId);
      return once<Content>(workspaceId, idempotencyKey, { op: 'publish_content_now', contentId }, (record) =>
        withVersionRetry(async () => {
          const row = await editable(workspaceId, contentId);
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
            let jobs: { id: string; platformSlug: string }[];
            if (plan) {
              const rows = jobRowsFor(plan, contentId, workspaceId, now);
              await insertJobs(tx, rows);
              jobs = rows;
            } else {
              jobs = await startScheduledJobs(tx, contentId, now);
            }
            await chargeStart(tx, wallet, { workspaceId, modo: fields.modo ?? 'plano', contentId, jobs });
            const content = renderContent(written, await listJobsForContent(tx, contentId));
            if (record) await record(tx, content);
            return content;
          });
        }),
      );
    },


    /**
     * Dry run: every check of `create` and the meter consumption it would need, creating nothing.
     * @throws the same errors as `create`, including `limit_reached` when a meter would not suffice.
     */
    async preview(principal: Principal, workspaceId: string, input: CreateContentInput): Promise<Preview> {
      assertWorkspaceAccess(principal, workspaceId);
      // The timing is checked as creation checks it (a past publish_at is refused here too).
      timingOf(input, input.publish_at !== undefined && input.time_zone === undefined ? await zoneOf(workspaceId, input.brand_id) : 'UTC', clock.now());
      const plan = await planContent(db, workspaceId, fieldsOf(input), deps.probeMedia);
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
      const found = await findContentWithJobs(db, workspaceId, contentId);
      if (!found) throw contentNotFound(contentId);
      return renderContent(found.content, found.jobs);
    },

    /**
     * Newest first, cursor-paginated, filtered by status and creation date; with `from` or `to`, the calendar
     * feed: contents whose publish_at is in the window, earliest first.
     */
    async list(principal: Principal, workspaceId: string, query: ContentListQuery): Promise<{ data: Content[]; next_cursor: string | null }> {
      assertWorkspaceAccess(principal, workspaceId);
      if (query.from !== undefined || query.to !== undefined) {
        const from = query.from === undefined ? undefined : Date.parse(query.from);
        const to = query.to === undefined ? undefined : Date.parse(query.to);
        if (from !== undefined && to !== undefined && to <= from) throw invalid('to', 'must be after from');
        const rows = await listContentsByPublishAt(db, workspaceId, {
          status: query.status,
          from,
          to,
          after: query.cursor === undefined ? undefined : decodeWindowCursor(query.cursor),
          limit: query.limit + 1,
        });
        const page = rows.slice(0, query.limit);
        const jobs = await listJobsForContents(db, page.map((r) => r.id));
        const last = page[page.length - 1];
        return {
          data: page.map((r) => renderContent(r, jobs.filter((j) => j.contentId === r.id))),
          next_cursor: rows.length > query.limit && last ? encodeWindowCursor({ at: last.publishAt ?? 0, id: last.id }) : null,
        };
      }
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
