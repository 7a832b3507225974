import { z } from 'zod';
import { usageSchema } from '../src/core/meters/meters.schema.js';
import { defineTool, listed } from './define-tool.js';

export const getUsageTool = defineTool({
  name: 'get_usage',
  title: 'Get plan usage',
  description:
    'Shows the workspace\'s plan and every meter with its limit and use: stock meters (brands, connections, media_storage in bytes, webhooks, inspiration_library) ' +
    'count what exists; cycle meters (criacao_de_conteudos: contents created, publicacoes: platform posts) reset at cycle_end. ' +
    'Use it before a large publication, or after a limit_reached error to explain which meter is full. Free: no meter is used.',
  permission: 'wallet.read',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: z.strictObject({}),
  outputSchema: usageSchema,
  summary: (u) => `Plan ${u.plan}, cycle ends ${u.cycle_end}: ${listed(u.meters.map((m) => `${m.meter} ${m.used}/${m.limit}`), u.meters.length)}.`,
  handle: (_input, { principal, services }) => services.meters.usage(principal.workspaceId),
});
