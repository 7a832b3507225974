/**
 * Spec 2.6, with the draft and scheduled states of scheduling and the two of approvals (`pending_approval`: waits
 * for a person to approve it, never publishes by itself; `changes_requested`: sent back to its author): what a
 * content and each of its jobs can be. Shared by the core, the doors and the error catalogue.
 */
export const CONTENT_STATUSES = ['draft', 'pending_approval', 'changes_requested', 'scheduled', 'publishing', 'published', 'partial', 'failed', 'canceled'] as const;
export type ContentStatus = (typeof CONTENT_STATUSES)[number];

/** The statuses in which a content can still be edited or canceled (published now: draft and scheduled only). */
export const WAITING_STATUSES = ['draft', 'pending_approval', 'changes_requested', 'scheduled'] as const satisfies readonly ContentStatus[];

/** The statuses of a content waiting on its review: nothing runs, nothing is charged. */
export const REVIEW_STATUSES = ['pending_approval', 'changes_requested'] as const satisfies readonly ContentStatus[];

/** The statuses that refuse those changes (`content_not_editable`). */
export const SETTLED_STATUSES = CONTENT_STATUSES.filter((s): s is Exclude<ContentStatus, (typeof WAITING_STATUSES)[number]> => !(WAITING_STATUSES as readonly string[]).includes(s));

export const JOB_STATUSES = ['scheduled', 'queued', 'publishing', 'confirming', 'published', 'failed'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
