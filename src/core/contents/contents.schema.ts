import { z } from 'zod';
import { CONTENT_TYPES, PLATFORM_SLUGS, TIKTOK_PRIVACY_LEVELS } from '../../vocabulary/platforms.js';
import { CONNECTION_STATUSES, platformSlugSchema } from '../connections/connections.schema.js';
import { paymentModeSchema } from '../wallet/wallet.schema.js';
import { JOB_ERROR_CODES } from '../../vocabulary/job-errors.js';
import { CONTENT_STATUSES, JOB_STATUSES } from '../../vocabulary/content-statuses.js';
import { SANDBOX_OUTCOMES, SANDBOX_OUTCOME_DESCRIPTIONS } from '../../vocabulary/sandbox-outcomes.js';
import { MEDIA_ITEMS_MAX } from './media-count.js';

/** A content's id (a UUID), as creating or listing contents returned it; a path parameter or a tool argument. */
export const contentIdSchema = z.string().describe('Content id (UUID), as returned when the content was created or listed.');

/** Spec 2.6, 2.7, 4.3. */

export { CONTENT_STATUSES, type ContentStatus, JOB_STATUSES, type JobStatus } from '../../vocabulary/content-statuses.js';

export const mediaItemSchema = z
  .union([
    z.strictObject({ url: z.url({ protocol: /^https?$/ }).max(2048).describe('Public address of the file; its size is checked at creation.') }),
    z.strictObject({ media_id: z.string().describe('An upload made with POST /api/v1/workspaces/{wsId}/media.') }),
  ])
  .meta({ id: 'MediaItem', description: 'A media file, by public URL or by uploaded media id.' });
export type MediaItem = z.infer<typeof mediaItemSchema>;

const overrideSchema = z.strictObject({
  text: z.string().max(100_000).optional().describe('Replaces `text` on this platform.'),
  title: z.string().max(1000).optional().describe('Replaces `title` on this platform.'),
});

/**
 * TikTok's Direct Post guidelines: the creator chooses who can see the post and whether others may comment, duet
 * and stitch, with nothing chosen for them by default. Checked per target in the content plan.
 */
export const tiktokSettingsSchema = z
  .strictObject({
    privacy_level: z
      .enum(TIKTOK_PRIVACY_LEVELS)
      .describe(
        "Who can see the post, as the creator chose it: one of the levels TikTok offers this creator (checked when publishing; an installation whose TikTok app is not audited can only post SELF_ONLY).",
      ),
    allow_comment: z.boolean().describe('Whether others may comment, as the creator chose it (TikTok keeps comments off when the creator turned them off in the app).'),
    allow_duet: z.boolean().optional().describe('Whether others may duet the video, as the creator chose it; required for video and reel, not used for photos.'),
    allow_stitch: z.boolean().optional().describe('Whether others may stitch the video, as the creator chose it; required for video and reel, not used for photos.'),
  })
  .meta({ id: 'TiktokSettings', description: "The creator's own choices for a TikTok post; required when publishing through a live TikTok connection." });
export type TiktokSettings = z.infer<typeof tiktokSettingsSchema>;

const networkOptionsSchema = z
  .strictObject({
    tiktok: tiktokSettingsSchema
      .optional()
      .describe("The creator's own privacy and interaction choices for TikTok; required for a live TikTok connection, optional on a sandbox one."),
  })
  .describe('Per-network choices that belong to the author, by platform (only tiktok has some today).');

/**
 * Blank: empty, or only whitespace and invisible characters (zero-width spaces and joiners, word joiner, BOM),
 * so nothing a reader would see. A blank post is refused before anything is stored or charged.
 */
const BLANK = /^[\s\u200B-\u200D\u2060\uFEFF]*$/u;

/** Whether a post's text has nothing a reader would see. */
export function isBlank(text: string): boolean {
  return BLANK.test(text);
}

const BLANK_MESSAGE = 'must not be blank';

/** One post of a chain: at least one visible character. */
const threadPostSchema = z
  .string()
  .min(1, { message: BLANK_MESSAGE, abort: true })
  .refine((post) => !isBlank(post), { message: BLANK_MESSAGE });

const sandboxOutcomeSchema = z
  .enum(SANDBOX_OUTCOMES)
  .describe(Object.entries(SANDBOX_OUTCOME_DESCRIPTIONS).map(([k, v]) => `\`${k}\`: ${v}`).join('\n'));

/** The fields `refuseBlankPosts` reads (the schema's own output, before the refinement is attached). */
interface PostTextFields {
  target_platforms: readonly (typeof PLATFORM_SLUGS)[number][];
  content_type: (typeof CONTENT_TYPES)[number];
  text?: string | undefined;
  thread?: string[] | undefined;
  thread_split?: 'auto' | 'off' | undefined;
  overrides?: Partial<Record<(typeof PLATFORM_SLUGS)[number], { text?: string | undefined }>> | undefined;
}

/**
 * Spec 7.2 `validation_failed` (the message names the field path): a post whose text is what gets published
 * must have visible text on every target platform. That text is the platform's override when it has one
 * (reported at `overrides.<platform>.text`), else `text`. It is what is published for content_type text, and for
 * thread when the chain is split from `text` (thread_split auto, no `thread`); chained posts are checked one by
 * one by their own schema (`thread[i]`). Captions of photos and videos stay optional. Part of the schema, so the
 * REST API, the MCP tools and the dashboard refuse the same requests with the same paths.
 */
function refuseBlankPosts(input: PostTextFields, ctx: z.RefinementCtx): void {
  const published = input.content_type === 'text' || (input.content_type === 'thread' && input.thread === undefined && input.thread_split === 'auto');
  if (!published) return;
  const reported = new Set<string>();
  for (const platform of input.target_platforms) {
    const override = input.overrides?.[platform]?.text;
    const path = override !== undefined ? ['overrides', platform, 'text'] : ['text'];
    const value = override ?? input.text;
    const key = path.join('.');
    if (reported.has(key)) continue;
    if (value === undefined) {
      reported.add(key);
      const when = input.content_type === 'text' ? 'content_type text' : 'content_type thread with thread_split auto and no thread';
      ctx.addIssue({ code: 'custom', path, message: `required for ${when}` });
    } else if (isBlank(value)) {
      reported.add(key);
      ctx.addIssue({ code: 'custom', path, message: BLANK_MESSAGE });
    }
  }
}

/** The fields of a content (what is published, where and how); shared by creation and edits. */
const contentFields = {
    brand_id: z.string().describe('Brand whose connections publish the content.'),
    target_platforms: z
      .array(platformSlugSchema)
      .min(1)
      .refine((list) => new Set(list).size === list.length, { message: 'must not repeat a platform' })
      .describe('Platforms to publish to; each yields one job.'),
    target_connections: z
      .array(z.string())
      .optional()
      .describe('Connection ids to use, at most one per platform; required for a platform on which the brand has more than one connection.'),
    content_type: z.enum(CONTENT_TYPES).describe('Must be compatible with every target platform (see GET /api/v1/platforms).'),
    text: z
      .string()
      .max(100_000)
      .optional()
      .describe(
        'Post text, caption or description. Required for content_type text (unless every target platform has its own in overrides), and for thread with thread_split auto and no `thread`; there it must not be blank (empty or only whitespace).',
      ),
    title: z.string().max(1000).optional().describe("Title, for the networks that take one: YouTube (required, at most 100 characters), TikTok (a photo post's, at most 90; a video's caption is the text) and Pinterest (at most 100)."),
    media: z
      .array(mediaItemSchema)
      .max(MEDIA_ITEMS_MAX)
      .optional()
      .describe(`Media files, published in this order; photo, video and reel need at least one. A video or a reel takes exactly one (a single video); a photo post up to ${MEDIA_ITEMS_MAX}.`),
    thread: z
      .array(threadPostSchema)
      .min(1)
      .max(25)
      .optional()
      .describe('For content_type thread: the chained posts of the short-post network, at most 25 of at most 500 characters, none blank.'),
    thread_split: z
      .enum(['auto', 'off'])
      .optional()
      .describe('auto: on the short-post network, a text over 500 characters is split into a chain at sentence, then word boundaries, instead of failing with caption_too_long.'),
    thread_numbering: z.boolean().optional().describe('With thread_split auto: end each post with "i/n".'),
    overrides: z
      .partialRecord(z.enum(PLATFORM_SLUGS), overrideSchema)
      .optional()
      .describe('Per-platform replacements of text and title.'),
    network_options: networkOptionsSchema.optional(),
    modo: paymentModeSchema.optional(),
    sandbox_outcomes: z
      .partialRecord(z.enum(PLATFORM_SLUGS), sandboxOutcomeSchema)
      .optional()
      .describe('Force an outcome per platform; accepted only when that platform publishes through a sandbox connection.'),
  };

/** Spec 4.3 fields without the timing: what an edit merges into and what is stored to re-check. */
export const contentFieldsSchema = z.strictObject(contentFields).superRefine(refuseBlankPosts);
export type ContentFields = z.infer<typeof contentFieldsSchema>;

/** Longest accepted `publish_at` text: an RFC 3339 date-time with nanoseconds and an offset. */
const PUBLISH_AT_MAX = 40;

const timingFields = {
  publish_at: z
    .string()
    .max(PUBLISH_AT_MAX)
    .optional()
    .describe(
      'When to publish, at most 365 days ahead and in the future. An RFC 3339 date-time with an offset (`2026-11-24T09:00:00-05:00`, or `Z` for UTC) names the instant. ' +
        'Without an offset (`2026-11-24T09:00`) it is a local wall time in `time_zone` (or, when absent, the brand queue\'s zone, else UTC): a local time that does not exist (spring forward) publishes at the first instant after the gap, one that occurs twice (fall back) at its first occurrence.',
    ),
  time_zone: z
    .string()
    .max(64)
    .optional()
    .describe('IANA time zone (`America/New_York`) the time is meant in; shown back with the local time. Only with publish_at.'),
  queue: z.boolean().optional().describe("true: publish at the brand's next free queue slot (see GET …/brands/{brandId}/queue)."),
  draft: z.boolean().optional().describe('true: save as a draft; nothing is charged or published until it is scheduled or published.'),
};

/** The timing of a request: at most one of publish_at, queue and draft; time_zone only with publish_at. */
interface TimingFields {
  publish_at?: string | undefined;
  time_zone?: string | undefined;
  queue?: boolean | undefined;
  draft?: boolean | undefined;
}

function refuseMixedTiming(input: TimingFields, ctx: z.RefinementCtx): void {
  const chosen = [input.publish_at !== undefined ? 'publish_at' : null, input.queue === true ? 'queue' : null, input.draft === true ? 'draft' : null].filter((x) => x !== null);
  if (chosen.length > 1) ctx.addIssue({ code: 'custom', path: [chosen[1]!], message: `send at most one of publish_at, queue and draft (got ${chosen.join(' and ')})` });
  if (input.time_zone !== undefined && input.publish_at === undefined) ctx.addIssue({ code: 'custom', path: ['time_zone'], message: 'only with publish_at' });
}

export const createContentInputSchema = z
  .strictObject({ ...contentFields, ...timingFields })
  .superRefine(refuseBlankPosts)
  .superRefine(refuseMixedTiming)
  .meta({ id: 'CreateContentInput' });

export type CreateContentInput = z.infer<typeof createContentInputSchema>;

/** Fields an edit may clear with `null` (they are optional at creation). */
const CLEARABLE = ['target_connections', 'text', 'title', 'media', 'thread', 'thread_split', 'thread_numbering', 'overrides', 'network_options', 'sandbox_outcomes'] as const;

/** Every content field but the brand (a content stays with the brand it was made for), each optional in an edit. */
const editable = {
  target_platforms: contentFields.target_platforms.optional(),
  content_type: contentFields.content_type.optional(),
  modo: contentFields.modo,
};

export const updateContentInputSchema = z
  .strictObject({
    ...editable,
    // Described again outside `.nullable()`: a description left inside sits in the non-null branch only, where
    // clients that read the top level of each property never see it.
    ...Object.fromEntries(CLEARABLE.map((k) => [k, contentFields[k].nullable().describe(`${contentFields[k].description ?? k} null clears it.`)])),
    ...timingFields,
    publish_at: timingFields.publish_at.describe(
      'A new time (same forms as at creation). A draft given a time becomes scheduled; a scheduled content moves to it (and leaves its queue slot).',
    ),
    queue: timingFields.queue.describe("true: move to the brand's next free queue slot (a draft becomes scheduled)."),
    draft: timingFields.draft.describe('true: turn a scheduled content back into a draft (its time and queue slot are let go).'),
  } as typeof editable & { [K in (typeof CLEARABLE)[number]]: z.ZodNullable<(typeof contentFields)[K]> } & typeof timingFields)
  .superRefine(refuseMixedTiming)
  .refine((input) => Object.keys(input).length > 0, { message: 'send at least one field to change' })
  .meta({
    id: 'UpdateContentInput',
    description:
      'Changes a draft or scheduled content: the fields sent replace the stored ones (`null` clears an optional one); the result is checked again as at creation. brand_id cannot change. ' +
      'A platform with its own text or title in overrides keeps it when text or title changes (the answer lists them in kept_overrides); overrides is replaced as a whole.',
  });
export type UpdateContentInput = z.infer<typeof updateContentInputSchema>;

/** Body of cancel and publish-now: nothing to send (an empty object, or no body). */
export const contentActionInputSchema = z.strictObject({}).meta({ id: 'ContentActionInput' });

export const createdJobSchema = z.object({
  job_id: z.string(),
  platform_slug: platformSlugSchema,
  connection_id: z.string(),
  status: z.enum(JOB_STATUSES),
});

/** Where and when a content is meant to publish (README, Scheduling); null fields for a draft without a time. */
const whenFields = {
  publish_at: z.iso
    .datetime()
    .nullable()
    .describe('The publication instant (UTC): the scheduled time, or when publishing started; null for a draft.'),
  time_zone: z.string().nullable().describe('IANA zone the time was meant in.'),
  local_publish_at: z
    .string()
    .nullable()
    .describe('The local wall time meant in time_zone (`YYYY-MM-DDTHH:MM`); for a nonexistent local time, the time asked, not the instant after the gap.'),
  queued: z.boolean().describe("Whether the content holds one of its brand's queue slots."),
};

export const createdContentSchema = z
  .object({
    content_id: z.uuid().describe('Identifier of the content.'),
    status: z.enum(CONTENT_STATUSES).describe('publishing (now), scheduled (publish_at) or draft; pending_approval when the caller\'s role needs a person\'s approval first (nothing runs, nothing is charged).'),
    ...whenFields,
    created_at: z.iso.datetime(),
    jobs: z.array(createdJobSchema),
  })
  .meta({ id: 'CreatedContent' });
export type CreatedContent = z.infer<typeof createdContentSchema>;

export const jobSchema = z
  .object({
    job_id: z.string(),
    platform_slug: platformSlugSchema,
    connection_id: z.string(),
    status: z.enum(JOB_STATUSES).describe('scheduled (waits for publish_at) → queued → publishing → confirming → published | failed.'),
    error_code: z.enum(JOB_ERROR_CODES).nullable().describe('Spec 7.4 code when failed.'),
    error_message: z.string().nullable(),
    external_post_url: z.string().nullable().describe('Public URL of the post once published.'),
    notice: z
      .string()
      .nullable()
      .describe(
        'On a published job, what the network did that the author should know although the post went out, e.g. YouTube keeping a video private (uploads through an API project YouTube has not audited stay private until it is); null when there is nothing to say.',
      ),
    previous_status: z.string().nullable().describe('Set when a late confirmation corrected a failed job.'),
    attempts: z.number().int(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    published_at: z.iso.datetime().nullable(),
  })
  .meta({ id: 'Job' });
export type Job = z.infer<typeof jobSchema>;

/** What one target platform of a content publishes, and whether that text is its own (an override). */
export const contentTargetSchema = z
  .object({
    platform_slug: platformSlugSchema,
    text: z.string().nullable().describe("The text this platform publishes: its own (overrides.<platform>.text) when it has one, else `text`."),
    title: z.string().nullable().describe("The title this platform publishes: its own (overrides.<platform>.title) when it has one, else `title`."),
    own_text: z
      .boolean()
      .describe('true when this platform has its own text in overrides: an edit of `text` leaves it as it is; send overrides to change it or null to clear it.'),
    own_title: z.boolean().describe('true when this platform has its own title in overrides (an edit of `title` leaves it as it is).'),
  })
  .meta({ id: 'ContentTarget' });
export type ContentTarget = z.infer<typeof contentTargetSchema>;

export const contentSchema = z
  .object({
    content_id: z.uuid(),
    brand_id: z.string(),
    content_type: z.enum(CONTENT_TYPES),
    status: z
      .enum(CONTENT_STATUSES)
      .describe(
        'draft or scheduled while waiting (editable); pending_approval while a person must approve it (it never publishes by itself), changes_requested when sent back to its author; publishing until every job is final, then published, partial or failed; canceled.',
      ),
    target_platforms: z.array(platformSlugSchema),
    ...whenFields,
    text: z.string().nullable(),
    title: z.string().nullable(),
    thread: z.array(z.string()).nullable().describe('The chain published on the short-post network, after any automatic split.'),
    media: z.array(mediaItemSchema).describe('The media files, by public address or uploaded media id, in the order they are published; empty when none.'),
    overrides: z
      .partialRecord(z.enum(PLATFORM_SLUGS), overrideSchema)
      .nullable()
      .describe('The per-platform texts and titles as sent (they replace `text` and `title` on that platform); null when none.'),
    targets: z.array(contentTargetSchema).describe('Per target platform, the text and title it publishes and whether they are its own.'),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    completed_at: z.iso.datetime().nullable(),
    approval_overdue: z
      .boolean()
      .describe('true for a content pending approval whose publish_at has passed: it did not publish; the approver chooses publish now or a new time.'),
    jobs: z.array(jobSchema),
  })
  .meta({ id: 'Content' });
export type Content = z.infer<typeof contentSchema>;

/** The answer to an edit: the content, and which platforms kept their own text while the shared one changed. */
export const updatedContentSchema = contentSchema
  .extend({
    kept_overrides: z
      .array(z.object({ platform_slug: platformSlugSchema, fields: z.array(z.enum(['text', 'title'])) }))
      .describe(
        'Platforms whose own text or title (overrides) this edit left as it was while it changed `text` or `title`: they keep publishing their own. ' +
          'To change them, send overrides (the whole object: it replaces the stored one) or null to clear them. Empty when nothing was kept.',
      ),
  })
  .meta({ id: 'UpdatedContent' });
export type UpdatedContent = z.infer<typeof updatedContentSchema>;

export const contentListQuerySchema = z.strictObject({
  status: z.enum(CONTENT_STATUSES).optional().describe('Only contents in this status (e.g. scheduled for the calendar, failed to find what needs a retry).'),
  from: z.iso
    .datetime({ offset: true })
    .optional()
    .describe('Calendar feed: only contents whose publish_at is at or after; with from or to the list is ordered by publish_at, earliest first.'),
  to: z.iso.datetime({ offset: true }).optional().describe('Calendar feed: only contents whose publish_at is before.'),
  created_after: z.iso.datetime().optional().describe('ISO 8601; only contents created at or after.'),
  created_before: z.iso.datetime().optional().describe('ISO 8601; only contents created before.'),
  limit: z.coerce.number().int().min(1).max(100).default(20).describe('Contents per page, 1 to 100.'),
  cursor: z.string().max(200).optional().describe('next_cursor of the previous page.'),
});
export type ContentListQuery = z.infer<typeof contentListQuerySchema>;

export const contentListSchema = z
  .object({ data: z.array(contentSchema), next_cursor: z.string().nullable() })
  .meta({ id: 'ContentList' });

export const previewSchema = z
  .object({
    dry_run: z.literal(true),
    content_type: z.enum(CONTENT_TYPES),
    jobs: z.array(
      z.object({
        platform_slug: platformSlugSchema,
        connection_id: z.string(),
        connection_mode: z.enum(['sandbox', 'live']),
        text: z.string().nullable(),
        title: z.string().nullable(),
        thread: z.array(z.string()).nullable(),
      }),
    ),
    meters: z.array(z.object({ meter: z.string(), used: z.number().int(), consumes: z.number().int(), limit: z.number().int() })),
  })
  .meta({ id: 'ContentPreview', description: 'What the request would do; nothing was created, charged or published.' });
export type Preview = z.infer<typeof previewSchema>;

export const retryInputSchema = z
  .strictObject({
    force: z
      .boolean()
      .optional()
      .describe('Also re-queue confirmation failures, whose post may already be live (risk of a duplicate post).'),
  })
  .meta({ id: 'RetryInput' });

/** Why a retry left a failed job alone. */
export const RETRY_SKIP_REASONS = ['connection_not_active', 'may_be_live'] as const;

export const skippedJobSchema = z.object({
  job_id: z.string().describe('The failed job left as it was.'),
  platform_slug: platformSlugSchema,
  connection_id: z.string().describe('The connection the job publishes through.'),
  connection_status: z.enum(CONNECTION_STATUSES).describe('That connection\'s status now; anything but active cannot publish.'),
  reason: z
    .enum(RETRY_SKIP_REASONS)
    .describe(
      'connection_not_active: the connection is expired or inactive, so the job would fail again at once; reconnect it, then retry. ' +
        'may_be_live: the job failed confirmation and its post may already be live; retry with force only after checking the network.',
    ),
  message: z.string().describe('The reason in a sentence, with what to do.'),
});
export type SkippedJob = z.infer<typeof skippedJobSchema>;

export const retryResultSchema = z
  .object({
    content_id: z.uuid(),
    status: z.enum(CONTENT_STATUSES),
    requeued: z.array(createdJobSchema).describe('The failed jobs put back in the queue; each one was counted on publicacoes.'),
    skipped: z.array(skippedJobSchema).describe('The failed jobs left alone, with why; nothing was counted for them.'),
  })
  .meta({ id: 'RetryResult' });
