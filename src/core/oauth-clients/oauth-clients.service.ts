import type { Kysely } from 'kysely';
import { type ClientRow, deleteClient, destroyIssuedFor, findClient, listClients, upsertClient } from '../../../db/repositories/oauth.repo.js';
import type { Database } from '../../../db/schema.js';
import { type Clock, toIso } from '../clock.js';
import { ServiceError } from '../errors.js';
import { newId, newSecret, sha256Hex } from '../ids.js';
import type { Principal } from '../principal.js';
import type { GrantApprover } from '../connected-apps/grant-access.js';
import { assertWorkspaceAccess } from '../workspaces/access.js';
import { recordAudit } from '../audit/record.js';
import type { CreatedOAuthClient, CreateOAuthClientInput, OAuthClient, OAuthClientList, UpdateOAuthClientInput } from './oauth-clients.schema.js';

export const MCP_SCOPE = 'mcp';
/** Where the authorization server lives under the base URL (spec 2.2: endpoints end with /api/oauth/mcp/…). */
export const OAUTH_MOUNT = '/api/oauth/mcp';
export const CLIENT_ID_PREFIX = 'mcp_client_';
/**
 * The dashboard's session cookie is scoped to /dashboard, so the consent page never sees it. A signed-in person
 * reaches the consent page through /dashboard/authorize/{uid}, which copies their session into this cookie,
 * scoped to the consent pages only; it resolves exactly like the dashboard's (sign-out ends both).
 */
export const CONSENT_SESSION_COOKIE = 'svc_consent_session';
export const CONSENT_COOKIE_PATH = `${OAUTH_MOUNT}/interaction`;

/** People's ids start with this (an API key's never does). */
const USER_ID_PREFIX = 'usr_';

/**
 * The account id of a grant: the workspace and who approved it, an API key (`ws_…:key_…`, revoking the key
 * revokes it) or a person (`ws_…:usr_…`, removing them from the workspace ends it). What the grant may do (role,
 * brands) is stored beside it, keyed by its grant id (`connected-apps/grant-access.ts`).
 */
export function accountIdFor(workspaceId: string, approver: GrantApprover): string {
  return `${workspaceId}:${approver.kind === 'user' ? approver.userId : approver.keyId}`;
}

/** The workspace and approver of a grant's account id; null for anything else. */
export function parseAccountId(accountId: string): { workspaceId: string; approver: GrantApprover } | null {
  const [workspaceId, id, extra] = accountId.split(':');
  if (!workspaceId || !id || extra !== undefined) return null;
  return { workspaceId, approver: id.startsWith(USER_ID_PREFIX) ? { kind: 'user', userId: id } : { kind: 'api_key', keyId: id } };
}

/** The accounts of every grant approved with one of a workspace's API keys (not a person's), as a LIKE prefix. */
export function keyAccountsPrefix(workspaceId: string): string {
  return `${workspaceId}:key_`;
}

export type OAuthClientsService = ReturnType<typeof createOAuthClientsService>;

export function createOAuthClientsService(deps: { db: Kysely<Database>; clock: Clock; baseUrl: string }) {
  const { db, clock } = deps;
  const issuer = `${deps.baseUrl}${OAUTH_MOUNT}`;

  function render(row: ClientRow): OAuthClient {
    const m = row.metadata as { client_name?: string; redirect_uris?: string[]; token_endpoint_auth_method?: string };
    return {
      client_id: row.id,
      client_name: m.client_name ?? '',
      redirect_uris: m.redirect_uris ?? [],
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      scopes_supported: [MCP_SCOPE],
      token_endpoint_auth_method: m.token_endpoint_auth_method ?? 'client_secret_post',
      created_at: toIso(row.createdAt),
    };
  }

  async function own(principal: Principal, workspaceId: string, clientId: string): Promise<ClientRow> {
    assertWorkspaceAccess(principal, workspaceId, 'oauth_clients.manage');
    const row = await findClient(db, clientId);
    if (!row || row.workspaceId !== workspaceId) throw new ServiceError('not_found', `OAuth client ${clientId} was not found in this workspace.`);
    return row;
  }

  return {
    /**
     * Spec 4.2: a confidential client for an assistant builder. The `mcp_csec_` secret is returned here only
     * and stored as a SHA-256 digest.
     */
    async create(principal: Principal, workspaceId: string, input: CreateOAuthClientInput): Promise<CreatedOAuthClient> {
      assertWorkspaceAccess(principal, workspaceId, 'oauth_clients.manage');
      const now = clock.now();
      const secret = newSecret('mcp_csec_', 24);
      const row: ClientRow = {
        id: newId(CLIENT_ID_PREFIX),
        workspaceId,
        kind: 'confidential',
        metadata: {
          client_name: input.client_name,
          redirect_uris: input.redirect_uris,
          grant_types: ['authorization_code'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_post',
          scope: MCP_SCOPE,
          client_secret: sha256Hex(secret),
        },
        createdAt: now,
        updatedAt: now,
      };
      row.metadata.client_id = row.id;
      await db.transaction().execute(async (tx) => {
        await upsertClient(tx, row);
        // The client secret is never part of the entry.
        await recordAudit(tx, principal, 'oauth_client.created', { type: 'oauth_client', id: row.id, label: input.client_name }, now, { redirect_uris: input.redirect_uris });
      });
      return { ...render(row), client_secret: secret };
    },

    /** The workspace's confidential clients (never their secrets), in the list envelope every door sends (`{data}`). */
    async list(principal: Principal, workspaceId: string): Promise<OAuthClientList> {
      assertWorkspaceAccess(principal, workspaceId, 'oauth_clients.manage');
      return { data: (await listClients(db, workspaceId)).map(render) };
    },

    async get(principal: Principal, workspaceId: string, clientId: string): Promise<OAuthClient> {
      return render(await own(principal, workspaceId, clientId));
    },

    /** Updates the name or the callbacks (spec 5.5: set the assistant builder's real callback). */
    async update(principal: Principal, workspaceId: string, clientId: string, input: UpdateOAuthClientInput): Promise<OAuthClient> {
      const row = await own(principal, workspaceId, clientId);
      const metadata = {
        ...row.metadata,
        ...(input.client_name === undefined ? {} : { client_name: input.client_name }),
        ...(input.redirect_uris === undefined ? {} : { redirect_uris: input.redirect_uris }),
      };
      const updated = { ...row, metadata, updatedAt: clock.now() };
      await db.transaction().execute(async (tx) => {
        await upsertClient(tx, updated);
        await recordAudit(tx, principal, 'oauth_client.updated', { type: 'oauth_client', id: clientId, label: String(metadata.client_name ?? clientId) }, updated.updatedAt, {
          changes: Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)),
        });
      });
      return render(updated);
    },

    /** Deletes the client and everything issued to it: grants, codes and tokens stop working at once. */
    async remove(principal: Principal, workspaceId: string, clientId: string): Promise<void> {
      const row = await own(principal, workspaceId, clientId);
      await db.transaction().execute(async (tx) => {
        await deleteClient(tx, clientId);
        await destroyIssuedFor(tx, { clientId });
        await recordAudit(tx, principal, 'oauth_client.deleted', { type: 'oauth_client', id: clientId, label: String(row.metadata.client_name ?? clientId) }, clock.now());
      });
    },
  };
}
