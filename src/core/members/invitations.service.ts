import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import {
  claimInvitation,
  findInvitation,
  findInvitationByDigest,
  insertInvitation,
  type InvitationRow,
  listInvitations,
  revokeInvitation,
  revokeOpenInvitationsOf,
} from '../../../db/repositories/invitations.repo.js';
import { addMembership, insertUserIfNew, listMembers } from '../../../db/repositories/members.repo.js';
import { findUser, findUserByEmail, normalizeEmail } from '../../../db/repositories/users.repo.js';
import { findWorkspace, lockWorkspace } from '../../../db/repositories/workspaces.repo.js';
import type { Database } from '../../../db/schema.js';
import { hashPassword } from '../accounts/password.js';
import { roleOf } from '../api-keys/api-keys.service.js';
import { recordAudit } from '../audit/record.js';
import { type Clock, toIso } from '../clock.js';
import { ServiceError } from '../errors.js';
import { newId, sha256Hex } from '../ids.js';
import type { Mailer } from '../mail/mailer.js';
import { authorize } from '../permissions/authorize.js';
import type { Role } from '../permissions/roles.js';
import type { Origin, Principal } from '../principal.js';
import { assertBrandsExist, assertMayGrant, distinctBrands, makerOf } from './grants.js';
import type { AcceptAsNewPerson, CreatedInvitation, CreateInvitationInput, Invitation, InvitationList } from './members.schema.js';

export const INVITATION_DAYS = 7;
const DAY_MS = 86_400_000;

/** The path of the join page; the token is its last segment (base64url, so it is a plain path segment). */
export const JOIN_PATH = '/dashboard/join/';

function newToken(): string {
  return randomBytes(32).toString('base64url');
}

function statusOf(row: InvitationRow, now: number): Invitation['status'] {
  if (row.acceptedAt !== null) return 'accepted';
  if (row.revokedAt !== null) return 'revoked';
  return row.expiresAt <= now ? 'expired' : 'pending';
}

function render(row: InvitationRow, now: number): Invitation {
  return {
    id: row.id,
    email: row.email,
    role: roleOf(row.role),
    brand_ids: row.brandIds,
    status: statusOf(row, now),
    created_by: row.createdBy,
    created_at: toIso(row.createdAt),
    expires_at: toIso(row.expiresAt),
    accepted_at: row.acceptedAt === null ? null : toIso(row.acceptedAt),
  };
}

const target = (row: { id: string; email: string | null }) => ({ type: 'invitation', id: row.id, label: row.email });

/**
 * Creates, inside the caller's transaction, the open owner invitation of a fresh installation: no address (the
 * first person chooses theirs), role owner, every brand. Its token is returned once, to be printed beside the
 * first API key.
 */
export async function mintOwnerInvitation(tx: Kysely<Database>, workspaceId: string, now: number): Promise<{ id: string; token: string }> {
  const token = newToken();
  const id = newId('inv_');
  await insertInvitation(tx, {
    id,
    workspaceId,
    email: null,
    role: 'owner',
    brandIds: null,
    createdBy: null,
    createdAt: now,
    expiresAt: now + INVITATION_DAYS * DAY_MS,
    acceptedAt: null,
    acceptedBy: null,
    revokedAt: null,
    tokenDigest: sha256Hex(token),
  });
  await recordAudit(tx, { kind: 'system', workspaceId, label: 'first start' }, 'member.invited', target({ id, email: null }), now, { role: 'owner', brand_ids: null });
  return { id, token };
}

/** What the join page shows about a token. */
export type InvitationPreview =
  | {
      state: 'pending';
      invitationId: string;
      workspaceId: string;
      workspaceName: string;
      /** null: the person chooses their address (the first owner link). */
      email: string | null;
      role: Role;
      brandIds: string[] | null;
      expiresAt: number;
      /** Whether the invited address already has an account (then the person signs in first). */
      accountExists: boolean;
      /** The signed-in person looking at the link, if any, and whether the invitation is theirs to accept. */
      signedIn: { email: string; mayAccept: boolean } | null;
    }
  /** Unknown, accepted, revoked or expired: the link no longer works. */
  | { state: 'gone'; why: 'unknown' | 'accepted' | 'revoked' | 'expired' };

/** How an acceptance ended. */
export type Acceptance =
  | { ok: true; workspaceId: string; userId: string; memberId: string }
  | { ok: false; reason: 'gone' | 'email_mismatch' | 'account_exists' | 'already_member' | 'no_account' };

/** Thrown inside an acceptance's transaction to roll it back with a reason. */
class Refused extends Error {
  constructor(readonly reason: Extract<Acceptance, { ok: false }>['reason']) {
    super(reason);
  }
}

export type InvitationsService = ReturnType<typeof createInvitationsService>;

/**
 * Invitations to a workspace: a one-time token (only its SHA-256 digest stored) bound to an address, a role and
 * brands, valid 7 days by default. Accepting twice, even at once in two processes, makes one member: the
 * acceptance is a conditional update on `accepted_at is null`, and memberships are unique per person.
 */
export function createInvitationsService(deps: {
  db: Kysely<Database>;
  clock: Clock;
  baseUrl: string;
  mailer: Mailer | null;
  /** Told when the mail server refuses or fails an invitation (the inviter then gets the link to pass on). */
  onMailFailure?: (err: unknown, what: string) => void;
}) {
  const { db, clock } = deps;
  const acceptUrl = (token: string) => `${deps.baseUrl}${JOIN_PATH}${token}`;

  async function mail(row: InvitationRow, url: string): Promise<boolean> {
    if (deps.mailer === null || row.email === null) return false;
    const workspace = await findWorkspace(db, row.workspaceId);
    try {
      await deps.mailer.send({
        to: row.email,
        subject: `You are invited to ${workspace?.name ?? 'a workspace'} on Publisher`,
        text: `You are invited to join ${workspace?.name ?? 'a workspace'} as ${row.role}.\n\nOpen this link to accept (it works once, until ${toIso(row.expiresAt)}):\n${url}\n`,
      });
      return true;
    } catch (err) {
      deps.onMailFailure?.(err, 'invitation');
      // The inviter has the link in the answer either way; a mail server's failure does not undo the invitation.
      return false;
    }
  }

  /** Runs the acceptance in one transaction; a refusal rolls everything back (the invitation stays open). */
  async function accept(
    token: string,
    /** Who accepts; `create` makes their account, after the invitation is claimed. */
    person: (tx: Kysely<Database>, invitation: InvitationRow) => Promise<{ userId: string; email: string; create?: () => Promise<void> }>,
    origin: Pick<Origin, 'ip' | 'userAgent'>,
  ): Promise<Acceptance> {
    const invitation = await findInvitationByDigest(db, sha256Hex(token));
    if (!invitation) return { ok: false, reason: 'gone' };
    try {
      return await db.transaction().execute(async (tx) => {
        const now = clock.now();
        const { userId, email, create } = await person(tx, invitation);
        // The claim first: of two acceptances at once, the second waits on this row and then finds it taken.
        if (!(await claimInvitation(tx, invitation.id, userId, now))) throw new Refused('gone');
        await create?.();
        const memberId = newId('mem_');
        const role = roleOf(invitation.role);
        if (!(await addMembership(tx, { id: memberId, workspaceId: invitation.workspaceId, userId, role, brandIds: invitation.brandIds, now }))) throw new Refused('already_member');
        // The person is the actor: they have no session yet (it opens after this commits).
        const actor: Principal = {
          kind: 'user',
          workspaceId: invitation.workspaceId,
          userId,
          sessionId: '',
          keyId: null,
          role,
          brandIds: invitation.brandIds,
          origin: { ip: origin.ip, userAgent: origin.userAgent, requestId: null, via: 'dashboard' },
        };
        await recordAudit(tx, actor, 'member.joined', { type: 'member', id: memberId, label: email }, now, { invitation_id: invitation.id, role, brand_ids: invitation.brandIds });
        return { ok: true as const, workspaceId: invitation.workspaceId, userId, memberId };
      });
    } catch (err) {
      if (err instanceof Refused) return { ok: false, reason: err.reason };
      throw err;
    }
  }

  return {
    /**
     * The workspace's invitations, newest first, with their status; never their tokens.
     * @throws ServiceError `forbidden` without `members.read`.
     */
    async list(principal: Principal, workspaceId: string): Promise<InvitationList> {
      authorize(principal, workspaceId, 'members.read');
      const now = clock.now();
      return { data: (await listInvitations(db, workspaceId)).map((r) => render(r, now)) };
    },

    /**
     * Invites an address with a role and brands (never above the caller's). A pending invitation of the same
     * address is replaced. The token and link are returned here only; with a mailer the link is also mailed.
     * @throws ServiceError `forbidden`; `validation_failed` naming `email` (already a member) or `brand_ids[i]`.
     */
    async invite(principal: Principal, workspaceId: string, input: CreateInvitationInput): Promise<CreatedInvitation> {
      authorize(principal, workspaceId, 'members.manage');
      const brandIds = distinctBrands(input.brand_ids);
      assertMayGrant(principal, workspaceId, input.role, brandIds);
      const email = normalizeEmail(input.email);
      const token = newToken();
      const row = await db.transaction().execute(async (tx) => {
        await lockWorkspace(tx, workspaceId);
        await assertBrandsExist(tx, workspaceId, brandIds);
        if ((await listMembers(tx, workspaceId)).some((m) => m.email === email)) {
          throw new ServiceError('validation_failed', `email: ${email} is already a member of this workspace`, { fields: [{ path: 'email', message: 'is already a member of this workspace' }] });
        }
        const now = clock.now();
        const replaced = await revokeOpenInvitationsOf(tx, workspaceId, email, now);
        const created: InvitationRow = {
          id: newId('inv_'),
          workspaceId,
          email,
          role: input.role,
          brandIds,
          createdBy: makerOf(principal),
          createdAt: now,
          expiresAt: now + (input.expires_in_days ?? INVITATION_DAYS) * DAY_MS,
          acceptedAt: null,
          acceptedBy: null,
          revokedAt: null,
        };
        await insertInvitation(tx, { ...created, tokenDigest: sha256Hex(token) });
        await recordAudit(tx, principal, 'member.invited', target(created), now, { role: input.role, brand_ids: brandIds, replaced });
        return created;
      });
      const url = acceptUrl(token);
      return { ...render(row, clock.now()), token, accept_url: url, mailed: await mail(row, url) };
    },

    /**
     * Revokes a pending invitation; revoking a revoked one is a no-op. An owner invitation needs
     * `members.manage_owners`.
     * @throws ServiceError `not_found` (unknown, or already accepted), `forbidden`.
     */
    async revoke(principal: Principal, workspaceId: string, invitationId: string): Promise<void> {
      authorize(principal, workspaceId, 'members.manage');
      await db.transaction().execute(async (tx) => {
        await lockWorkspace(tx, workspaceId);
        const row = await findInvitation(tx, workspaceId, invitationId);
        if (!row) throw new ServiceError('not_found', `Invitation ${invitationId} was not found in this workspace.`);
        if (row.role === 'owner') authorize(principal, workspaceId, 'members.manage_owners');
        if (row.acceptedAt !== null) throw new ServiceError('not_found', `Invitation ${invitationId} was already accepted; remove the member instead.`);
        const now = clock.now();
        if (await revokeInvitation(tx, workspaceId, invitationId, now)) await recordAudit(tx, principal, 'member.invitation_revoked', target(row), now, { role: row.role });
      });
    },

    /**
     * What a token invites to, for the join page, as seen by the signed-in person `userId` (if any); a token that
     * no longer works says why.
     */
    async preview(token: string, userId: string | null = null): Promise<InvitationPreview> {
      const row = await findInvitationByDigest(db, sha256Hex(token));
      if (!row) return { state: 'gone', why: 'unknown' };
      const status = statusOf(row, clock.now());
      if (status !== 'pending') return { state: 'gone', why: status };
      const workspace = await findWorkspace(db, row.workspaceId);
      const user = userId === null ? undefined : await findUser(db, userId);
      return {
        state: 'pending',
        invitationId: row.id,
        workspaceId: row.workspaceId,
        workspaceName: workspace?.name ?? row.workspaceId,
        email: row.email,
        role: roleOf(row.role),
        brandIds: row.brandIds,
        expiresAt: row.expiresAt,
        accountExists: row.email !== null && (await findUserByEmail(db, row.email)) !== undefined,
        signedIn: user ? { email: user.email, mayAccept: row.email === null || row.email === user.email } : null,
      };
    },

    /**
     * Accepts as a person who has just made their account here: the account (password hashed with scrypt), the
     * membership and the invitation's acceptance commit together. An address that already has an account signs
     * in first (`account_exists`).
     */
    async acceptAsNewPerson(token: string, input: AcceptAsNewPerson, origin: Pick<Origin, 'ip' | 'userAgent'>): Promise<Acceptance> {
      const passwordHash = await hashPassword(input.password);
      return accept(
        token,
        async (tx, invitation) => {
          const email = invitation.email ?? (input.email === undefined ? null : normalizeEmail(input.email));
          if (email === null) throw new Refused('email_mismatch');
          const userId = newId('usr_');
          const name = input.name === undefined || input.name === '' ? null : input.name;
          const create = async () => {
            if (!(await insertUserIfNew(tx, { id: userId, email, name, passwordHash, now: clock.now() }))) throw new Refused('account_exists');
          };
          return { userId, email, create };
        },
        origin,
      );
    },

    /** Accepts as a signed-in person; their address must be the invited one (any address for an open invitation). */
    async acceptAsUser(token: string, userId: string, origin: Pick<Origin, 'ip' | 'userAgent'>): Promise<Acceptance> {
      return accept(
        token,
        async (tx, invitation) => {
          const user = await findUser(tx, userId);
          if (!user) throw new Refused('no_account');
          if (invitation.email !== null && invitation.email !== user.email) throw new Refused('email_mismatch');
          return { userId, email: user.email };
        },
        origin,
      );
    },
  };
}
