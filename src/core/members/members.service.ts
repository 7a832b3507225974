import type { Kysely } from 'kysely';
import { addMembership, countOwners, deleteMembership, findMember, listMembers, type MemberRow, updateMembership } from '../../../db/repositories/members.repo.js';
import { destroyIssuedFor } from '../../../db/repositories/oauth.repo.js';
import { deleteGrantAccessOfApprover } from '../../../db/repositories/oauth-grant-access.repo.js';
import { findUserByEmail } from '../../../db/repositories/users.repo.js';
import { lockWorkspace } from '../../../db/repositories/workspaces.repo.js';
import type { Database } from '../../../db/schema.js';
import { roleOf } from '../api-keys/api-keys.service.js';
import { recordAudit } from '../audit/record.js';
import { type Clock, toIso } from '../clock.js';
import { ServiceError } from '../errors.js';
import { newId } from '../ids.js';
import { accountIdFor } from '../oauth-clients/oauth-clients.service.js';
import { authorize } from '../permissions/authorize.js';
import type { Principal } from '../principal.js';
import { assertBrandsExist, assertMayGrant, distinctBrands } from './grants.js';
import type { AddMemberInput, Member, MemberList, UpdateMemberInput } from './members.schema.js';

export function renderMember(row: MemberRow): Member {
  return {
    id: row.id,
    user_id: row.userId,
    email: row.email,
    name: row.name,
    role: roleOf(row.role),
    brand_ids: row.brandIds,
    created_at: toIso(row.createdAt),
    updated_at: toIso(row.updatedAt),
  };
}

const target = (m: { id: string; email: string }) => ({ type: 'member', id: m.id, label: m.email });

function memberNotFound(memberId: string): ServiceError {
  return new ServiceError('not_found', `Member ${memberId} was not found in this workspace.`);
}

/**
 * Refuses a change that takes the workspace's last owner away. Called under the workspace lock, so two
 * demotions or removals of the last two owners run one after the other and the second sees the first.
 */
async function assertAnotherOwner(tx: Kysely<Database>, workspaceId: string): Promise<void> {
  if ((await countOwners(tx, workspaceId)) <= 1) {
    throw new ServiceError('last_owner', 'This is the last owner of the workspace: make another member owner first.');
  }
}

export type MembersService = ReturnType<typeof createMembersService>;

/**
 * Members of a workspace: people with a role and, optionally, a list of brands. Every change takes the workspace
 * lock and is audited in its transaction; a workspace that has an owner always keeps one.
 */
export function createMembersService(deps: { db: Kysely<Database>; clock: Clock }) {
  const { db, clock } = deps;

  /** Runs `change` under the workspace lock; the member must exist. */
  async function withMember<T>(workspaceId: string, memberId: string, change: (tx: Kysely<Database>, member: MemberRow) => Promise<T>): Promise<T> {
    return db.transaction().execute(async (tx) => {
      await lockWorkspace(tx, workspaceId);
      const member = await findMember(tx, workspaceId, memberId);
      if (!member) throw memberNotFound(memberId);
      return change(tx, member);
    });
  }

  return {
    /**
     * The workspace's members, oldest first.
     * @throws ServiceError `forbidden` without `members.read`.
     */
    async list(principal: Principal, workspaceId: string): Promise<MemberList> {
      authorize(principal, workspaceId, 'members.read');
      return { data: (await listMembers(db, workspaceId)).map(renderMember) };
    },

    /**
     * Adds a person who already has an account. Anyone else is invited (`invitations`).
     * @throws ServiceError `forbidden` (role, brands or owners above the caller's), `not_found` for an address with
     *   no account, `validation_failed` naming `email` (already a member) or `brand_ids[i]` (unknown brand).
     */
    async add(principal: Principal, workspaceId: string, input: AddMemberInput): Promise<Member> {
      authorize(principal, workspaceId, 'members.manage');
      const brandIds = distinctBrands(input.brand_ids);
      assertMayGrant(principal, workspaceId, input.role, brandIds);
      const user = await findUserByEmail(db, input.email);
      if (!user) {
        throw new ServiceError('not_found', `No account uses ${input.email}. Invite them instead: POST /api/v1/workspaces/${workspaceId}/invitations.`);
      }
      return db.transaction().execute(async (tx) => {
        await lockWorkspace(tx, workspaceId);
        await assertBrandsExist(tx, workspaceId, brandIds);
        const now = clock.now();
        const id = newId('mem_');
        if (!(await addMembership(tx, { id, workspaceId, userId: user.id, role: input.role, brandIds, now }))) {
          throw new ServiceError('validation_failed', `email: ${user.email} is already a member of this workspace`, { fields: [{ path: 'email', message: 'is already a member of this workspace' }] });
        }
        const row: MemberRow = { id, workspaceId, userId: user.id, email: user.email, name: user.name, role: input.role, brandIds, createdAt: now, updatedAt: now };
        await recordAudit(tx, principal, 'member.added', target(row), now, { role: input.role, brand_ids: brandIds });
        return renderMember(row);
      });
    },

    /**
     * Changes a member's role and/or brands. Making, demoting or changing an owner needs `members.manage_owners`;
     * demoting the last owner is refused.
     * @throws ServiceError `not_found`, `forbidden`, `validation_failed` (`brand_ids[i]`), `last_owner`.
     */
    async update(principal: Principal, workspaceId: string, memberId: string, input: UpdateMemberInput): Promise<Member> {
      authorize(principal, workspaceId, 'members.manage');
      return withMember(workspaceId, memberId, async (tx, member) => {
        const role = input.role ?? roleOf(member.role);
        const brandIds = input.brand_ids === undefined ? member.brandIds : distinctBrands(input.brand_ids);
        if (member.role === 'owner') authorize(principal, workspaceId, 'members.manage_owners');
        assertMayGrant(principal, workspaceId, role, brandIds);
        await assertBrandsExist(tx, workspaceId, input.brand_ids === undefined ? null : brandIds);
        if (member.role === 'owner' && role !== 'owner') await assertAnotherOwner(tx, workspaceId);
        const now = clock.now();
        await updateMembership(tx, workspaceId, memberId, { role, brandIds, now });
        await recordAudit(tx, principal, 'member.role_changed', target(member), now, {
          from: { role: member.role, brand_ids: member.brandIds },
          to: { role, brand_ids: brandIds },
        });
        return renderMember({ ...member, role, brandIds, updatedAt: now });
      });
    },

    /**
     * Removes a member and ends their sessions in this workspace (their other workspaces are untouched).
     * Removing an owner needs `members.manage_owners`; the last owner cannot be removed.
     * @throws ServiceError `not_found`, `forbidden`, `last_owner`.
     */
    async remove(principal: Principal, workspaceId: string, memberId: string): Promise<void> {
      authorize(principal, workspaceId, 'members.manage');
      await withMember(workspaceId, memberId, async (tx, member) => {
        if (member.role === 'owner') {
          authorize(principal, workspaceId, 'members.manage_owners');
          await assertAnotherOwner(tx, workspaceId);
        }
        await deleteMembership(tx, workspaceId, memberId, member.userId);
        // The apps the person approved here go with them: their tokens would be refused at the next call anyway
        // (a grant acts with its approver's membership), but the apps would stay listed as connected.
        await destroyIssuedFor(tx, { accountId: accountIdFor(workspaceId, { kind: 'user', userId: member.userId }) });
        await deleteGrantAccessOfApprover(tx, workspaceId, 'user', member.userId);
        await recordAudit(tx, principal, 'member.removed', target(member), clock.now(), { role: member.role });
      });
    },
  };
}
