import type { ContentRow } from '../../../db/repositories/contents.repo.js';
import type { JobRow } from '../../../db/repositories/jobs.repo.js';
import { toIso } from '../clock.js';
import { CONNECTION_STATUSES, type ConnectionStatus } from '../connections/connections.schema.js';
import { parseStoredRequest } from '../jobs/stored-request.js';
import type { JobErrorCode } from '../../vocabulary/job-errors.js';
import type { Content, ContentFields, ContentStatus, Job, JobStatus, SkippedJob } from './contents.schema.js';

/**
 * Why a retry left a failed job alone: its connection cannot publish (checked first, since even `force` would not
 * make it publish), or its post may already be live.
 */
export function skippedJob(j: JobRow, connectionStatus: string): SkippedJob {
  const base = { job_id: j.id, platform_slug: j.platformSlug as Job['platform_slug'], connection_id: j.connectionId };
  const status = (CONNECTION_STATUSES as readonly string[]).includes(connectionStatus) ? (connectionStatus as ConnectionStatus) : 'inactive';
  if (status !== 'active') {
    return {
      ...base,
      connection_status: status,
      reason: 'connection_not_active',
      message:
        status === 'expired'
          ? `The connection ${j.connectionId} has expired: reconnect it, then retry.`
          : `The connection ${j.connectionId} is inactive: it can no longer publish.`,
    };
  }
  return {
    ...base,
    connection_status: status,
    reason: 'may_be_live',
    message: 'The job failed confirmation and its post may already be live: check the network, then retry with force if it is not there.',
  };
}

function renderJob(j: JobRow): Job {
  return {
    job_id: j.id,
    platform_slug: j.platformSlug as Job['platform_slug'],
    connection_id: j.connectionId,
    status: j.status as JobStatus,
    error_code: j.errorCode as JobErrorCode | null,
    error_message: j.errorMessage,
    external_post_url: j.externalPostUrl,
    notice: j.notice,
    previous_status: j.previousStatus,
    attempts: j.attempts,
    created_at: toIso(j.createdAt),
    updated_at: toIso(j.updatedAt),
    published_at: j.publishedAt === null ? null : toIso(j.publishedAt),
  };
}

export function renderWhen(row: ContentRow) {
  return {
    publish_at: row.publishAt === null ? null : toIso(row.publishAt),
    time_zone: row.timeZone,
    local_publish_at: row.localPublishAt,
    queued: row.queueSlot !== null,
  };
}

type Overrides = NonNullable<ContentFields['overrides']>;

/**
 * The per-platform texts a content was given (its stored fields' `overrides`); none for a content stored before
 * its fields were kept with it.
 */
function overridesOf(row: ContentRow): Overrides | null {
  if (row.input === null) return null;
  const fields = JSON.parse(row.input) as { overrides?: Overrides };
  return fields.overrides === undefined || Object.keys(fields.overrides).length === 0 ? null : fields.overrides;
}

/** `now` tells whether a content pending approval has let its time pass (`approval_overdue`). */
export function renderContent(row: ContentRow, jobs: JobRow[], now: number): Content {
  const request = parseStoredRequest(row.request);
  const thread = request.targets.find((t) => t.thread !== null)?.thread ?? null;
  const overrides = overridesOf(row);
  return {
    content_id: row.id,
    brand_id: row.brandId,
    content_type: row.contentType as Content['content_type'],
    status: row.status as ContentStatus,
    target_platforms: request.targets.map((t) => t.platform as Content['target_platforms'][number]),
    ...renderWhen(row),
    text: request.text,
    title: request.title,
    thread,
    media: request.media.map((m) => (m.mediaId !== null ? { media_id: m.mediaId } : { url: m.url ?? '' })),
    overrides,
    // What each platform publishes is the stored request's, so what is shown is what the publisher sends.
    targets: request.targets.map((t) => {
      const own = overrides?.[t.platform as keyof Overrides];
      return {
        platform_slug: t.platform as Content['target_platforms'][number],
        text: t.text,
        title: t.title,
        own_text: own?.text !== undefined,
        own_title: own?.title !== undefined,
      };
    }),
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
    completed_at: row.completedAt === null ? null : toIso(row.completedAt),
    approval_overdue: row.status === 'pending_approval' && row.publishAt !== null && row.publishAt <= now,
    jobs: jobs.map(renderJob),
  };
}
