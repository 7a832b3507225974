import { meSchema } from '../../core/workspaces/workspaces.schema.js';
import type { WorkspacesService } from '../../core/workspaces/workspaces.service.js';
import { defineRoute } from '../route.js';

/** `GET /api/v1/me`: the one path that needs no workspace id, so a key alone leads to every other path. */
export function meRoutes(workspaces: WorkspacesService) {
  return [
    defineRoute({
      operationId: 'getMe',
      method: 'get',
      path: '/api/v1/me',
      tag: 'API keys',
      summary: 'Who am I',
      description:
        'The workspace this credential acts in (its id is the {wsId} of every workspace path) and which credential it is: an API key (id, name, prefix) or an OAuth access token (the client, and the key that approved it). Works with both kinds of bearer credential. `actor` says who acts: the role and brands, and the key or person behind the credential (for an OAuth token, who approved the grant).',
      auth: 'bearer',
      success: { status: 200, description: 'The workspace and the credential.', schema: meSchema },
      errors: ['not_found'],
      handle: ({ principal }) => workspaces.me(principal),
    }),
  ];
}
