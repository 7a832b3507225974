import { auditLogQuerySchema, auditLogSchema } from '../src/core/audit/audit.schema.js';
import { count, defineTool } from './define-tool.js';

export const getAuditLogTool = defineTool({
  name: 'get_audit_log',
  title: 'Read the audit log',
  permission: 'audit.read',
  description:
    "Lists the workspace's audit log, newest first: each change (brand created, content canceled, webhook updated, …) with who made it (person, API key or assistant, and the role used), what it was made to, when, and from which address and request. " +
    'Filter by action, actor_id, target_type, target_id, from and to; pass next_cursor as cursor for older entries. ' +
    'Only owners and admins may read it: any other role answers forbidden naming the permission audit.read. Free: no meter is used.',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  inputSchema: auditLogQuerySchema,
  outputSchema: auditLogSchema,
  summary(log) {
    if (log.data.length === 0) return 'No audit entry matches.';
    const newest = log.data[0]!;
    return `${count(log.data.length, 'audit entry', 'audit entries')}; the newest: ${newest.action} by ${newest.actor.label ?? newest.actor.type} at ${newest.occurred_at}.${log.next_cursor === null ? '' : ' More entries: pass next_cursor as cursor.'}`;
  },
  handle: (input, { principal, services }) => services.audit.list(principal, principal.workspaceId, input),
});
