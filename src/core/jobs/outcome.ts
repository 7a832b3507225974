import type { Kysely } from 'kysely';
import { lockContent, markContentPublishing, updateContentStatus } from '../../../db/repositories/contents.repo.js';
import { type JobUpdate, listJobsForContent, updateJobUnderLease } from '../../../db/repositories/jobs.repo.js';
import type { Database } from '../../../db/schema.js';
import { recordContentEvent } from '../events/events.js';

const FINAL_CONTENT = new Set(['published', 'partial', 'failed']);

/** Spec 3.2: published (all), partial (some), failed (none); null while a job is not final. */
export function contentOutcome(jobStatuses: string[]): 'published' | 'partial' | 'failed' | null {
  if (jobStatuses.some((s) => s !== 'published' && s !== 'failed')) return null;
  const published = jobStatuses.filter((s) => s === 'published').length;
  if (published === jobStatuses.length) return 'published';
  return published === 0 ? 'failed' : 'partial';
}

/**
 * Recomputes a content's outcome after one of its jobs changed, inside that change's transaction. When the
 * outcome changes, the content is updated and the event recorded; a change from an earlier final outcome is a
 * late correction (`corrected: true`, `previous_status`).
 */
export async function refreshContentOutcome(tx: Kysely<Database>, contentId: string, now: number): Promise<void> {
  const content = await lockContent(tx, contentId);
  if (!content) return;
  // Read after the lock: jobs finishing at once see each other's commits, so one of them records the outcome.
  const jobs = await listJobsForContent(tx, contentId);
  const outcome = contentOutcome(jobs.map((j) => j.status));
  if (outcome === null) {
    if (content.status !== 'publishing') await updateContentStatus(tx, contentId, 'publishing', now, null);
    return;
  }
  if (outcome === content.status) return;
  const previous = FINAL_CONTENT.has(content.status) ? content.status : null;
  await updateContentStatus(tx, contentId, outcome, now, now);
  await recordContentEvent(tx, { workspaceId: content.workspaceId, contentId, outcome, jobs, previousStatus: previous, now });
}

/** One step of a job: its write under the run's lease. */
export interface JobStepWrite {
  id: string;
  contentId: string;
  lease: string;
  changes: JobUpdate;
}

/**
 * Writes a job step under its lease, with what it means for the job's content, inside the caller's transaction:
 * `final`, the content's outcome is recomputed from all its jobs; `unfinished`, the job is not final, so the
 * content can only be publishing and is set back to it unless it already is (one conditional update instead of
 * the lock and the reads). The job's row is written first, then the content's, in the order every writer of a
 * job takes them. A lost lease writes nothing, the content included. Returns whether the job was written.
 */
export async function writeJobStep(tx: Kysely<Database>, step: JobStepWrite, content: 'final' | 'unfinished', now: number): Promise<boolean> {
  if (!(await updateJobUnderLease(tx, step.id, step.lease, step.changes))) return false;
  if (content === 'final') await refreshContentOutcome(tx, step.contentId, now);
  else await markContentPublishing(tx, step.contentId, now);
  return true;
}
