import { z } from 'zod';
import { PASSWORD_LENGTH } from '../accounts/password.js';
import { ROLES } from '../permissions/roles.js';

/** Members of a workspace (people with a role and brands) and invitations to become one. */

export const roleSchema = z
  .enum(ROLES)
  .describe(
    'owner: everything, including managing owners; admin: everything but owners; editor: drafts, schedules, publishes and approves; contributor: drafts and submits for approval; viewer: reads; client: sees its brands and approves or requests changes.',
  );

const email = z.email().max(254).describe('Email address of the person (compared lowercased).');

export const brandIdsSchema = z
  .array(z.string().min(1).max(100))
  .min(1)
  .max(100)
  .nullable()
  .describe('The brands the member sees and acts on (brand_…); null or absent for every brand. Never wider than your own brands.');

export const memberSchema = z
  .object({
    id: z.string().describe('Membership id (mem_…).'),
    user_id: z.string().describe('The person (usr_…); the same in every workspace they belong to.'),
    email: z.string(),
    name: z.string().nullable(),
    role: z.enum(ROLES),
    brand_ids: z.array(z.string()).nullable().describe('The brands the member is limited to; null for every brand.'),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'Member', description: 'A person who belongs to the workspace, with their role and brands.' });

export const memberListSchema = z.object({ data: z.array(memberSchema) }).meta({ id: 'MemberList' });

export const addMemberInputSchema = z
  .strictObject({
    email: email.describe('Email of a person who already has an account here; for anyone else, create an invitation.'),
    role: roleSchema,
    brand_ids: brandIdsSchema.optional(),
  })
  .meta({ id: 'AddMemberInput' });

export const updateMemberInputSchema = z
  .strictObject({ role: roleSchema.optional(), brand_ids: brandIdsSchema.optional() })
  .refine((v) => v.role !== undefined || v.brand_ids !== undefined, { message: 'give role, brand_ids or both' })
  .meta({ id: 'UpdateMemberInput' });

export const INVITATION_STATUSES = ['pending', 'accepted', 'revoked', 'expired'] as const;

export const invitationSchema = z
  .object({
    id: z.string().describe('Invitation id (inv_…).'),
    email: z.string().nullable().describe('The address invited; null for the first owner link of a fresh installation, which the person fills in.'),
    role: z.enum(ROLES),
    brand_ids: z.array(z.string()).nullable(),
    status: z.enum(INVITATION_STATUSES),
    created_by: z.string().nullable().describe('Who invited: a person (usr_…) or an API key (key_…); null for the service itself.'),
    created_at: z.iso.datetime(),
    expires_at: z.iso.datetime(),
    accepted_at: z.iso.datetime().nullable(),
  })
  .meta({ id: 'Invitation', description: 'An invitation as listed; its token is never shown again after creation.' });

export const invitationListSchema = z.object({ data: z.array(invitationSchema) }).meta({ id: 'InvitationList' });

export const createInvitationInputSchema = z
  .strictObject({
    email,
    role: roleSchema,
    brand_ids: brandIdsSchema.optional(),
    expires_in_days: z.number().int().min(1).max(30).optional().describe('Days until the link stops working; 7 when absent.'),
  })
  .meta({ id: 'CreateInvitationInput' });

export const createdInvitationSchema = invitationSchema
  .extend({
    token: z.string().describe('The one-time token. Returned only in this response.'),
    accept_url: z.string().describe('The link the person opens to join (it holds the token). Returned only in this response; pass it on if it was not mailed.'),
    mailed: z.boolean().describe('Whether the link was also sent by email (SMTP configured).'),
  })
  .meta({ id: 'CreatedInvitation' });

export type Member = z.infer<typeof memberSchema>;
export type MemberList = z.infer<typeof memberListSchema>;
export type AddMemberInput = z.infer<typeof addMemberInputSchema>;
export type UpdateMemberInput = z.infer<typeof updateMemberInputSchema>;
export type Invitation = z.infer<typeof invitationSchema>;
export type InvitationList = z.infer<typeof invitationListSchema>;
export type CreateInvitationInput = z.infer<typeof createInvitationInputSchema>;
export type CreatedInvitation = z.infer<typeof createdInvitationSchema>;

/** What a person who has no account gives to accept an invitation (the join page's form). */
export const acceptAsNewPersonSchema = z.strictObject({
  email: email.optional().describe('Only for an invitation without an address (the first owner link); otherwise the invitation\'s address is used.'),
  password: z.string().min(PASSWORD_LENGTH.min).max(PASSWORD_LENGTH.max).describe(`At least ${PASSWORD_LENGTH.min} characters.`),
  name: z.string().trim().max(100).optional(),
});

export type AcceptAsNewPerson = z.infer<typeof acceptAsNewPersonSchema>;
