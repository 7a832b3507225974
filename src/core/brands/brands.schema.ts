import { z } from 'zod';

/** A brand's id, wherever a door takes one. Ids are plain strings: a malformed id is not_found, like an unknown one. */
export const brandIdSchema = z.string().describe('Brand id (brand_…).');

export const brandInputSchema = z
  .strictObject({ name: z.string().trim().min(1).max(100).describe('Display name of the brand.') })
  .meta({ id: 'BrandInput' });

export const brandSchema = z
  .object({
    id: z.string().describe('Brand id (brand_…).'),
    name: z.string(),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
  })
  .meta({ id: 'Brand', description: 'A brand groups the network connections content is published through.' });

export const brandListSchema = z.object({ data: z.array(brandSchema) }).meta({ id: 'BrandList' });

export type BrandInput = z.infer<typeof brandInputSchema>;
export type Brand = z.infer<typeof brandSchema>;
export type BrandList = z.infer<typeof brandListSchema>;
