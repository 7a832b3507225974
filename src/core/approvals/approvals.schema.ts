import { z } from 'zod';
import { contentSchema } from '../contents/contents.schema.js';

import { APPROVAL_ROLES, approvalRolesSchema } from './approval-roles.js';

export { APPROVAL_ROLES, type ApprovalRole, approvalRolesSchema } from './approval-roles.js';

export const approvalPolicySchema = z
  .object({
    approval_roles: z.array(z.enum(APPROVAL_ROLES)).describe("The workspace's default: roles whose contents need approval on brands that set none of their own (contributors always do)."),
  })
  .meta({ id: 'ApprovalPolicy' });
export type ApprovalPolicy = z.infer<typeof approvalPolicySchema>;

export const approvalPolicyInputSchema = z.strictObject({ approval_roles: approvalRolesSchema }).meta({ id: 'ApprovalPolicyInput' });

const PUBLISH_AT_MAX = 40;

/** Body of submit: nothing to send (the content's own time is kept). */
export const submitInputSchema = z.strictObject({}).meta({ id: 'SubmitForApprovalInput' });

export const approveInputSchema = z
  .strictObject({
    publish_at: z
      .string()
      .max(PUBLISH_AT_MAX)
      .optional()
      .describe('A new time to publish at, read as at creation (an offset names the instant; without one, a local time in time_zone, else the brand\'s zone).'),
    time_zone: z.string().max(64).optional().describe('IANA zone of a local publish_at. Only with publish_at.'),
    publish_now: z.boolean().optional().describe('true: publish at once instead of at the content\'s time.'),
  })
  .superRefine((v, ctx) => {
    if (v.publish_now === true && v.publish_at !== undefined) ctx.addIssue({ code: 'custom', path: ['publish_now'], message: 'send either publish_at or publish_now, not both' });
    if (v.time_zone !== undefined && v.publish_at === undefined) ctx.addIssue({ code: 'custom', path: ['time_zone'], message: 'only with publish_at' });
  })
  .meta({
    id: 'ApproveInput',
    description:
      'Optional. Without a body the content goes out as it asked: at its publish_at, or now when it had none. A content whose time has passed (approval_overdue) needs publish_now or a new publish_at.',
  });
export type ApproveInput = z.infer<typeof approveInputSchema>;

export const requestChangesInputSchema = z
  .strictObject({ comment: z.string().trim().min(1).max(5000).describe('What to change, for the author; added to the content\'s comments.') })
  .meta({ id: 'RequestChangesInput' });
export type RequestChangesInput = z.infer<typeof requestChangesInputSchema>;

export const commentInputSchema = z
  .strictObject({ body: z.string().trim().min(1).max(5000).describe('The comment, shown to everyone who can read the content; never published.') })
  .meta({ id: 'CommentInput' });
export type CommentInput = z.infer<typeof commentInputSchema>;

export const REVIEW_KINDS = ['comment', 'submitted', 'approved', 'changes_requested'] as const;

export const reviewEntrySchema = z
  .object({
    id: z.string().describe('rev_…'),
    kind: z.enum(REVIEW_KINDS).describe('comment, or an approval step: submitted, approved, changes_requested (its body is the comment sent with it).'),
    author: z
      .object({
        type: z.enum(['user', 'api_key', 'oauth', 'system']),
        id: z.string().nullable(),
        label: z.string().nullable().describe('The person\'s email, the key\'s name or the assistant\'s client id, as it was then.'),
      })
      .describe('Who wrote it or took the step.'),
    role: z.string().nullable().describe('The author\'s role then.'),
    body: z.string().nullable(),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'ReviewEntry' });
export type ReviewEntry = z.infer<typeof reviewEntrySchema>;

export const reviewThreadSchema = z
  .object({ data: z.array(reviewEntrySchema).describe('Oldest first: the comments and the approval steps of the content.') })
  .meta({ id: 'ReviewThread' });
export type ReviewThread = z.infer<typeof reviewThreadSchema>;

export const pendingListQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(50).describe('Contents per list, 1 to 100.'),
});
export type PendingListQuery = z.infer<typeof pendingListQuerySchema>;

export const pendingListSchema = z
  .object({ data: z.array(contentSchema).describe('Contents waiting for approval in the brands the caller sees, earliest time first (approval_overdue: their time has passed).') })
  .meta({ id: 'PendingApprovalList' });
export type PendingList = z.infer<typeof pendingListSchema>;
