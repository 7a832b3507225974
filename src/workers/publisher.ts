import type { Kysely } from 'kysely';
import PQueue from 'p-queue';
import { type ConnectionRow, findConnectionById, findConnectionsByIds, transitionConnection } from '../../db/repositories/connections.repo.js';
import { type ContentRow, findContentsByIds } from '../../db/repositories/contents.repo.js';
import { claimDueJobs, type JobRow, type JobUpdate, releaseLease, renewLease, updateJobUnderLease } from '../../db/repositories/jobs.repo.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../core/clock.js';
import { keepLease, realTimers } from '../core/lease.js';
import { recordConnectionExpired } from '../core/events/events.js';
import {
  afterConfirm,
  afterNetworkFailure,
  afterPublished,
  afterPublishPending,
  beforeSubmit,
  type Failed,
  type JobPolicySettings,
  nothingToPublish,
  publishDeadline,
  unknownSizeMediaRefused,
} from '../core/jobs/job-policy.js';
import { refreshContentOutcome, writeJobStep } from '../core/jobs/outcome.js';
import type { Logger } from '../observability/logger.js';
import { type Claim, createClaimLoop } from './claim-loop.js';
import { buildJobRequest } from './job-request.js';
import type { LiveCredentials, NetworkAdapter, NetworkFailure, PublishRequest } from '../networks/adapter.js';
import type { PlatformSlug } from '../vocabulary/platforms.js';

/** The worker's mechanics (concurrency, lease, polling) and the job policy's timings. */
export interface PublisherSettings extends JobPolicySettings {
  concurrency: number;
  perConnection: number;
  /**
   * How long a claim holds a job. A run takes the lease when it starts (not when it was claimed: the wait in the
   * per-connection queue is not covered) and renews it every `renewEveryMs` while it runs, so a run of any length
   * keeps its job and a crashed worker's job is free again within this long.
   */
  leaseMs: number;
  /** How often a running job renews its lease; a third of `leaseMs` when unset. */
  renewEveryMs?: number;
  pollMs: number;
}

/** Checks a media address that gave no size against the service cap (spec 8), streaming at most the cap. */
export type UnknownSizeMediaCheck = (url: string) => Promise<{ ok: true } | { ok: false; tooLarge: boolean }>;

export interface PublisherDeps {
  db: Kysely<Database>;
  dialect: 'sqlite' | 'postgres';
  clock: Clock;
  logger: Logger;
  adapterFor(mode: string, platform: PlatformSlug): NetworkAdapter;
  checkUnknownSizeMedia: UnknownSizeMediaCheck;
  /** The account and token a live connection publishes with (refreshed first when it is about to expire). */
  credentialsFor(connectionId: string): Promise<LiveCredentials | null>;
  /** A signed public address of an upload, for networks that download media themselves. */
  publicMediaUrl(mediaId: string): string;
  /** Gives back what a failed publication cost (called in the failure's transaction). */
  refundJob(tx: Kysely<Database>, jobId: string, workspaceId: string): Promise<void>;
  /**
   * Observability: a job reached a final state. Called only after that state was committed under the run's
   * lease, so a run that lost its job to another worker counts nothing (the metric equals the written outcomes).
   */
  onFinal?(platform: string, status: 'published' | 'failed', code: string | null): void;
  settings: PublisherSettings;
}

/** A job this worker claimed and has not finished: waiting in its connection's queue, or running. */
interface Held {
  id: string;
  /** The claim token every write of the run is checked against. */
  lease: string;
  /** The row as claimed (the run starts from it). */
  job: JobRow;
  /** The job's content, read with the claim (undefined when it is gone). */
  content: ContentRow | undefined;
  /** The job's connection, read with the claim at `claimedAt` (undefined when it is gone). */
  connection: ConnectionRow | undefined;
  claimedAt: number;
  started: boolean;
  /** A newer claim of the same job by this worker while it was running: run again after, from that row. */
  next: Pick<Held, 'lease' | 'job' | 'content' | 'connection' | 'claimedAt'> | null;
}

/**
 * How long after its claim a run may use the connection read with it. A run that waited longer in its
 * connection's queue reads the connection again: it may have been deactivated or expired meanwhile. Within this,
 * a change is as if it came just after the run began.
 */
const CLAIMED_CONNECTION_MS = 1_000;

/**
 * The publishing worker: claims due jobs with a lease, runs them through a bounded queue (overall and per
 * connection), and moves each along queued → publishing → confirming → published | failed. Every write is
 * checked against the lease; outcomes and their events commit together. A job reclaimed after a crash resumes
 * from what was recorded: a recorded container is published (idempotent per container), a recorded post is
 * confirmed — it is never submitted twice.
 */
export function createPublisher(deps: PublisherDeps) {
  const { db, clock, logger, settings } = deps;
  const queue = new PQueue({ concurrency: settings.concurrency });
  const perConnection = new Map<string, PQueue>();
  /** Jobs claimed by this worker and not finished, by id: released on shutdown so others need not wait for the lease. */
  const held = new Map<string, Held>();
  const renewEveryMs = settings.renewEveryMs ?? Math.max(1, Math.floor(settings.leaseMs / 3));
  const requestDeps = { db, clock, leaseMs: settings.leaseMs, credentialsFor: deps.credentialsFor, publicMediaUrl: deps.publicMediaUrl };
  const loop = createClaimLoop({
    idPrefix: 'wrk_',
    what: 'jobs',
    clock,
    logger,
    pollMs: settings.pollMs,
    leaseMs: settings.leaseMs,
    room: () => settings.concurrency - queue.size - queue.pending,
    claim,
  });

  const connectionQueue = (id: string) => {
    let q = perConnection.get(id);
    if (!q) {
      q = new PQueue({ concurrency: settings.perConnection });
      q.on('idle', () => perConnection.delete(id));
      perConnection.set(id, q);
    }
    return q;
  };

  /**
   * Writes a step under the lease. `content` says what the step means for its content (`writeJobStep`): then the
   * job and its content are written in one transaction; a step that leaves the content alone is one statement.
   */
  async function write(job: JobRow, lease: string, changes: JobUpdate, content?: 'final' | 'unfinished'): Promise<boolean> {
    const now = clock.now();
    const step = { id: job.id, contentId: job.contentId, lease, changes: { ...changes, updated_at: now } };
    if (content === undefined) return updateJobUnderLease(db, step.id, lease, step.changes);
    return db.transaction().execute((tx) => writeJobStep(tx, step, content, now));
  }

  const release = { locked_by: null, locked_until: null } as const;

  /** Writes a failure the policy decided, with what it brings (connection expiry, refund, late checks) in one transaction. */
  async function fail(job: JobRow, lease: string, failure: Failed, extra: JobUpdate = {}): Promise<void> {
    const now = clock.now();
    const written = await db.transaction().execute(async (tx) => {
      const ok = await updateJobUnderLease(tx, job.id, lease, {
        status: 'failed',
        error_code: failure.code,
        error_message: failure.message,
        active: failure.lateCheck === null ? 0 : 1,
        updated_at: now,
        ...release,
        ...(failure.lateCheck === null ? {} : { run_at: failure.lateCheck.runAt, late_check_until: failure.lateCheck.until }),
        ...extra,
      });
      if (!ok) return false;
      if (failure.expireConnection) {
        const conn = await findConnectionById(tx, job.connectionId);
        if (conn && (await transitionConnection(tx, conn.id, ['active'], 'expired', failure.code, now))) {
          await recordConnectionExpired(tx, { workspaceId: conn.workspaceId, connectionId: conn.id, brandId: conn.brandId, platformSlug: conn.platformSlug, reason: failure.code, now });
        }
      }
      if (failure.refund) await deps.refundJob(tx, job.id, job.workspaceId);
      await refreshContentOutcome(tx, job.contentId, now);
      return true;
    });
    // Counted once committed: a lost lease or a rolled-back transaction is not an outcome.
    if (written) deps.onFinal?.(job.platformSlug, 'failed', failure.code);
  }

  async function onFailure(job: JobRow, lease: string, failure: NetworkFailure, attempts: number): Promise<void> {
    const decision = afterNetworkFailure(failure, attempts, clock.now(), settings);
    if (decision.next === 'queued') {
      await write(job, lease, { status: 'queued', attempts, error_code: decision.code, error_message: decision.message, run_at: decision.runAt, ...release });
      return;
    }
    await fail(job, lease, decision, { attempts });
  }

  /** Confirmation (spec 7.4): until the deadline, then slower late checks for a window (spec 3.2). */
  async function confirm(job: JobRow, lease: string, req: PublishRequest, adapter: NetworkAdapter): Promise<void> {
    const late = job.status === 'failed';
    const result = await adapter.confirm(req, job.externalPostId ?? '', { late });
    const now = clock.now();
    const decision = afterConfirm({ late, misses: job.confirmMisses, deadline: job.confirmDeadline, lateCheckUntil: job.lateCheckUntil }, result, now, settings);
    // Every check is counted, whatever it found.
    const confirm_checks = job.confirmChecks + 1;
    switch (decision.next) {
      case 'published': {
        const written = await write(
          job,
          lease,
          {
            status: 'published',
            external_post_url: decision.url,
            notice: decision.notice,
            published_at: now,
            active: 0,
            error_code: null,
            error_message: null,
            previous_status: decision.corrects ? 'failed' : job.previousStatus,
            confirm_checks,
            ...release,
          },
          'final',
        );
        // Only a written outcome counts: a run whose lease was taken over by another worker wrote nothing.
        if (written) deps.onFinal?.(job.platformSlug, 'published', null);
        return;
      }
      case 'still_failed':
        await write(job, lease, { active: decision.keepChecking ? 1 : 0, run_at: decision.runAt, confirm_checks, ...release });
        return;
      case 'confirming':
        await write(job, lease, { confirm_misses: decision.misses, confirm_checks, run_at: decision.runAt, ...release });
        return;
      case 'failed':
        await fail(job, lease, decision, { confirm_misses: decision.misses, confirm_checks });
        return;
    }
  }

  async function process(job: JobRow, content: ContentRow | undefined, lease: string, connection: ConnectionRow | null): Promise<void> {
    const built = await buildJobRequest(requestDeps, job, content, lease, connection);
    if (!built) {
      await fail(job, lease, nothingToPublish());
      return;
    }
    const req = built.request;
    const adapter = deps.adapterFor(req.connection.mode, req.platform);
    if (job.status === 'confirming' || job.status === 'failed') {
      await confirm(job, lease, req, adapter);
      return;
    }

    let containerId = job.externalContainerId;
    if (containerId === null) {
      const refused = beforeSubmit(built.connection, req.credentials !== null);
      if (refused) {
        await fail(job, lease, refused);
        return;
      }
      for (const m of req.media) {
        if (m.sizeBytes !== null || !m.url.startsWith('http')) continue;
        const checked = await deps.checkUnknownSizeMedia(m.url);
        if (!checked.ok) {
          await fail(job, lease, unknownSizeMediaRefused(checked.tooLarge));
          return;
        }
      }
      const attempts = job.attempts + 1;
      const submitted = await adapter.submit({ ...req, attempt: attempts });
      if (!submitted.ok) {
        await onFailure(job, lease, submitted, attempts);
        return;
      }
      containerId = submitted.containerId;
      // Recorded before publishing: a reclaimed job publishes this container instead of creating another.
      // The deadline column serves the publishing phase until confirmation starts: how long the network may
      // keep processing the container before the job gives up.
      const deadline = publishDeadline(clock.now(), settings);
      if (!(await write(job, lease, { status: 'publishing', attempts, external_container_id: containerId, confirm_deadline: deadline }))) return;
      job = { ...job, attempts, confirmDeadline: deadline };
    }

    const published = await adapter.publish(req, containerId);
    if (published.ok === 'pending') {
      const decision = afterPublishPending(job.confirmDeadline, published.retryAfterMs, clock.now());
      if (decision.next === 'failed') await fail(job, lease, decision);
      else await write(job, lease, { status: 'publishing', run_at: decision.runAt, ...release });
      return;
    }
    if (!published.ok) {
      await onFailure(job, lease, published, job.attempts);
      return;
    }
    const confirming = afterPublished(clock.now(), settings);
    await write(job, lease, {
      status: 'confirming',
      external_post_id: published.postId,
      confirm_deadline: confirming.deadline,
      confirm_misses: 0,
      error_code: null,
      error_message: null,
      run_at: confirming.runAt,
      ...release,
    }, 'unfinished');
  }

  async function run(h: Held): Promise<void> {
    h.started = true;
    try {
      // The lease covers the run, not the wait in the connection's queue, so a long queue never lets a lease lapse
      // under a job that has not started: take it now, conditionally on the claim token. If another worker re-claimed the job meanwhile, this claim is
      // stale and the run does nothing — no network call, no write.
      if (!(await renewLease(db, h.id, h.lease, clock.now() + settings.leaseMs))) {
        logger.debug({ job_id: h.id }, 'job was claimed by another worker while it waited; skipped');
        return;
      }
      // Renewed against the run's token while it runs, so a lease outlasts the longest call. A run past the publishing deadline
      // is presumed stuck and stops renewing, so its job is freed for another worker within one lease.
      const runStartedAt = clock.now();
      const lease = keepLease(
        async () => {
          if (clock.now() - runStartedAt <= settings.publishDeadlineMs) return renewLease(db, h.id, h.lease, clock.now() + settings.leaseMs);
          logger.warn({ job_id: h.id }, 'job run outlived the publishing deadline; its lease is no longer renewed');
          return false;
        },
        renewEveryMs,
        realTimers,
        (err) => logger.warn({ err, job_id: h.id }, 'renewing a job lease failed; retried at the next renewal'),
      );
      try {
        const claimedConnection = clock.now() - h.claimedAt <= CLAIMED_CONNECTION_MS ? (h.connection ?? null) : null;
        await process(h.job, h.content, h.lease, claimedConnection);
      } finally {
        await lease.stop();
      }
    } catch (err) {
      logger.error({ err, job_id: h.id }, 'job run failed; it will be retried when its lease ends');
    } finally {
      held.delete(h.id);
      if (h.next && !loop.stopping) enqueue({ id: h.id, ...h.next, started: false, next: null });
      else if (h.next) await releaseLease(db, h.id, h.next.lease).catch(() => undefined);
      loop.refill();
    }
  }

  function enqueue(h: Held): void {
    held.set(h.id, h);
    void queue.add(() => connectionQueue(h.job.connectionId).add(() => run(h)));
  }

  /** Queues the jobs of one claim; returns how many were claimed. */
  async function claim(c: Claim): Promise<number> {
    const jobs = await claimDueJobs(db, deps.dialect, c);
    const contents = await findContentsByIds(db, jobs.map((j) => j.contentId));
    const connections = await findConnectionsByIds(db, jobs.map((j) => j.connectionId));
    for (const job of jobs) {
      const mine = held.get(job.id);
      const claimed = { lease: c.lease, job, content: contents.get(job.contentId), connection: connections.get(job.connectionId), claimedAt: c.now };
      if (mine === undefined) enqueue({ id: job.id, ...claimed, started: false, next: null });
      // Our own entry, still waiting, whose claim ran out: it keeps its place and runs under the new claim,
      // from the row as it is now (another worker may have moved the job on meanwhile).
      else if (!mine.started) Object.assign(mine, claimed);
      // Running here with a lapsed lease (renewals failed): its writes now fail; run again once it has stopped.
      else mine.next = claimed;
    }
    return jobs.length;
  }

  return {
    workerId: loop.workerId,
    tick: loop.tick,
    /** Runs due jobs until none is due (tests and CLI use it with a controlled clock). */
    async drain(): Promise<void> {
      for (;;) {
        const claimed = await loop.tick();
        await queue.onIdle();
        if (claimed === 0) return;
      }
    },
    start(): void {
      loop.start();
    },
    /** New jobs were queued (the scheduler started contents): claim now rather than at the next poll. */
    nudge(): void {
      loop.refill();
    },
    /** Stops claiming, lets running jobs finish (up to `graceMs`), then releases the leases still held. */
    async stop(graceMs = 10_000): Promise<void> {
      loop.stop();
      queue.clear();
      await Promise.race([queue.onIdle(), new Promise((r) => setTimeout(r, graceMs))]);
      for (const h of held.values()) {
        for (const lease of [h.lease, h.next?.lease]) if (lease !== undefined) await releaseLease(db, h.id, lease).catch(() => undefined);
      }
    },
  };
}
