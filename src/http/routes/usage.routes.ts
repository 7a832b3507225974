import { usageSchema } from '../../core/meters/meters.schema.js';
import type { MetersService } from '../../core/meters/meters.service.js';
import { assertWorkspaceAccess } from '../../core/workspaces/access.js';
import { defineRoute } from '../route.js';
import { workspaceParams } from './common.js';

export function usageRoutes(meters: MetersService) {
  return [
    defineRoute({
      operationId: 'getUsage',
      method: 'get',
      path: '/api/v1/workspaces/{wsId}/usage',
      tag: 'Usage',
      summary: 'Plan meters',
      description: 'Every meter of spec 7.3 with its limit, use and, for per-cycle meters, the end of the cycle.',
      auth: 'bearer',
      params: workspaceParams,
      success: { status: 200, description: 'The meters.', schema: usageSchema },
      handle: ({ principal, params }) => {
        assertWorkspaceAccess(principal, params.wsId, 'wallet.read');
        return meters.usage(params.wsId);
      },
    }),
  ];
}
