import type { Kysely } from 'kysely';
import { renewLease } from '../../db/repositories/jobs.repo.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../observability/logger.js';

/**
 * Keeps a running job's lease (ARCHITECTURE decision 5): renews it every `renewEveryMs`, each time checked against
 * the run's token, so a run that lost the job stops renewing. A run longer than `maxRunMs` is presumed stuck and
 * stops renewing, so its job is freed for another worker within one lease. Returns the function that stops it.
 */
export function keepJobLease(
  deps: { db: Kysely<Database>; clock: Clock; logger: Logger; leaseMs: number; renewEveryMs: number; maxRunMs: number },
  jobId: string,
  lease: string,
): () => void {
  const { db, clock, logger } = deps;
  const startedAt = clock.now();
  let renewing = false;
  const timer = setInterval(() => {
    if (renewing) return;
    if (clock.now() - startedAt > deps.maxRunMs) {
      logger.warn({ job_id: jobId }, 'job run outlived the publishing deadline; its lease is no longer renewed');
      clearInterval(timer);
      return;
    }
    renewing = true;
    renewLease(db, jobId, lease, clock.now() + deps.leaseMs)
      .then((ok) => {
        if (!ok) clearInterval(timer);
      })
      .catch((err: unknown) => logger.warn({ err, job_id: jobId }, 'renewing a job lease failed; retried at the next renewal'))
      .finally(() => {
        renewing = false;
      });
  }, deps.renewEveryMs);
  timer.unref();
  return () => clearInterval(timer);
}
