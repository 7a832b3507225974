import type { Kysely } from 'kysely';
import { type ConnectionRow, findConnectionById } from '../../db/repositories/connections.repo.js';
import type { ContentRow } from '../../db/repositories/contents.repo.js';
import { type JobRow, updateJobUnderLease } from '../../db/repositories/jobs.repo.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../core/clock.js';
import { parseStoredRequest } from '../core/jobs/stored-request.js';
import type { LiveCredentials, PublishRequest } from '../networks/adapter.js';
import type { ContentType, PlatformSlug } from '../vocabulary/platforms.js';

export interface JobRequestDeps {
  db: Kysely<Database>;
  clock: Clock;
  leaseMs: number;
  /** The account and token a live connection publishes with (refreshed first when it is about to expire). */
  credentialsFor(connectionId: string): Promise<LiveCredentials | null>;
  /** A signed public address of an upload, for networks that download media themselves. */
  publicMediaUrl(mediaId: string): string;
}

/** A run's request, and its connection as read for it (after its credentials were fetched). */
export interface JobRequest {
  request: PublishRequest;
  connection: ConnectionRow;
}

/**
 * What the network adapter is given for one run of `job` under `lease`: its target's text from the content's
 * stored request (`content`, read when the job was claimed: a publishing content's request no longer changes),
 * its media, the connection and its credentials (live and active only), and the progress an earlier run saved.
 * `claimed` is the connection as read with the claim, for a run that starts right after it; otherwise it is read
 * now, since it may have been deactivated or expired while the job waited. Null when the content or the
 * connection is gone.
 */
export async function buildJobRequest(
  deps: JobRequestDeps,
  job: JobRow,
  content: ContentRow | undefined,
  lease: string,
  claimed: ConnectionRow | null = null,
): Promise<JobRequest | null> {
  const { db, clock } = deps;
  if (!content) return null;
  const found = claimed ?? (await findConnectionById(db, job.connectionId));
  if (!found) return null;
  let conn = found;
  const credentials = conn.mode === 'live' && conn.status === 'active' ? await deps.credentialsFor(conn.id) : null;
  // No credentials for an active live connection: getting them may have just expired it (a refused refresh).
  if (conn.mode === 'live' && conn.status === 'active' && credentials === null) conn = (await findConnectionById(db, job.connectionId)) ?? conn;
  const stored = parseStoredRequest(content.request);
  const target = stored.targets.find((t) => t.platform === job.platformSlug);
  const request: PublishRequest = {
    jobId: job.id,
    attempt: job.attempts,
    platform: job.platformSlug as PlatformSlug,
    connection: { id: conn.id, mode: conn.mode as 'sandbox' | 'live', name: conn.name },
    credentials,
    contentType: content.contentType as ContentType,
    text: target?.text ?? null,
    title: target?.title ?? null,
    thread: target?.thread ?? null,
    // An upload goes as its file, for networks that take the bytes, and as a signed address, for the others.
    media: stored.media.map((m) => ({
      url: m.url ?? `file://${m.storagePath ?? ''}`,
      publicUrl: m.url === null && m.mediaId !== null ? deps.publicMediaUrl(m.mediaId) : null,
      sizeBytes: m.sizeBytes,
      contentType: m.contentType,
    })),
    sandboxOutcome: job.sandboxOutcome,
    tiktok: target?.tiktok ?? null,
    progress: job.networkState,
    // Saving progress also renews the lease: long uploads keep their job as long as they make progress.
    async saveProgress(progress) {
      const saved = await updateJobUnderLease(db, job.id, lease, { network_state: JSON.stringify(progress), locked_until: clock.now() + deps.leaseMs, updated_at: clock.now() });
      // The run's next step (publish after submit) starts from what was saved, as a run taking over would.
      if (saved) request.progress = progress;
      return saved;
    },
  };
  return { request, connection: conn };
}
