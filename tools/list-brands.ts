import { z } from 'zod';
import { brandListSchema } from '../src/core/brands/brands.schema.js';
import { count, dashboardLink, defineTool, listed, MAX_LIST_LINKS } from './define-tool.js';

export const listBrandsTool = defineTool({
  name: 'list_brands',
  title: 'List brands',
  description:
    'Lists the workspace\'s brands (id and name), oldest first. A brand groups the network connections content is published through: ' +
    'publish_content and preview_content need a brand_id from here. Use list_connections to see which platforms a brand can publish to. ' +
    'Free: no meter is used.',
  permission: 'brands.read',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: z.strictObject({}),
  outputSchema: brandListSchema,
  summary: (list) => (list.data.length === 0 ? 'No brand yet: create one with create_brand.' : `${count(list.data.length, 'brand')}: ${listed(list.data.map((b) => `${b.name} (${b.id})`))}.`),
  links: (list) => list.data.slice(0, MAX_LIST_LINKS).map((b) => dashboardLink.brand(b.id, b.name)),
  handle: (_input, { principal, services }) => services.brands.list(principal, principal.workspaceId),
});
