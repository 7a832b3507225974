import type { Kysely } from 'kysely';
import { type ContentRow, takeDueContents, transitionContent } from '../../../db/repositories/contents.repo.js';
import { failScheduledJobs, type JobRow, startScheduledJobs } from '../../../db/repositories/jobs.repo.js';
import type { Database } from '../../../db/schema.js';
import { CHARGE_ERROR_CODES, JOB_ERROR_MESSAGES, type JobErrorCode } from '../../vocabulary/job-errors.js';
import type { Clock } from '../clock.js';
import { chargeStart } from '../contents/charging.js';
import { ServiceError } from '../errors.js';
import { refreshContentOutcome } from '../jobs/outcome.js';
import type { MetersService } from '../meters/meters.service.js';
import type { WalletService } from '../wallet/wallet.service.js';
import { type Modo, modoSchema } from '../wallet/wallet.schema.js';

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
export function createScheduledStart(deps: { db: Kysely<Database>; clock: Clock; wallet: WalletService; meters: MetersService; graceMs: number }) {
  const { db, clock, wallet, meters, graceMs } = deps;

  // Only the modo is needed here: the stored fields were checked whole when they were written.
  const modoOf = (row: ContentRow): Modo => (row.input === null ? 'plano' : (modoSchema.optional().parse((JSON.parse(row.input) as { modo?: unknown }).modo) ?? 'plano'));

  /** A charge refusal the one-by-one path turns into failed jobs (or, for a batch race, a retry). */
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
  async function failMissed(tx: Kysely<Database>, row: ContentRow, now: number): Promise<StartOutcome> {
    await failScheduledJobs(tx, row.id, 'schedule_missed', JOB_ERROR_MESSAGES.schedule_missed, now);
    await refreshContentOutcome(tx, row.id, now);
    return { kind: 'missed', contentId: row.id, publishAt: row.publishAt ?? now };
  }

  /** Starts (or reports missed) the earliest due content, if any: the precise path, one transaction per content. */
  async function startNextDue(dialect: 'sqlite' | 'postgres'): Promise<StartOutcome> {
    const now = clock.now();
    let taken: { id: string; workspaceId: string } | null = null;
    try {
      return await db.transaction().execute(async (tx): Promise<StartOutcome> => {
        const [row] = await takeDueContents(tx, dialect, now, 1);
        if (!row) return { kind: 'idle' };
        taken = { id: row.id, workspaceId: row.workspaceId };
        const publishAt = row.publishAt ?? now;
        if (publishAt < now - graceMs) return failMissed(tx, row, now);
        const jobs = await startScheduledJobs(tx, row.id, now);
        await chargeStart(tx, wallet, { workspaceId: row.workspaceId, modo: modoOf(row), contentId: row.id, jobs });
        return { kind: 'started', contentId: row.id, publishAt, jobs: jobs.length };
      });
    } catch (err) {
      const content = taken as { id: string; workspaceId: string } | null;
      if (!isChargeRefusal(err) || content === null) throw err;
      if (err.code === 'lote_vencido') return { kind: 'retry', contentId: content.id };
      await failUnpaid(content.id, content.workspaceId, err);
      return { kind: 'unpaid', contentId: content.id, code: err.code };
    }
  }

  /**
   * Starts up to `limit` due contents in one transaction: one statement takes them, one queues all their jobs,
   * and the meters of each workspace are charged once for all its contents in modo plano (the sum of what each
   * would have taken, in the same cycle), so a burst of contents due at one instant costs a few statements per
   * batch instead of several per content, and processes do not queue one content at a time on a workspace's meter
   * rows. Contents in a credit modo are charged one by one, as at creation. If any charge is refused the whole
   * batch rolls back and its contents go through `startNextDue`, which fails exactly the ones that cannot be paid.
   */
  async function startDue(dialect: 'sqlite' | 'postgres', limit: number): Promise<StartOutcome[]> {
    const now = clock.now();
    try {
      return await db.transaction().execute(async (tx): Promise<StartOutcome[]> => {
        const rows = await takeDueContents(tx, dialect, now, limit);
        if (rows.length === 0) return [];
        const outcomes: StartOutcome[] = [];
        const starting: ContentRow[] = [];
        for (const row of rows) {
          const publishAt = row.publishAt ?? now;
          if (publishAt >= now - graceMs) starting.push(row);
          else outcomes.push(await failMissed(tx, row, now));
        }
        const jobs = await startScheduledJobs(tx, starting.map((r) => r.id), now);
        const jobsOf = new Map<string, JobRow[]>();
        for (const job of jobs) jobsOf.set(job.contentId, [...(jobsOf.get(job.contentId) ?? []), job]);
        // Workspaces in one order in every process, so two batches never wait on each other's meter rows.
        const byWorkspace = new Map<string, ContentRow[]>();
        for (const row of starting) byWorkspace.set(row.workspaceId, [...(byWorkspace.get(row.workspaceId) ?? []), row]);
        for (const workspaceId of [...byWorkspace.keys()].sort()) {
          const plano: ContentRow[] = [];
          for (const row of byWorkspace.get(workspaceId)!) {
            const modo = modoOf(row);
            if (modo === 'plano') plano.push(row);
            else await chargeStart(tx, wallet, { workspaceId, modo, contentId: row.id, jobs: jobsOf.get(row.id) ?? [] });
          }
          const publications = plano.reduce((n, row) => n + (jobsOf.get(row.id)?.length ?? 0), 0);
          await meters.consume(tx, workspaceId, [
            { meter: 'criacao_de_conteudos', amount: plano.length },
            { meter: 'publicacoes', amount: publications },
          ]);
        }
        for (const row of starting) outcomes.push({ kind: 'started', contentId: row.id, publishAt: row.publishAt ?? now, jobs: jobsOf.get(row.id)?.length ?? 0 });
        return outcomes;
      });
    } catch (err) {
      if (!isChargeRefusal(err)) throw err;
      const outcomes: StartOutcome[] = [];
      for (let i = 0; i < limit; i += 1) {
        const outcome = await startNextDue(dialect);
        if (outcome.kind === 'idle') break;
        outcomes.push(outcome);
        if (outcome.kind === 'retry') break;
      }
      return outcomes;
    }
  }

  return { startNextDue, startDue };
}
