import type { Kysely } from 'kysely';
import { type ContentRow, takeDueContents, transitionContent } from '../../../db/repositories/contents.repo.js';
import { failScheduledJobs, startScheduledJobs } from '../../../db/repositories/jobs.repo.js';
import type { Database } from '../../../db/schema.js';
import { CHARGE_ERROR_CODES, JOB_ERROR_MESSAGES, type JobErrorCode } from '../../vocabulary/job-errors.js';
import type { Clock } from '../clock.js';
import { chargeStart, chargeStarts, type StartCharge } from '../contents/charging.js';
import { ServiceError } from '../errors.js';
import { refreshContentOutcome } from '../jobs/outcome.js';
import type { WalletService } from '../wallet/wallet.service.js';
import { PAYMENT_MODE, type PaymentMode, paymentModeSchema } from '../wallet/wallet.schema.js';

/** How long after its time a content due while the service was down still publishes (SCHEDULE_GRACE). */
export const DEFAULT_SCHEDULE_GRACE_MS = 3_600_000;

/** What starting the next due content did. */
export type StartOutcome =
  | { kind: 'idle' }
  | { kind: 'started'; contentId: string; publishAt: number; jobs: number }
  | { kind: 'missed'; contentId: string; publishAt: number }
  | { kind: 'unpaid'; contentId: string; code: string }
  /** The charge hit a transient race (a credit batch expired while chosen): nothing changed; it is tried again. */
  | { kind: 'retry'; contentId: string };

/** Starting several due contents in one transaction: what each did, or `refused` when a charge was refused (nothing changed). */
export type BatchOutcome = { kind: 'started'; outcomes: Exclude<StartOutcome, { kind: 'idle' | 'unpaid' | 'retry' }>[] } | { kind: 'refused' };

export type ScheduledStart = ReturnType<typeof createScheduledStart>;

/**
 * Starts scheduled contents when they are due: the scheduler's one step, run by every worker process. A content is
 * taken by one conditional statement (see `takeDueContents`), so with several processes each due content starts
 * once, never before its time, and never after a cancel or edit that committed first. In the same transaction:
 * - due longer ago than the grace (the service was down): its jobs fail with `schedule_missed` and
 *   `content.failed` is recorded; nothing is charged;
 * - otherwise it is charged as a content publishing now (the rule: at publishing, in that cycle) and its jobs are
 *   queued for the publisher.
 * A charge the plan or the wallet refuses rolls that transaction back; a second one fails the jobs with the
 * refusal's code (spec 7.2) and records `content.failed`, so an unpaid content is never silently dropped.
 */
export function createScheduledStart(deps: { db: Kysely<Database>; clock: Clock; wallet: WalletService; graceMs: number }) {
  const { db, clock, wallet, graceMs } = deps;

  // Only the payment mode (the body's `modo`) is needed here: the stored fields were checked whole when written.
  const paymentModeOf = (row: ContentRow): PaymentMode => {
    if (row.input === null) return PAYMENT_MODE.plan;
    return paymentModeSchema.optional().parse((JSON.parse(row.input) as { modo?: unknown }).modo) ?? PAYMENT_MODE.plan;
  };

  /** A charge refusal, turned into failed jobs (or, for a credit batch that expired while chosen, a retry). */
  const isChargeRefusal = (err: unknown): err is ServiceError =>
    err instanceof ServiceError && (err.code === 'lote_vencido' || (CHARGE_ERROR_CODES as readonly string[]).includes(err.code));

  async function failUnpaid(contentId: string, workspaceId: string, error: ServiceError): Promise<boolean> {
    const now = clock.now();
    const code = error.code as JobErrorCode;
    return db.transaction().execute(async (tx) => {
      // Still waiting? A cancel, an edit or another process may have moved it meanwhile; then it is theirs.
      const row = await transitionContent(tx, { workspaceId, id: contentId, from: ['scheduled'], now, set: { status: 'publishing' } });
      if (!row) return false;
      await failScheduledJobs(tx, contentId, code, `${JOB_ERROR_MESSAGES[code]} ${error.message}`, now);
      await refreshContentOutcome(tx, contentId, now);
      return true;
    });
  }

  /** A content later than the grace is not published late: its jobs fail schedule_missed and content.failed is recorded. */
  async function failMissed(tx: Kysely<Database>, row: ContentRow, now: number): Promise<Extract<StartOutcome, { kind: 'missed' }>> {
    await failScheduledJobs(tx, row.id, 'schedule_missed', JOB_ERROR_MESSAGES.schedule_missed, now);
    await refreshContentOutcome(tx, row.id, now);
    return { kind: 'missed', contentId: row.id, publishAt: row.publishAt ?? now };
  }

  /** One due content taken in `tx`: failed as missed, or its jobs queued and the content charged by `chargeStart`. */
  async function startTaken(tx: Kysely<Database>, row: ContentRow, now: number): Promise<Exclude<StartOutcome, { kind: 'idle' | 'unpaid' | 'retry' }>> {
    const publishAt = row.publishAt ?? now;
    if (publishAt < now - graceMs) return failMissed(tx, row, now);
    const jobs = await startScheduledJobs(tx, row.id, now);
    await chargeStart(tx, wallet, { workspaceId: row.workspaceId, mode: paymentModeOf(row), contentId: row.id, jobs });
    return { kind: 'started', contentId: row.id, publishAt, jobs: jobs.length };
  }

  /**
   * Starts up to `limit` due contents in one transaction, each exactly as `startNextDue` would (the same take, the
   * same `chargeStart`). At the top of the hour every content of a workspace charges the same meter rows, and one
   * transaction per content would queue each behind the previous one's commit; here a workspace's rows are locked
   * once per batch. When any charge is refused the whole batch rolls back (`refused`, nothing changed) and the
   * caller starts those contents one by one, so each refusal lands on its own content.
   */
  async function startDue(dialect: 'sqlite' | 'postgres', limit: number): Promise<BatchOutcome> {
    const now = clock.now();
    try {
      return await db.transaction().execute(async (tx): Promise<BatchOutcome> => {
        const rows = await takeDueContents(tx, dialect, now, limit);
        const outcomes: Exclude<StartOutcome, { kind: 'idle' | 'unpaid' | 'retry' }>[] = [];
        const charges: StartCharge[] = [];
        for (const row of rows) {
          const publishAt = row.publishAt ?? now;
          if (publishAt < now - graceMs) {
            outcomes.push(await failMissed(tx, row, now));
            continue;
          }
          const jobs = await startScheduledJobs(tx, row.id, now);
          charges.push({ workspaceId: row.workspaceId, mode: paymentModeOf(row), contentId: row.id, jobs });
          outcomes.push({ kind: 'started', contentId: row.id, publishAt, jobs: jobs.length });
        }
        // Charged last, so the meter rows are held only from here to the commit.
        await chargeStarts(tx, wallet, charges);
        return { kind: 'started', outcomes };
      });
    } catch (err) {
      if (isChargeRefusal(err)) return { kind: 'refused' };
      throw err;
    }
  }

  /**
   * Starts (or reports missed) the earliest due content, if any, in one transaction, charged by `chargeStart` like
   * any content that starts publishing. The scheduler runs several of these at once on PostgreSQL (the take skips
   * contents another transaction holds), so a burst is not one content at a time.
   */
  async function startNextDue(dialect: 'sqlite' | 'postgres'): Promise<StartOutcome> {
    const now = clock.now();
    let taken: { id: string; workspaceId: string } | null = null;
    try {
      return await db.transaction().execute(async (tx): Promise<StartOutcome> => {
        const [row] = await takeDueContents(tx, dialect, now, 1);
        if (!row) return { kind: 'idle' };
        taken = { id: row.id, workspaceId: row.workspaceId };
        return startTaken(tx, row, now);
      });
    } catch (err) {
      const content = taken as { id: string; workspaceId: string } | null;
      if (!isChargeRefusal(err) || content === null) throw err;
      if (err.code === 'lote_vencido') return { kind: 'retry', contentId: content.id };
      await failUnpaid(content.id, content.workspaceId, err);
      return { kind: 'unpaid', contentId: content.id, code: err.code };
    }
  }

  return { startDue, startNextDue };
}
