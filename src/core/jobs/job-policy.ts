/**
 * Spec 3.2 and 7.4: what becomes of a publishing job after each step — submit, publish, confirm. Retry or fail,
 * when the next run is due, whether a failure gives its credit back and whether it expires the connection. Pure
 * functions over values with the time passed in, as `core/webhooks/retry-policy.ts` is for deliveries: the
 * publisher worker claims, calls the network, asks here, and writes what it is told.
 */
import { CONFIRMATION_ERROR_CODES, JOB_ERROR_MESSAGES, type JobErrorCode, MAX_ANNOUNCED_WAIT_MS } from '../../vocabulary/job-errors.js';
import { UNKNOWN_SIZE_MEDIA_CAP_BYTES } from '../../vocabulary/platforms.js';

/** The timings the policy works with (fixed defaults in src/config/test-overrides.ts, which tests compress). */
export interface JobPolicySettings {
  /** Delay before each automatic retry of a transient failure; its length is the number of retries. */
  retryDelaysMs: readonly number[];
  /** How long a network may keep a container or upload processing before the job fails. */
  publishDeadlineMs: number;
  /** Between confirmation checks, until the confirmation deadline. */
  confirmIntervalMs: number;
  /** How long after publishing the post must be confirmed (spec 7.4). */
  confirmDeadlineMs: number;
  /** Between late checks of a job that failed confirmation (spec 3.2). */
  lateCheckIntervalMs: number;
  /** How long late checks go on after a confirmation failure. */
  lateCheckWindowMs: number;
}

/** Spec 7.4: consecutive "not found" answers after which a published post is declared missing. */
export const CONFIRMATION_MISSES = 2;

/** A failure to record: a spec 7.4 code and our own sentence. */
export interface JobFailure {
  code: JobErrorCode;
  message: string;
  /** Part of the publication is public despite the failure (a chain stopped half way). */
  partlyLive?: boolean | undefined;
}

/** The job ends failed. */
export interface Failed {
  next: 'failed';
  code: JobErrorCode;
  message: string;
  /** Give back what the publication cost. */
  refund: boolean;
  /** Move the connection from active to expired, with the code as its reason (and record `connection.expired`). */
  expireConnection: boolean;
  /** The post may be live: check again at `runAt`, slower, until `until` (spec 3.2 late confirmation). */
  lateCheck: { runAt: number; until: number } | null;
}

/** The job goes back to the queue for another attempt at `runAt`; the failure is kept as its last error. */
export interface Retry {
  next: 'queued';
  code: JobErrorCode;
  message: string;
  runAt: number;
}

/** The job waits on the network (its container or upload is processing) and is published again at `runAt`. */
export interface Processing {
  next: 'publishing';
  runAt: number;
}

/**
 * Spec 7.4: a failure that makes the account unusable until the user reconnects it expires the connection; other
 * jobs on it then fail fast instead of calling the network.
 */
export function expiresConnection(code: JobErrorCode): boolean {
  return code === 'token_expired' || code === 'permission_revoked';
}

/**
 * A publication that certainly did not happen is not paid for. Confirmation failures keep their charge: the post
 * may be live (a late confirmation would then make a refund wrong); so does a chain that stopped half way, whose
 * first posts are public.
 */
export function refunds(failure: JobFailure): boolean {
  return !CONFIRMATION_ERROR_CODES.includes(failure.code) && failure.partlyLive !== true;
}

/** The job fails with `failure` and stops (no late check). */
export function failed(failure: JobFailure): Failed {
  return {
    next: 'failed',
    code: failure.code,
    message: failure.message,
    refund: refunds(failure),
    expireConnection: expiresConnection(failure.code),
    lateCheck: null,
  };
}

/** The content or the connection of a job is gone: nothing can be published. */
export function nothingToPublish(): Failed {
  return failed({ code: 'upstream_unknown', message: JOB_ERROR_MESSAGES.upstream_unknown });
}

/**
 * Before anything is submitted: a connection that is not active, or a live one without usable credentials (its
 * refresh failed), fails the job with `token_expired`; null when the job may go ahead.
 */
export function beforeSubmit(connection: { status: string; mode: string } | null, hasCredentials: boolean): Failed | null {
  if (connection?.status === 'active' && (connection.mode !== 'live' || hasCredentials)) return null;
  const message = connection?.status === 'expired' ? JOB_ERROR_MESSAGES.token_expired : 'The connection was deactivated. Reconnect it to publish.';
  return failed({ code: 'token_expired', message });
}

/** Spec 8: a media address that gave no size and could not be fetched within the service's cap. */
export function unknownSizeMediaRefused(tooLarge: boolean): Failed {
  return tooLarge
    ? failed({
        code: 'media_too_large',
        message: `The media address does not report the file size, and the file is over the service's ${UNKNOWN_SIZE_MEDIA_CAP_BYTES / (1024 * 1024)} MB cap for such addresses.`,
      })
    : failed({ code: 'upstream_unknown', message: 'The media address could not be fetched.' });
}

/**
 * After a failed submit or publish that was attempt number `attempts` (1-based): a retryable failure is retried
 * after `retryDelaysMs[attempts - 1]` while that delay exists, or after the wait the network announced when that
 * is longer (at most MAX_ANNOUNCED_WAIT_MS), so a rate limit's retries are not spent before it resets; after the
 * last retry, or for a failure retrying cannot fix, the job fails.
 */
export function afterNetworkFailure(
  failure: JobFailure & { retryable: boolean; retryAfterMs?: number | undefined },
  attempts: number,
  now: number,
  settings: JobPolicySettings,
): Retry | Failed {
  if (failure.retryable && attempts <= settings.retryDelaysMs.length) {
    const scheduled = settings.retryDelaysMs[attempts - 1] ?? 0;
    const announced = Math.min(failure.retryAfterMs ?? 0, MAX_ANNOUNCED_WAIT_MS);
    return { next: 'queued', code: failure.code, message: failure.message, runAt: now + Math.max(scheduled, announced) };
  }
  return failed(failure);
}

/**
 * After a successful submit: the container is published next, and the network has until the returned deadline
 * to finish processing it.
 */
export function publishDeadline(now: number, settings: JobPolicySettings): number {
  return now + settings.publishDeadlineMs;
}

/**
 * The network is still processing the container or upload: come back after `retryAfterMs`, without spending an
 * attempt — unless the publishing deadline is reached (at `now >= deadline`), then the job fails.
 */
export function afterPublishPending(deadline: number | null, retryAfterMs: number, now: number): Processing | Failed {
  if (deadline !== null && now >= deadline) {
    return failed({ code: 'upstream_5xx', message: 'The network was still processing the media when the publishing deadline passed.' });
  }
  return { next: 'publishing', runAt: now + retryAfterMs };
}

/** After a successful publish: confirm the post (spec 7.4), first at `runAt`, until `deadline`. */
export function afterPublished(now: number, settings: JobPolicySettings): { next: 'confirming'; deadline: number; runAt: number } {
  return { next: 'confirming', deadline: now + settings.confirmDeadlineMs, runAt: now + settings.confirmIntervalMs };
}

/** What a confirmation check knows of its job. */
export interface ConfirmingJob {
  /** The job already failed confirmation and this is a late check (spec 3.2). */
  late: boolean;
  /** Consecutive "not found" answers so far. */
  misses: number;
  /** The confirmation deadline. */
  deadline: number | null;
  /** The end of the late-check window. */
  lateCheckUntil: number | null;
}

/** What the network said about the post (the adapter's `Confirmation`). */
export type ConfirmationAnswer = { state: 'found'; url: string; notice?: string } | { state: 'pending' | 'not_found' | 'unavailable' };

export type AfterConfirm =
  /**
   * The post is live at `url`. A late confirmation corrects the earlier failure (`previous_status: failed`).
   * `notice` is the network's word on the post for its author (null: nothing to say).
   */
  | { next: 'published'; url: string; corrects: boolean; notice: string | null }
  /** Still confirming: check again at `runAt`. */
  | { next: 'confirming'; misses: number; runAt: number }
  /** A late check found nothing: the job stays failed; checked again at `runAt` only if `keepChecking`. */
  | { next: 'still_failed'; keepChecking: boolean; runAt: number }
  /** Confirmation failed; late checks follow. */
  | (Failed & { misses: number });

/**
 * Spec 7.4 confirmation, then spec 3.2 late checks. A "not found" counts a miss, any other answer resets the
 * count; `CONFIRMATION_MISSES` in a row is `post_inexistente`. At the deadline (`now >= deadline`) the job fails
 * `confirmacao_indisponivel` when the network could not be asked, else `confirmacao_esgotada`. Those failures
 * keep their charge and are checked again, slower, for `lateCheckWindowMs`; a late check that finds nothing
 * stops once the window has passed.
 */
export function afterConfirm(job: ConfirmingJob, answer: ConfirmationAnswer, now: number, settings: JobPolicySettings): AfterConfirm {
  if (answer.state === 'found') return { next: 'published', url: answer.url, corrects: job.late, notice: answer.notice ?? null };
  const { state } = answer;
  if (job.late) {
    const over = job.lateCheckUntil === null || now >= job.lateCheckUntil;
    return { next: 'still_failed', keepChecking: !over, runAt: now + settings.lateCheckIntervalMs };
  }
  const misses = state === 'not_found' ? job.misses + 1 : 0;
  let code: JobErrorCode | null = null;
  if (misses >= CONFIRMATION_MISSES) code = 'post_inexistente';
  else if (job.deadline !== null && now >= job.deadline) code = state === 'unavailable' ? 'confirmacao_indisponivel' : 'confirmacao_esgotada';
  if (code === null) return { next: 'confirming', misses, runAt: now + settings.confirmIntervalMs };
  return {
    ...failed({ code, message: JOB_ERROR_MESSAGES[code] }),
    lateCheck: { runAt: now + settings.lateCheckIntervalMs, until: now + settings.lateCheckWindowMs },
    misses,
  };
}
