import { z } from 'zod';

/** Spec 2.2 and 4.2. */

export const redirectUriSchema = z
  .url()
  .max(2048)
  .refine((u) => {
    let url: URL;
    try {
      url = new URL(u);
    } catch {
      return false;
    }
    if (url.hash !== '') return false;
    if (url.protocol === 'https:') return true;
    return url.protocol === 'http:' && ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
  }, 'must be an https URL (or http on a loopback address) without a fragment');

export const createOAuthClientInputSchema = z
  .strictObject({
    client_name: z.string().trim().min(1).max(100).describe('Shown to the user on the consent page.'),
    redirect_uris: z
      .array(redirectUriSchema)
      .min(1)
      .max(10)
      .describe('Callbacks. For an assistant builder, e.g. https://chat.openai.com/aip/g-{action_id}/oauth/callback; update it once the real one is known.'),
  })
  .meta({ id: 'CreateOAuthClientInput' });

export const updateOAuthClientInputSchema = z
  .strictObject({
    client_name: z.string().trim().min(1).max(100).optional(),
    redirect_uris: z.array(redirectUriSchema).min(1).max(10).optional(),
  })
  .meta({ id: 'UpdateOAuthClientInput' });

export const oauthClientSchema = z
  .object({
    client_id: z.string().describe('mcp_client_…'),
    client_name: z.string(),
    redirect_uris: z.array(z.string()),
    authorization_endpoint: z.string().describe('Ends with /api/oauth/mcp/authorize.'),
    token_endpoint: z.string().describe('Ends with /api/oauth/mcp/token.'),
    scopes_supported: z.array(z.string()).describe('["mcp"]'),
    token_endpoint_auth_method: z.string().describe('client_secret_post (client_secret_basic is accepted too).'),
    created_at: z.iso.datetime(),
  })
  .meta({ id: 'OAuthClient' });

export const createdOAuthClientSchema = oauthClientSchema
  .extend({ client_secret: z.string().describe('mcp_csec_… — returned only in this response.') })
  .meta({ id: 'CreatedOAuthClient' });

export const oauthClientListSchema = z.object({ data: z.array(oauthClientSchema) }).meta({ id: 'OAuthClientList' });

export type CreateOAuthClientInput = z.infer<typeof createOAuthClientInputSchema>;
export type UpdateOAuthClientInput = z.infer<typeof updateOAuthClientInputSchema>;
export type OAuthClient = z.infer<typeof oauthClientSchema>;
export type CreatedOAuthClient = z.infer<typeof createdOAuthClientSchema>;
export type OAuthClientList = z.infer<typeof oauthClientListSchema>;
