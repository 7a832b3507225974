import type { Kysely } from 'kysely';
import { findBrand } from '../../../db/repositories/brands.repo.js';
import {
  type ConnectionRow,
  findConnection,
  insertConnection,
  listConnections,
  transitionConnection,
} from '../../../db/repositories/connections.repo.js';
import type { Database } from '../../../db/schema.js';
import { brandNotFound } from '../brands/brands.service.js';
import { type Clock, toIso } from '../clock.js';
import { ServiceError } from '../errors.js';
import { newId } from '../ids.js';
import type { MetersService } from '../meters/meters.service.js';
import { brandScope, seesBrand } from '../permissions/authorize.js';
import type { Principal } from '../principal.js';
import { assertWorkspaceAccess } from '../workspaces/access.js';
import { type AuditTarget, recordAudit } from '../audit/record.js';
import type { Connection, ConnectionList, ConnectionListQuery, CreateSandboxConnectionInput } from './connections.schema.js';

export function renderConnection(row: ConnectionRow): Connection {
  return {
    id: row.id,
    brand_id: row.brandId,
    platform_slug: row.platformSlug as Connection['platform_slug'],
    mode: row.mode as Connection['mode'],
    name: row.name,
    status: row.status as Connection['status'],
    status_reason: row.statusReason,
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
  };
}

function connectionNotFound(id: string): ServiceError {
  return new ServiceError('not_found', `Connection ${id} was not found in this workspace.`);
}

export type ConnectionsService = ReturnType<typeof createConnectionsService>;

/** A connection as the audit log names it: its network and its name. */
export function connectionTarget(row: Pick<ConnectionRow, 'id' | 'platformSlug' | 'name'>): AuditTarget {
  return { type: 'connection', id: row.id, label: `${row.platformSlug}: ${row.name}` };
}

export function createConnectionsService(deps: { db: Kysely<Database>; clock: Clock; meters: MetersService }) {
  const { db, clock, meters } = deps;

  return {
    /**
     * Creates a sandbox connection on a brand, counted on the `connections` stock meter.
     * @throws ServiceError `not_found` (brand), `limit_reached`.
     */
    async createSandbox(principal: Principal, workspaceId: string, brandId: string, input: CreateSandboxConnectionInput): Promise<Connection> {
      assertWorkspaceAccess(principal, workspaceId, 'connections.manage');
      if (!seesBrand(principal, brandId)) throw brandNotFound(brandId);
      const now = clock.now();
      const row: ConnectionRow = {
        id: newId('conn_'),
        workspaceId,
        brandId,
        platformSlug: input.platform_slug,
        mode: 'sandbox',
        name: input.name,
        status: 'active',
        statusReason: null,
        createdAt: now,
        updatedAt: now,
      };
      await db.transaction().execute(async (tx) => {
        if (!(await findBrand(tx, workspaceId, brandId))) throw brandNotFound(brandId);
        await meters.consume(tx, workspaceId, [{ meter: 'connections', amount: 1 }]);
        await insertConnection(tx, row);
        await recordAudit(tx, principal, 'connection.created', connectionTarget(row), now, { brand_id: brandId, platform: row.platformSlug, mode: 'sandbox' });
      });
      return renderConnection(row);
    },

    /** The workspace's connections matching `query`, in the list envelope every door sends (`{data}`). */
    async list(principal: Principal, workspaceId: string, query: ConnectionListQuery): Promise<ConnectionList> {
      assertWorkspaceAccess(principal, workspaceId, 'connections.read');
      const rows = await listConnections(db, workspaceId, { brandId: query.brand_id, brandIds: brandScope(principal), platformSlug: query.platform_slug, status: query.status });
      return { data: rows.map(renderConnection) };
    },

    /** @throws ServiceError `not_found`. */
    async get(principal: Principal, workspaceId: string, connectionId: string): Promise<Connection> {
      assertWorkspaceAccess(principal, workspaceId, 'connections.read');
      const row = await findConnection(db, workspaceId, connectionId);
      if (!row || !seesBrand(principal, row.brandId)) throw connectionNotFound(connectionId);
      return renderConnection(row);
    },

    /**
     * Reconnects an expired sandbox connection: it becomes active again with no network to ask, as a live one
     * does after its owner authorises it again. It kept its slot while expired, so nothing is charged. An active
     * sandbox connection is returned unchanged.
     * @throws ServiceError `not_found`, `validation_failed` (a live connection, which reconnects through its
     *   network, or an inactive one, which was given up).
     */
    async reconnectSandbox(principal: Principal, workspaceId: string, connectionId: string): Promise<Connection> {
      assertWorkspaceAccess(principal, workspaceId, 'connections.manage');
      const now = clock.now();
      return db.transaction().execute(async (tx) => {
        const row = await findConnection(tx, workspaceId, connectionId);
        if (!row || !seesBrand(principal, row.brandId)) throw connectionNotFound(connectionId);
        if (row.mode !== 'sandbox') throw new ServiceError('validation_failed', 'connection: a live connection reconnects through its network', { fields: [{ path: 'connection', message: 'is live' }] });
        if (row.status === 'inactive') throw new ServiceError('validation_failed', 'connection: it was deactivated; add a new connection instead', { fields: [{ path: 'connection', message: 'is inactive' }] });
        if (await transitionConnection(tx, connectionId, ['expired'], 'active', null, now)) {
          await recordAudit(tx, principal, 'connection.reconnected', connectionTarget(row), now);
        }
        return renderConnection((await findConnection(tx, workspaceId, connectionId)) ?? row);
      });
    },

    /**
     * Deactivates a connection, freeing its slot on the `connections` meter (spec 7.3 `desativar_outra`).
     * Deactivating an inactive connection changes nothing.
     * @throws ServiceError `not_found`.
     */
    async deactivate(principal: Principal, workspaceId: string, connectionId: string): Promise<Connection> {
      assertWorkspaceAccess(principal, workspaceId, 'connections.manage');
      const now = clock.now();
      return db.transaction().execute(async (tx) => {
        const row = await findConnection(tx, workspaceId, connectionId);
        if (!row || !seesBrand(principal, row.brandId)) throw connectionNotFound(connectionId);
        if (await transitionConnection(tx, connectionId, ['active', 'expired'], 'inactive', 'deactivated', now)) {
          await meters.release(tx, workspaceId, 'connections', 1);
          await recordAudit(tx, principal, 'connection.deactivated', connectionTarget(row), now);
        }
        return renderConnection((await findConnection(tx, workspaceId, connectionId)) ?? row);
      });
    },
  };
}
