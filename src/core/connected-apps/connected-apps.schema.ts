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
  })
  .meta({ id: 'ConnectedApp' });

export const connectedAppListSchema = z.object({ data: z.array(connectedAppSchema) }).meta({ id: 'ConnectedAppList' });

export type ConnectedApp = z.infer<typeof connectedAppSchema>;
export type ConnectedAppList = z.infer<typeof connectedAppListSchema>;
