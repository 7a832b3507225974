import { auditLogQuerySchema, auditLogSchema } from '../../core/audit/audit.schema.js';
import type { AuditService } from '../../core/audit/audit.service.js';
import { defineRoute } from '../route.js';
import { workspaceParams } from './common.js';

/** The workspace's audit log: read only, for owners and admins. */
export function auditRoutes(audit: AuditService) {
  return [
    defineRoute({
      operationId: 'listAuditLog',
      method: 'get',
      path: '/api/v1/workspaces/{wsId}/audit-log',
      tag: 'Audit log',
      summary: 'List audit log entries',
      description:
        'Every change made in the workspace, newest first: who (person, API key or OAuth client, with the role used), what, on what, when, from which address and request. Filter by action, actor, target and time; page with `next_cursor`. Needs the `audit.read` permission (owner, admin).',
      auth: 'bearer',
      params: workspaceParams,
      query: auditLogQuerySchema,
      success: { status: 200, description: 'A page of entries.', schema: auditLogSchema },
      handle: ({ principal, params, query }) => audit.list(principal, params.wsId, query),
    }),
  ];
}
