import { cancelBrandContents } from '../../../db/repositories/contents.repo.js';
import { deleteScheduledJobs } from '../../../db/repositories/jobs.repo.js';
import type { Kysely } from 'kysely';
import { type BrandRow, deleteBrand, findBrand, insertBrand, listBrands, renameBrand } from '../../../db/repositories/brands.repo.js';
import { listConnections, transitionConnection } from '../../../db/repositories/connections.repo.js';
import type { Database } from '../../../db/schema.js';
import { type Clock, toIso } from '../clock.js';
import { ServiceError } from '../errors.js';
import { newId } from '../ids.js';
import type { MetersService } from '../meters/meters.service.js';
import type { Principal } from '../principal.js';
import { assertWorkspaceAccess } from '../workspaces/access.js';
import type { Brand, BrandInput, BrandList, BrandUpdateInput } from './brands.schema.js';
import { APPROVAL_ROLES, type ApprovalRole } from '../approvals/approval-roles.js';
import { setBrandApprovalRoles } from '../../../db/repositories/approvals.repo.js';
import { recordAudit } from '../audit/record.js';
import { authorize } from '../permissions/authorize.js';

export function renderBrand(row: BrandRow): Brand {
  return { id: row.id, name: row.name, approval_roles: approvalRolesOf(row), created_at: toIso(row.createdAt), updated_at: toIso(row.updatedAt) };
}

function approvalRolesOf(row: BrandRow): Brand['approval_roles'] {
  if (row.approvalRoles === null || row.approvalRoles === undefined) return null;
  const parsed: unknown = JSON.parse(row.approvalRoles);
  return Array.isArray(parsed) ? parsed.filter((r): r is ApprovalRole => (APPROVAL_ROLES as readonly unknown[]).includes(r)) : null;
}

export function brandNotFound(id: string): ServiceError {
  return new ServiceError('not_found', `Brand ${id} was not found in this workspace.`);
}

export type BrandsService = ReturnType<typeof createBrandsService>;

export function createBrandsService(deps: { db: Kysely<Database>; clock: Clock; meters: MetersService }) {
  const { db, clock, meters } = deps;

  async function get(principal: Principal, workspaceId: string, brandId: string): Promise<Brand> {
    assertWorkspaceAccess(principal, workspaceId);
    const row = await findBrand(db, workspaceId, brandId);
    if (!row) throw brandNotFound(brandId);
    return renderBrand(row);
  }

  return {
    /**
     * Creates a brand, counted on the `brands` stock meter.
     * @throws ServiceError `limit_reached` (resolve `desativar_outra`).
     */
    async create(principal: Principal, workspaceId: string, input: BrandInput): Promise<Brand> {
      assertWorkspaceAccess(principal, workspaceId);
      const now = clock.now();
      const row: BrandRow = { id: newId('brand_'), workspaceId, name: input.name, createdAt: now, updatedAt: now };
      await db.transaction().execute(async (tx) => {
        await meters.consume(tx, workspaceId, [{ meter: 'brands', amount: 1 }]);
        await insertBrand(tx, row);
      });
      return renderBrand(row);
    },

    /** Every brand of the workspace, in the list envelope every door sends (`{data}`). */
    async list(principal: Principal, workspaceId: string): Promise<BrandList> {
      assertWorkspaceAccess(principal, workspaceId);
      return { data: (await listBrands(db, workspaceId)).map(renderBrand) };
    },

    /** @throws ServiceError `not_found`. */
    get,

    /**
     * Renames a brand and/or sets its approval roles (README, Approvals; null: the workspace's default).
     * @throws ServiceError `not_found`, `forbidden` (approval roles need `brands.manage`).
     */
    async update(principal: Principal, workspaceId: string, brandId: string, input: BrandUpdateInput): Promise<Brand> {
      await get(principal, workspaceId, brandId);
      const now = clock.now();
      if (input.name !== undefined) await renameBrand(db, workspaceId, brandId, input.name, now);
      const roles = input.approval_roles;
      if (roles !== undefined) {
        authorize(principal, workspaceId, 'brands.manage');
        await db.transaction().execute(async (tx) => {
          await setBrandApprovalRoles(tx, workspaceId, brandId, roles, now);
          await recordAudit(tx, principal, 'brand.approval_roles_changed', { type: 'brand', id: brandId }, now, { approval_roles: roles });
        });
      }
      return get(principal, workspaceId, brandId);
    },

    /**
     * Deletes a brand and deactivates its connections, freeing their slots; its contents remain readable, and its
     * drafts and scheduled contents are canceled in the same transaction (a deleted brand never publishes).
     * @throws ServiceError `not_found`.
     */
    async remove(principal: Principal, workspaceId: string, brandId: string): Promise<void> {
      assertWorkspaceAccess(principal, workspaceId);
      const now = clock.now();
      await db.transaction().execute(async (tx) => {
        if (!(await deleteBrand(tx, workspaceId, brandId, now))) throw brandNotFound(brandId);
        await meters.release(tx, workspaceId, 'brands', 1);
        for (const contentId of await cancelBrandContents(tx, workspaceId, brandId, now)) await deleteScheduledJobs(tx, contentId);
        for (const conn of await listConnections(tx, workspaceId, { brandId, statuses: ['active', 'expired'] })) {
          if (await transitionConnection(tx, conn.id, ['active', 'expired'], 'inactive', 'brand_deleted', now)) {
            await meters.release(tx, workspaceId, 'connections', 1);
          }
        }
      });
    },
  };
}
