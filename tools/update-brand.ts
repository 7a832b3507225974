import { brandIdSchema, brandInputSchema, brandSchema } from '../src/core/brands/brands.schema.js';
import { dashboardLink, defineTool } from './define-tool.js';

export const updateBrandTool = defineTool({
  name: 'update_brand',
  title: 'Rename a brand',
  description:
    'Renames a brand (brand_id from list_brands); its connections, queue and contents stay as they are. Answers the brand with its new name. ' +
    'Free: no meter is used. Errors: not_found (brand_id unknown in this workspace), validation_failed (name empty or over 100 characters).',
  // Destructive: the new name overwrites the one stored. Idempotent: the same name twice is one rename. Closed
  // world: nothing outside the service is told.
  permission: 'brands.manage',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  inputSchema: brandInputSchema.extend({ brand_id: brandIdSchema.describe('Brand id (brand_…), from list_brands.') }),
  outputSchema: brandSchema,
  summary: (brand) => `Brand ${brand.id} is now named ${brand.name}.`,
  links: (brand) => [dashboardLink.brand(brand.id, brand.name)],
  handle: ({ brand_id, ...input }, { principal, services }) => services.brands.update(principal, principal.workspaceId, brand_id, input),
});
