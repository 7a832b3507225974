import { describe, expect, it } from 'vitest';
import {
  afterConfirm,
  afterNetworkFailure,
  afterPublished,
  afterPublishPending,
  beforeSubmit,
  CONFIRMATION_MISSES,
  type ConfirmationAnswer,
  type ConfirmingJob,
  expiresConnection,
  failed,
  type JobPolicySettings,
  nothingToPublish,
  publishDeadline,
  refunds,
  unknownSizeMediaRefused,
} from '../../src/core/jobs/job-policy.js';
import { JOB_ERROR_MESSAGES, type JobErrorCode, MAX_ANNOUNCED_WAIT_MS, NETWORK_ERROR_CODES } from '../../src/vocabulary/job-errors.js';

/**
 * The job policy as a table: inputs → decisions, with the edges (the last retry, a deadline exactly reached, the
 * miss count, which codes refund and which expire the connection). The integration suites (publishing, crash,
 * lease, networks) hold the same rules end to end; these pin each one on its own.
 */

const NOW = 1_000_000;
const S: JobPolicySettings = {
  retryDelaysMs: [1_000, 5_000, 30_000],
  publishDeadlineMs: 7_200_000,
  confirmIntervalMs: 10_000,
  confirmDeadlineMs: 300_000,
  lateCheckIntervalMs: 600_000,
  lateCheckWindowMs: 86_400_000,
};

describe('job policy: which failures refund and which expire the connection', () => {
  const table: { code: JobErrorCode; refund: boolean; expire: boolean }[] = [
    { code: 'token_expired', refund: true, expire: true },
    { code: 'permission_revoked', refund: true, expire: true },
    { code: 'media_unsupported_format', refund: true, expire: false },
    { code: 'media_too_large', refund: true, expire: false },
    { code: 'quota_exceeded', refund: true, expire: false },
    { code: 'upstream_5xx', refund: true, expire: false },
    { code: 'upstream_unknown', refund: true, expire: false },
    { code: 'confirmacao_esgotada', refund: false, expire: false },
    { code: 'confirmacao_indisponivel', refund: false, expire: false },
    { code: 'post_inexistente', refund: false, expire: false },
  ];

  it('the table covers every spec 7.4 code', () => {
    expect(table.map((r) => r.code).sort()).toEqual([...NETWORK_ERROR_CODES].sort());
  });

  it.each(table)('$code: refund $refund, expire connection $expire', ({ code, refund, expire }) => {
    expect(refunds({ code, message: 'm' })).toBe(refund);
    expect(expiresConnection(code)).toBe(expire);
    expect(failed({ code, message: 'm' })).toEqual({ next: 'failed', code, message: 'm', refund, expireConnection: expire, lateCheck: null });
  });

  it('a chain that stopped half way keeps its charge, whatever the code', () => {
    expect(refunds({ code: 'upstream_5xx', message: 'm', partlyLive: true })).toBe(false);
    expect(refunds({ code: 'upstream_5xx', message: 'm', partlyLive: false })).toBe(true);
    expect(failed({ code: 'token_expired', message: 'm', partlyLive: true })).toMatchObject({ refund: false, expireConnection: true });
  });
});

describe('job policy: after a failed submit or publish', () => {
  const transient = { code: 'upstream_5xx' as const, message: 'busy', retryable: true };
  const table: { name: string; failure: typeof transient | { code: JobErrorCode; message: string; retryable: boolean }; attempts: number; want: ReturnType<typeof afterNetworkFailure> }[] = [
    { name: 'first attempt, retryable: queued after the first delay', failure: transient, attempts: 1, want: { next: 'queued', code: 'upstream_5xx', message: 'busy', runAt: NOW + 1_000 } },
    { name: 'second attempt: the second delay', failure: transient, attempts: 2, want: { next: 'queued', code: 'upstream_5xx', message: 'busy', runAt: NOW + 5_000 } },
    { name: 'the last retry (attempts = number of delays): the last delay', failure: transient, attempts: 3, want: { next: 'queued', code: 'upstream_5xx', message: 'busy', runAt: NOW + 30_000 } },
    { name: 'past the last retry: failed and refunded', failure: transient, attempts: 4, want: failed(transient) },
    {
      name: 'not retryable on the first attempt: failed at once',
      failure: { code: 'media_unsupported_format', message: 'format', retryable: false },
      attempts: 1,
      want: { next: 'failed', code: 'media_unsupported_format', message: 'format', refund: true, expireConnection: false, lateCheck: null },
    },
    {
      name: 'token_expired: failed, expires the connection',
      failure: { code: 'token_expired', message: 'expired', retryable: false },
      attempts: 1,
      want: { next: 'failed', code: 'token_expired', message: 'expired', refund: true, expireConnection: true, lateCheck: null },
    },
  ];

  it.each(table)('$name', ({ failure, attempts, want }) => {
    expect(afterNetworkFailure(failure, attempts, NOW, S)).toEqual(want);
  });

  it('a wait the network announced (a rate limit\'s reset) delays the retry past the schedule, up to an hour; a shorter one changes nothing', () => {
    const limited = { ...transient, retryAfterMs: 600_000 };
    expect(afterNetworkFailure(limited, 1, NOW, S)).toEqual({ next: 'queued', code: 'upstream_5xx', message: 'busy', runAt: NOW + 600_000 });
    expect(afterNetworkFailure({ ...transient, retryAfterMs: 200 }, 2, NOW, S)).toMatchObject({ runAt: NOW + 5_000 });
    expect(afterNetworkFailure({ ...transient, retryAfterMs: 86_400_000 }, 1, NOW, S)).toMatchObject({ runAt: NOW + MAX_ANNOUNCED_WAIT_MS });
    // Past the last retry, waiting longer does not help: the job fails as before.
    expect(afterNetworkFailure(limited, 4, NOW, S)).toEqual(failed(transient));
    expect(MAX_ANNOUNCED_WAIT_MS).toBe(3_600_000);
  });

  it('with no retries configured, a retryable failure fails on the first attempt', () => {
    expect(afterNetworkFailure(transient, 1, NOW, { ...S, retryDelaysMs: [] })).toMatchObject({ next: 'failed', code: 'upstream_5xx' });
  });
});

describe('job policy: before submitting', () => {
  const table: { name: string; conn: { status: string; mode: string } | null; creds: boolean; want: string | null }[] = [
    { name: 'active sandbox', conn: { status: 'active', mode: 'sandbox' }, creds: false, want: null },
    { name: 'active live with credentials', conn: { status: 'active', mode: 'live' }, creds: true, want: null },
    { name: 'active live whose refresh failed (no credentials)', conn: { status: 'active', mode: 'live' }, creds: false, want: 'The connection was deactivated. Reconnect it to publish.' },
    { name: 'expired', conn: { status: 'expired', mode: 'live' }, creds: true, want: JOB_ERROR_MESSAGES.token_expired },
    { name: 'deactivated', conn: { status: 'inactive', mode: 'sandbox' }, creds: false, want: 'The connection was deactivated. Reconnect it to publish.' },
    { name: 'gone', conn: null, creds: false, want: 'The connection was deactivated. Reconnect it to publish.' },
  ];

  it.each(table)('$name', ({ conn, creds, want }) => {
    const decision = beforeSubmit(conn, creds);
    if (want === null) expect(decision).toBeNull();
    else expect(decision).toEqual({ next: 'failed', code: 'token_expired', message: want, refund: true, expireConnection: true, lateCheck: null });
  });

  it('a missing content or connection fails upstream_unknown, refunded', () => {
    expect(nothingToPublish()).toEqual({ next: 'failed', code: 'upstream_unknown', message: JOB_ERROR_MESSAGES.upstream_unknown, refund: true, expireConnection: false, lateCheck: null });
  });

  it('a media address without a size: over the cap is media_too_large (with the cap in MB), unreachable is upstream_unknown', () => {
    expect(unknownSizeMediaRefused(true)).toMatchObject({ code: 'media_too_large', refund: true, expireConnection: false });
    expect(unknownSizeMediaRefused(true).message).toContain('100 MB cap');
    expect(unknownSizeMediaRefused(false)).toMatchObject({ code: 'upstream_unknown', message: 'The media address could not be fetched.', refund: true });
  });
});

describe('job policy: publishing', () => {
  it('a submitted container has until now + publishDeadlineMs', () => {
    expect(publishDeadline(NOW, S)).toBe(NOW + 7_200_000);
  });

  const deadline = NOW + 100;
  const table: { name: string; deadline: number | null; now: number; want: ReturnType<typeof afterPublishPending> }[] = [
    { name: 'before the deadline: come back after retryAfterMs', deadline, now: deadline - 1, want: { next: 'publishing', runAt: deadline - 1 + 2_000 } },
    {
      name: 'deadline exactly reached: failed upstream_5xx',
      deadline,
      now: deadline,
      want: { next: 'failed', code: 'upstream_5xx', message: 'The network was still processing the media when the publishing deadline passed.', refund: true, expireConnection: false, lateCheck: null },
    },
    { name: 'past the deadline: failed', deadline, now: deadline + 1, want: failed({ code: 'upstream_5xx', message: 'The network was still processing the media when the publishing deadline passed.' }) },
    { name: 'no deadline recorded: keep waiting', deadline: null, now: NOW, want: { next: 'publishing', runAt: NOW + 2_000 } },
  ];

  it.each(table)('pending: $name', ({ deadline: d, now, want }) => {
    expect(afterPublishPending(d, 2_000, now)).toEqual(want);
  });

  it('a published post is confirmed from now + confirmIntervalMs until now + confirmDeadlineMs', () => {
    expect(afterPublished(NOW, S)).toEqual({ next: 'confirming', deadline: NOW + 300_000, runAt: NOW + 10_000 });
  });
});

describe('job policy: confirmation (spec 7.4) and late checks (spec 3.2)', () => {
  const confirming = (over: Partial<ConfirmingJob> = {}): ConfirmingJob => ({ late: false, misses: 0, deadline: NOW + 1_000, lateCheckUntil: null, ...over });
  const late = { runAt: NOW + 600_000, until: NOW + 86_400_000 };
  const lateFailure = (code: JobErrorCode, misses: number) => ({
    next: 'failed' as const,
    code,
    message: JOB_ERROR_MESSAGES[code],
    refund: false,
    expireConnection: false,
    lateCheck: late,
    misses,
  });
  const found: ConfirmationAnswer = { state: 'found', url: 'https://x/p/1' };
  const notFound: ConfirmationAnswer = { state: 'not_found' };
  const pending: ConfirmationAnswer = { state: 'pending' };
  const unavailable: ConfirmationAnswer = { state: 'unavailable' };

  const table: { name: string; job: ConfirmingJob; answer: ConfirmationAnswer; now?: number; want: ReturnType<typeof afterConfirm> }[] = [
    { name: 'found: published', job: confirming(), answer: found, want: { next: 'published', url: 'https://x/p/1', corrects: false, notice: null } },
    { name: 'found on a late check: published, correcting the failure', job: confirming({ late: true, lateCheckUntil: NOW + 1 }), answer: found, want: { next: 'published', url: 'https://x/p/1', corrects: true, notice: null } },
    { name: 'pending before the deadline: check again', job: confirming(), answer: pending, want: { next: 'confirming', misses: 0, runAt: NOW + 10_000 } },
    { name: 'first not_found: one miss, check again', job: confirming(), answer: notFound, want: { next: 'confirming', misses: 1, runAt: NOW + 10_000 } },
    { name: `not_found after ${CONFIRMATION_MISSES - 1} miss: post_inexistente`, job: confirming({ misses: CONFIRMATION_MISSES - 1 }), answer: notFound, want: lateFailure('post_inexistente', CONFIRMATION_MISSES) },
    { name: 'a miss, then pending: the count resets', job: confirming({ misses: 1 }), answer: pending, want: { next: 'confirming', misses: 0, runAt: NOW + 10_000 } },
    { name: 'a miss, then unavailable: the count resets', job: confirming({ misses: 1 }), answer: unavailable, want: { next: 'confirming', misses: 0, runAt: NOW + 10_000 } },
    { name: 'pending one ms before the deadline: check again', job: confirming({ deadline: NOW + 1 }), answer: pending, want: { next: 'confirming', misses: 0, runAt: NOW + 10_000 } },
    { name: 'pending at the deadline exactly: confirmacao_esgotada', job: confirming({ deadline: NOW }), answer: pending, want: lateFailure('confirmacao_esgotada', 0) },
    { name: 'not_found (first miss) at the deadline: confirmacao_esgotada', job: confirming({ deadline: NOW }), answer: notFound, want: lateFailure('confirmacao_esgotada', 1) },
    { name: 'unavailable at the deadline: confirmacao_indisponivel', job: confirming({ deadline: NOW - 5 }), answer: unavailable, want: lateFailure('confirmacao_indisponivel', 0) },
    { name: 'second miss at the deadline: post_inexistente wins', job: confirming({ deadline: NOW, misses: 1 }), answer: notFound, want: lateFailure('post_inexistente', 2) },
    { name: 'no deadline: never times out', job: confirming({ deadline: null }), answer: pending, want: { next: 'confirming', misses: 0, runAt: NOW + 10_000 } },
    { name: 'late check inside the window: stays failed, keeps checking', job: confirming({ late: true, lateCheckUntil: NOW + 1 }), answer: notFound, want: { next: 'still_failed', keepChecking: true, runAt: NOW + 600_000 } },
    { name: 'late check at the end of the window exactly: stops', job: confirming({ late: true, lateCheckUntil: NOW }), answer: unavailable, want: { next: 'still_failed', keepChecking: false, runAt: NOW + 600_000 } },
    { name: 'late check with no window recorded: stops', job: confirming({ late: true, lateCheckUntil: null }), answer: pending, want: { next: 'still_failed', keepChecking: false, runAt: NOW + 600_000 } },
  ];

  it.each(table)('$name', ({ job, answer, now, want }) => {
    expect(afterConfirm(job, answer, now ?? NOW, S)).toEqual(want);
  });
});
