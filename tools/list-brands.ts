import { z } from 'zod';
import { brandListSchema } from '../src/core/brands/brands.schema.js';
import { defineTool } from './define-tool.js';

export const listBrandsTool = defineTool({
  name: 'list_brands',
  title: 'List brands',
  description:
    'Lists the workspace\'s brands (id and name), oldest first. A brand groups the network connections content is published through: ' +
    'publish_content and preview_content need a brand_id from here. Use list_connections to see which platforms a brand can publish to. ' +
    'Free: no meter is used.',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: z.strictObject({}),
  outputSchema: brandListSchema,
  handle: (_input, { principal, services }) => services.brands.list(principal, principal.workspaceId),
});
