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
import { seesBrand } from '../permissions/authorize.js';
import type { Permission } from '../permissions/roles.js';
import type { Principal } from '../principal.js';
import { assertWorkspaceAccess } from '../workspaces/access.js';
import type { Brand, BrandInput, BrandList, BrandUpdateInput } from './brands.schema.js';
import { APPROVAL_ROLES, type ApprovalRole } from '../approvals/approval-roles.js';
import { setBrandApprovalRoles } from '../../../db/repositories/approvals.repo.js';
import { recordAudit } from '../audit/record.js';

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

  async function get(principal: Principal, workspaceId: string, brandId: string, permission: Permission = 'brands.read'): Promise<Brand> {
    assertWorkspaceAccess(principal, workspaceId, permission);
    // A credential limited to other brands learns nothing of this one: the same 404 as a brand of another workspace.
    const row = seesBrand(principal, brandId) ? await findBrand(db, workspaceId, brandId) : undefined;
    if (!row) throw brandNotFound(brandId);
    return renderBrand(row);
  }

  return {
    /**
     * Creates a brand, counted on the `brands` stock meter.
     * @throws ServiceError `limit_reached` (resolve `desativar_outra`).
     */
    async create(principal: Principal, workspaceId: string, input: BrandInput): Promise<Brand> {
      assertWorkspaceAccess(principal, workspaceId, 'brands.manage');
      const now = clock.now();
      const row: BrandRow = { id: newId('brand_'), workspaceId, name: input.name, createdAt: now, updatedAt: now };
      await db.transaction().execute(async (tx) => {
        await meters.consume(tx, workspaceId, [{ meter: 'brands', amount: 1 }]);
        await insertBrand(tx, row);
        await recordAudit(tx, principal, 'brand.created', { type: 'brand', id: row.id, label: row.name }, now);
      });
      return renderBrand(row);
    },

    /** Every brand of the workspace, in the list envelope every door sends (`{data}`). */
    async list(principal: Principal, workspaceId: string): Promise<BrandList> {
      assertWorkspaceAccess(principal, workspaceId, 'brands.read');
      return { data: (await listBrands(db, workspaceId)).filter((b) => seesBrand(principal, b.id)).map(renderBrand) };
    },

    /** @throws ServiceError `not_found`. */
    get: (principal: Principal, workspaceId: string, brandId: string) => get(principal, workspaceId, brandId),

    /**
     * Renames a brand and/or sets its approval roles (README, Approvals; null: the workspace's default), both in one
     * transaction with their audit entries.
     * @throws ServiceError `not_found`, `forbidden` (`brands.manage`).
     */
    async update(principal: Principal, workspaceId: string, brandId: string, input: BrandUpdateInput): Promise<Brand> {
      const before = await get(principal, workspaceId, brandId, 'brands.manage');
      const now = clock.now();
      const roles = input.approval_roles;
      await db.transaction().execute(async (tx) => {
        if (input.name !== undefined) {
          await renameBrand(tx, workspaceId, brandId, input.name, now);
          await recordAudit(tx, principal, 'brand.renamed', { type: 'brand', id: brandId, label: input.name }, now, { from: before.name, to: input.name });
        }
        if (roles !== undefined) {
          await setBrandApprovalRoles(tx, workspaceId, brandId, roles, now);
          await recordAudit(tx, principal, 'brand.approval_roles_changed', { type: 'brand', id: brandId, label: before.name }, now, { approval_roles: roles });
        }
      });
      return get(principal, workspaceId, brandId);
    },

    /**
     * Deletes a brand and deactivates its connections, freeing their slots; its contents remain readable, and its
     * drafts and scheduled contents are canceled in the same transaction (a deleted brand never publishes).
     * @throws ServiceError `not_found`.
     */
    async remove(principal: Principal, workspaceId: string, brandId: string): Promise<void> {
      assertWorkspaceAccess(principal, workspaceId, 'brands.manage');
      const now = clock.now();
      await db.transaction().execute(async (tx) => {
        const brand = await findBrand(tx, workspaceId, brandId);
        if (!(await deleteBrand(tx, workspaceId, brandId, now))) throw brandNotFound(brandId);
        await recordAudit(tx, principal, 'brand.deleted', { type: 'brand', id: brandId, label: brand?.name ?? null }, now);
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
