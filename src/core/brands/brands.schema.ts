import { z } from 'zod';
import { APPROVAL_ROLES, approvalRolesSchema } from '../approvals/approval-roles.js';

/** A brand's id, wherever a door takes one. Ids are plain strings: a malformed id is not_found, like an unknown one. */
export const brandIdSchema = z.string().describe('Brand id (brand_…).');

export const brandInputSchema = z
  .strictObject({ name: z.string().trim().min(1).max(100).describe('Display name of the brand.') })
  .meta({ id: 'BrandInput' });

/** Body of PATCH …/brands/{brandId}: a new name, the brand's approval roles, or both. */
export const brandUpdateInputSchema = z
  .strictObject({
    name: z.string().trim().min(1).max(100).optional().describe('Display name of the brand.'),
    approval_roles: approvalRolesSchema.nullable().optional(),
  })
  .refine((v) => v.name !== undefined || v.approval_roles !== undefined, { message: 'send name, approval_roles or both', path: ['name'] })
  .meta({ id: 'BrandUpdateInput' });

export const brandSchema = z
  .object({
    id: z.string().describe('Brand id (brand_…).'),
    name: z.string(),
    approval_roles: z
      .array(z.enum(APPROVAL_ROLES))
      .nullable()
      .describe("Roles whose contents on this brand need a person's approval besides contributors (who always do); null: the workspace's default."),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'Brand', description: 'A brand groups the network connections content is published through.' });

export const brandListSchema = z.object({ data: z.array(brandSchema) }).meta({ id: 'BrandList' });

export type BrandInput = z.infer<typeof brandInputSchema>;
export type BrandUpdateInput = z.infer<typeof brandUpdateInputSchema>;
export type Brand = z.infer<typeof brandSchema>;
export type BrandList = z.infer<typeof brandListSchema>;
