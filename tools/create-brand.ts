import { brandInputSchema, brandSchema } from '../src/core/brands/brands.schema.js';
import { dashboardLink, defineTool } from './define-tool.js';

export const createBrandTool = defineTool({
  name: 'create_brand',
  title: 'Create a brand',
  description:
    'Creates a brand: the group of network connections content is published through (add them with add_sandbox_connection or start_connection_oauth). ' +
    'Each call creates a new brand, so check list_brands first to avoid a duplicate. Returns at once with the brand id. ' +
    'Spends 1 on the brands stock meter while the brand exists (get_usage). Errors: limit_reached (brands meter full), validation_failed (name empty or over 100 characters).',
  permission: 'brands.manage',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  inputSchema: brandInputSchema,
  outputSchema: brandSchema,
  summary: (brand) => `Created brand ${brand.name} (${brand.id}).`,
  links: (brand) => [dashboardLink.brand(brand.id, brand.name)],
  handle: (input, { principal, services }) => services.brands.create(principal, principal.workspaceId, input),
});
