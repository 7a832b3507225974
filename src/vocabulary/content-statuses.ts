/**
 * Spec 2.6, with the draft and scheduled states of scheduling: what a content and each of its jobs can be. Shared by
 * the core, the doors and the error catalogue.
 */
export const CONTENT_STATUSES = ['draft', 'scheduled', 'publishing', 'published', 'partial', 'failed', 'canceled'] as const;
export type ContentStatus = (typeof CONTENT_STATUSES)[number];

/** The statuses in which a content can still be edited, canceled or published now. */
export const WAITING_STATUSES = ['draft', 'scheduled'] as const satisfies readonly ContentStatus[];

/** The statuses that refuse those changes (`content_not_editable`). */
export const SETTLED_STATUSES = CONTENT_STATUSES.filter((s): s is Exclude<ContentStatus, (typeof WAITING_STATUSES)[number]> => !(WAITING_STATUSES as readonly string[]).includes(s));

export const JOB_STATUSES = ['scheduled', 'queued', 'publishing', 'confirming', 'published', 'failed'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
