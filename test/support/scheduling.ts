import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/**
 * What the sandbox network saw of scheduled contents, read straight from its tables: the proof of "exactly once,
 * never early". A job is handed to its network when the sandbox adapter creates its container (the submit), and
 * posted when the container is published.
 */
export interface JobTrail {
  jobId: string;
  contentId: string;
  status: string;
  errorCode: string | null;
  /** The content's publication instant (epoch ms). */
  publishAt: number;
  /** Epoch ms of each container the sandbox created for the job (a retry may make a second one). */
  submits: number[];
  /** Sandbox posts made for the job: exactly one for a published job, none for a canceled or missed one. */
  posts: number;
  /** When the job last changed (epoch ms). */
  updatedAt: number;
}

/** The trail of every job of `contentIds` (all of the database's contents when omitted). */
export async function jobTrails(db: Kysely<Database>, contentIds?: readonly string[]): Promise<JobTrail[]> {
  if (contentIds !== undefined && contentIds.length === 0) return [];
  let query = db
    .selectFrom('jobs')
    .innerJoin('contents', 'contents.id', 'jobs.content_id')
    .select(['jobs.id as job_id', 'jobs.content_id', 'jobs.status', 'jobs.error_code', 'jobs.updated_at', 'contents.publish_at']);
  if (contentIds !== undefined) query = query.where('jobs.content_id', 'in', [...contentIds]);
  const jobs = await query.execute();
  const containers = await db.selectFrom('sandbox_containers').select(['job_id', 'created_at']).execute();
  const posts = await db.selectFrom('sandbox_posts').select('job_id').execute();
  const submits = new Map<string, number[]>();
  for (const c of containers) submits.set(c.job_id, [...(submits.get(c.job_id) ?? []), Number(c.created_at)]);
  const postCount = new Map<string, number>();
  for (const p of posts) postCount.set(p.job_id, (postCount.get(p.job_id) ?? 0) + 1);
  return jobs.map((j) => ({
    jobId: j.job_id,
    contentId: j.content_id,
    status: j.status,
    errorCode: j.error_code,
    publishAt: Number(j.publish_at),
    submits: (submits.get(j.job_id) ?? []).sort((a, b) => a - b),
    posts: postCount.get(j.job_id) ?? 0,
    updatedAt: Number(j.updated_at),
  }));
}

/** Jobs handed to their network before their content's publish_at: must always be empty. */
export function earlySubmits(trails: readonly JobTrail[]): JobTrail[] {
  return trails.filter((t) => t.submits.some((at) => at < t.publishAt));
}

/** Jobs posted more than once: must always be empty. */
export function postedTwice(trails: readonly JobTrail[]): JobTrail[] {
  return trails.filter((t) => t.posts > 1);
}

/** A meter's counter in one cycle (`YYYY-MM`) or `stock`, read from the database (0 when never counted). */
export async function meterUsed(db: Kysely<Database>, workspaceId: string, meter: string, period: string): Promise<number> {
  const row = await db
    .selectFrom('meter_counters')
    .select('used')
    .where('workspace_id', '=', workspaceId)
    .where('meter', '=', meter)
    .where('period', '=', period)
    .executeTakeFirst();
  return Number(row?.used ?? 0);
}

/** Content events recorded for a content, oldest first, with their parsed payload. */
export async function contentEvents(db: Kysely<Database>, contentId: string): Promise<{ type: string; jobs: { job_id: string; status: string; error_code: string | null }[] }[]> {
  const rows = await db.selectFrom('events').select(['type', 'payload', 'created_at']).where('subject_id', '=', contentId).orderBy('created_at', 'asc').execute();
  return rows.map((r) => {
    const payload = JSON.parse(r.payload) as { data: { jobs: { job_id: string; status: string; error_code: string | null }[] } };
    return { type: r.type, jobs: payload.data.jobs };
  });
}
