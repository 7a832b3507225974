import type { Kysely } from 'kysely';
import { destroyIssuedFor } from '../../../db/repositories/oauth.repo.js';
import { findRegisteredClients, type IssuedRow, listIssuedToWorkspace } from '../../../db/repositories/oauth-grants.repo.js';
import { type GrantAccessRow, listGrantAccessOfWorkspace } from '../../../db/repositories/oauth-grant-access.repo.js';
import type { Database } from '../../../db/schema.js';
import { type Clock, toIso } from '../clock.js';
import { ServiceError } from '../errors.js';
import type { Principal } from '../principal.js';
import { assertWorkspaceAccess } from '../workspaces/access.js';
import { recordAudit } from '../audit/record.js';
import type { ConnectedApp, ConnectedAppList } from './connected-apps.schema.js';

/**
 * A `client_id` that names a metadata document (OAuth Client ID Metadata Documents): an https URL. Registered
 * clients (dynamic registration, or made by a workspace) have `mcp_client_` ids.
 */
export function isMetadataDocumentClientId(clientId: string): boolean {
  return clientId.startsWith('https://');
}

function hostOf(uri: unknown): string {
  try {
    return typeof uri === 'string' ? new URL(uri).host : '';
  } catch {
    return '';
  }
}

/** What one stored grant or token says: when it was issued and, for a grant, the name its client had then. */
function parsePayload(row: IssuedRow): { iatMs: number; clientName: string | undefined } {
  const payload = JSON.parse(row.payload) as { iat?: unknown; clientName?: unknown };
  return {
    iatMs: typeof payload.iat === 'number' ? payload.iat * 1000 : 0,
    clientName: typeof payload.clientName === 'string' && payload.clientName.trim() !== '' ? payload.clientName.trim().slice(0, 100) : undefined,
  };
}

/**
 * Newest first, one per approver, role and brands: approving the same app again in another browser makes another
 * grant with the same meaning, which would only repeat a line.
 */
function distinctApprovals(rows: GrantAccessRow[]): GrantAccessRow[] {
  const seen = new Set<string>();
  return [...rows]
    .sort((a, b) => b.updatedAt - a.updatedAt || a.grantId.localeCompare(b.grantId))
    .filter((a) => {
      const key = JSON.stringify([a.approverType, a.approverId, a.role, a.brandIds]);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
}

export type ConnectedAppsService = ReturnType<typeof createConnectedAppsService>;

export function createConnectedAppsService(deps: { db: Kysely<Database>; clock: Clock }) {
  const { db, clock } = deps;

  return {
    /**
     * Every client holding a live grant or token of the workspace, whatever way it came (dynamic registration,
     * a client the workspace made, a metadata document), most recently authorized first. Metadata-document
     * clients are in no table: they are found through their grants, and named by what their document said when
     * the grant was saved.
     * Each app lists what its approvals give it (role, brands, approver), one line per distinct approval.
     * @throws ServiceError `forbidden` for another workspace, or without `oauth_clients.manage`.
     */
    async list(principal: Principal, workspaceId: string): Promise<ConnectedAppList> {
      assertWorkspaceAccess(principal, workspaceId, 'oauth_clients.manage');
      const rows = await listIssuedToWorkspace(db, workspaceId, clock.now());
      const byClient = new Map<string, { first: number; last: number; lastNamedAt: number; name: string | undefined; tokens: number }>();
      for (const row of rows) {
        const { iatMs, clientName } = parsePayload(row);
        const app = byClient.get(row.clientId) ?? { first: Infinity, last: 0, lastNamedAt: -1, name: undefined, tokens: 0 };
        if (row.model === 'AccessToken') app.tokens += 1;
        else app.first = Math.min(app.first, iatMs);
        app.last = Math.max(app.last, iatMs);
        if (clientName !== undefined && iatMs > app.lastNamedAt) [app.name, app.lastNamedAt] = [clientName, iatMs];
        byClient.set(row.clientId, app);
      }
      const approvals = new Map<string, GrantAccessRow[]>();
      for (const row of await listGrantAccessOfWorkspace(db, workspaceId, clock.now())) approvals.set(row.clientId, [...(approvals.get(row.clientId) ?? []), row]);
      const registered = new Map((await findRegisteredClients(db, [...byClient.keys()].filter((id) => !isMetadataDocumentClientId(id)))).map((c) => [c.id, c]));
      const data: ConnectedApp[] = [...byClient].map(([clientId, app]) => {
        const document = isMetadataDocumentClientId(clientId);
        const metadata = registered.get(clientId)?.metadata ?? {};
        const host = document ? hostOf(clientId) : hostOf((metadata.redirect_uris as unknown[] | undefined)?.[0]);
        const registeredName = typeof metadata.client_name === 'string' && metadata.client_name !== '' ? metadata.client_name : undefined;
        return {
          client_id: clientId,
          client_name: (document ? app.name : registeredName) ?? (host || clientId),
          host,
          kind: document ? 'metadata_document' : 'registered',
          // A token whose grant row is gone cannot be used; its own time stands in for the approval's.
          connected_at: toIso(Number.isFinite(app.first) ? app.first : app.last),
          last_authorized_at: toIso(app.last),
          active_tokens: app.tokens,
          approvals: distinctApprovals(approvals.get(clientId) ?? []).map((a) => ({
            role: a.role,
            brand_ids: a.brandIds,
            approved_by: { type: a.approverType, id: a.approverId, label: a.approverLabel },
            approved_at: toIso(a.updatedAt),
          })),
        };
      });
      data.sort((a, b) => b.last_authorized_at.localeCompare(a.last_authorized_at) || a.client_id.localeCompare(b.client_id));
      return { data };
    },

    /**
     * Disconnects one app from the workspace: every grant, code and token it holds for any of the workspace's
     * keys is deleted in one statement (the path that revoking a key or deleting a client takes), so its next
     * call with a token it already has is refused. Other workspaces' approvals of the same client stay.
     * @throws ServiceError `forbidden` for another workspace or without `oauth_clients.manage`; `not_found` when
     *   the app holds nothing here.
     */
    async revoke(principal: Principal, workspaceId: string, clientId: string): Promise<void> {
      assertWorkspaceAccess(principal, workspaceId, 'oauth_clients.manage');
      const now = clock.now();
      const rows = await listIssuedToWorkspace(db, workspaceId, now);
      const held = rows.filter((r) => r.clientId === clientId);
      if (held.length === 0) throw new ServiceError('not_found', 'This app is not connected to the workspace.');
      const named = held.map((r) => parsePayload(r).clientName).find((n) => n !== undefined);
      const registered = isMetadataDocumentClientId(clientId) ? undefined : (await findRegisteredClients(db, [clientId]))[0]?.metadata.client_name;
      const label = typeof registered === 'string' && registered !== '' ? registered : (named ?? clientId);
      await db.transaction().execute(async (tx) => {
        await destroyIssuedFor(tx, { accountPrefix: `${workspaceId}:`, clientId });
        await recordAudit(tx, principal, 'connected_app.revoked', { type: 'connected_app', id: clientId, label }, now);
      });
    },
  };
}
