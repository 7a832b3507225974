import { z } from 'zod';

/** The apps holding grants or tokens of a workspace (MCP hosts and assistant builders it approved). */

export const connectedAppSchema = z
  .object({
    client_id: z.string().describe('mcp_client_… for a registered client; an https URL for a client known by its metadata document.'),
    client_name: z.string().describe('The name the client gives itself (registration or metadata document); its host when it gives none.'),
    host: z.string().describe('For a metadata-document client, the host serving its document; for a registered one, the host it returns to.'),
    kind: z.enum(['registered', 'metadata_document']).describe('registered: dynamic registration or made by the workspace; metadata_document: an https client_id (CIMD).'),
    connected_at: z.iso.datetime().describe('When the oldest live approval was given.'),
    last_authorized_at: z.iso.datetime().describe('When an approval was last given or a token last issued.'),
    active_tokens: z.number().int().describe('Unexpired access tokens.'),
    approvals: z
      .array(
        z.object({
          role: z.string().describe('The role the app acts with (narrowed at each call to what the approver still holds).'),
          brand_ids: z.array(z.string()).nullable().describe('The brands it is limited to; null for every brand of the approver.'),
          approved_by: z
            .object({
              type: z.enum(['user', 'api_key']).describe('A person (signed in on the consent page) or an API key (pasted there).'),
              id: z.string().describe('usr_… or key_…'),
              label: z.string().nullable().describe("The person's email or the key's name at the time of approval."),
            })
            .describe('Who approved.'),
          approved_at: z.iso.datetime(),
        }),
      )
      .describe('What the live approvals of the app give it, newest first, one per approver, role and brands; empty for approvals given before grants carried a role (they act as the approving key).'),
  })
  .meta({ id: 'ConnectedApp' });

export const connectedAppListSchema = z.object({ data: z.array(connectedAppSchema) }).meta({ id: 'ConnectedAppList' });

export type ConnectedApp = z.infer<typeof connectedAppSchema>;
export type ConnectedAppList = z.infer<typeof connectedAppListSchema>;
