import type { Kysely } from 'kysely';
import { type ContentRow, lockContent, updateContentStatus } from '../../../db/repositories/contents.repo.js';
import { type JobRow, listJobsForContent, listJobsForContents } from '../../../db/repositories/jobs.repo.js';
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
  if (content) await refreshLockedContentOutcome(tx, content, now);
}

/** `refreshContentOutcome` for a content whose row this transaction has just locked (`content` as locked). */
export async function refreshLockedContentOutcome(tx: Kysely<Database>, content: ContentRow, now: number): Promise<void> {
  await applyOutcome(tx, content, await listJobsForContent(tx, content.id), now);
}

/** `refreshLockedContentOutcome` for several locked contents, their jobs read in one statement. */
export async function refreshLockedContentsOutcomes(tx: Kysely<Database>, contents: readonly ContentRow[], now: number): Promise<void> {
  if (contents.length === 0) return;
  const jobs = await listJobsForContents(tx, contents.map((c) => c.id));
  for (const content of contents) await applyOutcome(tx, content, jobs.filter((j) => j.contentId === content.id), now);
}

/** Writes the outcome `jobs` (all of the content's, read after its lock) give a locked content, with its event. */
async function applyOutcome(tx: Kysely<Database>, content: ContentRow, jobs: JobRow[], now: number): Promise<void> {
  const contentId = content.id;
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
