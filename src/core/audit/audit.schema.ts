import { z } from 'zod';

/** Filters and paging of the audit log, shared by REST, MCP and the dashboard. */
export const auditLogQuerySchema = z.strictObject({
  action: z
    .string()
    .max(100)
    .regex(/^[a-z_]+\.[a-z_]+$/, { message: 'must be an action name such as content.canceled' })
    .optional()
    .describe('Only entries of this action, e.g. `content.canceled`, `brand.created`, `webhook.secret_rotated`.'),
  actor_id: z.string().min(1).max(100).optional().describe('Only entries by this actor: an API key (key_…), an OAuth client (mcp_client_…) or a person (usr_…).'),
  target_type: z.string().min(1).max(50).optional().describe('Only entries about this kind of thing: brand, connection, content, media, webhook, oauth_client, connected_app, wallet, plan.'),
  target_id: z.string().min(1).max(100).optional().describe('Only entries about the thing with this id.'),
  from: z.iso.datetime({ offset: true }).optional().describe('Only entries at or after this instant (RFC 3339).'),
  to: z.iso.datetime({ offset: true }).optional().describe('Only entries before this instant (RFC 3339).'),
  limit: z.coerce.number().int().min(1).max(100).default(50).describe('Entries per page, 1 to 100.'),
  cursor: z.string().max(200).optional().describe('next_cursor of the previous page.'),
});

export const auditEntrySchema = z
  .object({
    id: z.string().describe('aud_…'),
    occurred_at: z.iso.datetime().describe('When the change was made, ISO 8601 UTC.'),
    action: z.string().describe('What was done, `resource.verb` (`content.canceled`, `webhook.secret_rotated`).'),
    actor: z
      .object({
        type: z.enum(['user', 'api_key', 'oauth', 'system']).describe('A person, an API key, an assistant through OAuth, or the service itself.'),
        id: z.string().nullable().describe('usr_…, key_… or the OAuth client id; null for the service.'),
        label: z.string().nullable().describe('A readable name: email, key name and prefix, client name; null when the actor no longer exists.'),
        role: z.string().nullable().describe('The role the actor acted with.'),
      })
      .describe('Who made the change.'),
    via: z.enum(['rest', 'mcp', 'dashboard', 'cli', 'system']).describe('Which door the change came through.'),
    target: z
      .object({
        type: z.string(),
        id: z.string(),
        label: z.string().nullable().describe('A name copied when the change was made (brand name, content\'s first words, webhook URL).'),
      })
      .nullable()
      .describe('What the change was made to.'),
    details: z.record(z.string(), z.unknown()).nullable().describe('What changed; never a secret.'),
    ip: z.string().nullable().describe('The caller\'s address, as the service saw it (behind TRUST_PROXY).'),
    user_agent: z.string().nullable(),
    request_id: z.string().nullable().describe('The X-Request-Id of the request that made the change.'),
  })
  .meta({ id: 'AuditEntry' });

export const auditLogSchema = z.object({ data: z.array(auditEntrySchema), next_cursor: z.string().nullable() }).meta({ id: 'AuditLog' });

export type AuditLogQuery = z.infer<typeof auditLogQuerySchema>;
export type AuditEntry = z.infer<typeof auditEntrySchema>;
export type AuditLog = z.infer<typeof auditLogSchema>;
