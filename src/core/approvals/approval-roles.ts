import { z } from 'zod';

/**
 * The roles a brand or a workspace may require approval for. A contributor always needs it (it may not publish);
 * an owner never does, so a workspace can always approve.
 */
export const APPROVAL_ROLES = ['admin', 'editor', 'contributor'] as const;
export type ApprovalRole = (typeof APPROVAL_ROLES)[number];

export const approvalRolesSchema = z
  .array(z.enum(APPROVAL_ROLES))
  .max(APPROVAL_ROLES.length)
  .refine((l) => new Set(l).size === l.length, { message: 'must not repeat a role' })
  .describe(
    "Roles whose contents wait for a person's approval before they can be scheduled or published, besides contributors (who always need it). " +
      'On a brand, null means the workspace default (GET …/approval-policy); [] means contributors only.',
  );

