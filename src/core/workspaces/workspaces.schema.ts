import { z } from 'zod';
import { ROLES } from '../permissions/roles.js';

export const createWorkspaceInputSchema = z.strictObject({
  name: z.string().trim().min(1).max(100),
});

export type CreateWorkspaceInput = z.infer<typeof createWorkspaceInputSchema>;

/** A workspace as operators list it (`npm run cli -- workspace list`). */
export const workspaceSummarySchema = z
  .object({
    id: z.string().describe('Workspace id (ws_…): the {wsId} of every workspace path.'),
    name: z.string().describe('Name given when the workspace was created.'),
    plan: z.string().describe('Plan whose meters apply (see GET …/usage).'),
    created_at: z.iso.datetime().describe('ISO 8601 UTC.'),
  })
  .meta({ id: 'WorkspaceSummary' });

const apiKeyCredentialSchema = z
  .object({
    kind: z.literal('api_key').describe('An API key sent as the bearer credential.'),
    key_id: z.string().describe('Id of the key (key_…), as GET …/api-keys lists it and DELETE …/api-keys/{keyId} revokes it.'),
    name: z.string().describe('Label of the key.'),
    prefix: z.string().describe('The first characters of the key, as the key list shows them.'),
  })
  .meta({ id: 'ApiKeyCredential' });

const oauthCredentialSchema = z
  .object({
    kind: z.literal('oauth').describe('An OAuth access token issued to an MCP client.'),
    client_id: z.string().describe('The OAuth client the token was issued to (mcp_client_…).'),
    client_name: z.string().nullable().describe('The client’s name as registered; null when it gave none.'),
    key_id: z.string().nullable().describe('The API key whose holder approved the grant; revoking that key revokes the token.'),
  })
  .meta({ id: 'OAuthCredential' });

const userCredentialSchema = z
  .object({
    kind: z.literal('user').describe('A person signed in to the dashboard.'),
    user_id: z.string().describe('The person.'),
    email: z.string().describe('Their email address.'),
  })
  .meta({ id: 'UserCredential' });

const actorSchema = z
  .object({
    role: z.enum(ROLES).describe('What this credential may do (see the role matrix in the README).'),
    brand_ids: z.array(z.string()).nullable().describe('The brands it is limited to; null for every brand.'),
    key_id: z.string().nullable().describe('The API key acting, or the key that approved the OAuth grant; null otherwise.'),
    user_id: z.string().nullable().describe('The person acting, or who approved the OAuth grant; null otherwise.'),
    email: z.string().nullable().describe('That person\'s email address; null when no person is behind the credential.'),
  })
  .meta({ id: 'Actor' });

export const meSchema = z
  .object({
    workspace: workspaceSummarySchema.describe('The workspace this credential acts in: the only one it can reach.'),
    credential: z.discriminatedUnion('kind', [apiKeyCredentialSchema, oauthCredentialSchema, userCredentialSchema]).describe('The credential of this request.'),
    actor: actorSchema.describe('Who acts with this credential: its role and brands, and the key or person behind it.'),
  })
  .meta({ id: 'Me', description: 'Who a bearer credential is: its workspace and which key or OAuth client it is.' });

export type WorkspaceSummary = z.infer<typeof workspaceSummarySchema>;
export type Me = z.infer<typeof meSchema>;
