import type { Kysely } from 'kysely';
import { claimMetaFlag } from '../../../db/repositories/service-meta.repo.js';
import { findWorkspace, insertWorkspace, listWorkspaces, lockWorkspace, setWorkspacePlan } from '../../../db/repositories/workspaces.repo.js';
import type { Database } from '../../../db/schema.js';
import { mintApiKey } from '../api-keys/api-keys.service.js';
import { mintOwnerInvitation } from '../members/invitations.service.js';
import { type Clock, toIso } from '../clock.js';
import { ServiceError } from '../errors.js';
import { newId } from '../ids.js';
import type { Principal } from '../principal.js';
import { assertWorkspaceAccess } from './access.js';
import { recordAudit } from '../audit/record.js';
import { whoAmI } from './whoami.js';
import type { CreateWorkspaceInput, Me, WorkspaceSummary } from './workspaces.schema.js';

export interface NewWorkspace {
  workspace_id: string;
  key_id: string;
  /** Plaintext of the first key; shown once. */
  api_key: string;
  /** On the first start only: the one-time token of the link that creates the owner's account; shown once. */
  owner_invitation_token?: string;
}

export type WorkspacesService = ReturnType<typeof createWorkspacesService>;

export function createWorkspacesService(deps: { db: Kysely<Database>; clock: Clock; planNames: readonly string[] }) {
  const { db, clock } = deps;

  async function createIn(tx: Kysely<Database>, name: string): Promise<NewWorkspace> {
    const workspaceId = newId('ws_');
    const now = clock.now();
    await insertWorkspace(tx, { id: workspaceId, name, createdAt: now });
    const { row, apiKey } = await mintApiKey(tx, workspaceId, 'first key', now);
    return { workspace_id: workspaceId, key_id: row.id, api_key: apiKey };
  }

  return {
    /**
     * The workspace a credential acts in, by name (the dashboard's header names it rather than its id).
     * @throws ServiceError `forbidden` for another workspace, `not_found` when it no longer exists.
     */
    async get(principal: Principal, workspaceId: string): Promise<{ id: string; name: string }> {
      assertWorkspaceAccess(principal, workspaceId, 'workspace.read');
      const row = await findWorkspace(db, workspaceId);
      if (!row) throw new ServiceError('not_found', `Workspace ${workspaceId} was not found.`);
      return { id: row.id, name: row.name };
    },

    /** Which workspace and which key or OAuth client a credential is; see `whoAmI`. */
    async me(principal: Principal): Promise<Me> {
      return whoAmI(db, principal);
    },

    /**
     * Mints another API key for a workspace (operators: `npm run cli -- key create`), e.g. when its only key was
     * lost; other keys stay as they are. The plaintext is returned once.
     * @throws ServiceError `not_found` for an unknown workspace.
     */
    async createKey(workspaceId: string, name: string): Promise<NewWorkspace & { workspace_name: string }> {
      return db.transaction().execute(async (tx) => {
        // The lock first, as every key change takes it (see api-keys.service.ts); it also says whether the workspace exists.
        if (!(await lockWorkspace(tx, workspaceId))) throw new ServiceError('not_found', `Workspace ${workspaceId} was not found. List them with: npm run cli -- workspace list`);
        const workspace = await findWorkspace(tx, workspaceId);
        const { row, apiKey } = await mintApiKey(tx, workspaceId, name, clock.now());
        return { workspace_id: workspaceId, workspace_name: workspace?.name ?? '', key_id: row.id, api_key: apiKey };
      });
    },

    /** Every workspace of the installation, oldest first (operators: `npm run cli -- workspace list`). */
    async list(): Promise<WorkspaceSummary[]> {
      return (await listWorkspaces(db)).map((w) => ({ id: w.id, name: w.name, plan: w.plan, created_at: toIso(w.createdAt) }));
    },

    /** Creates a workspace and its first API key in one transaction (operators: CLI and first start). */
    async create(input: CreateWorkspaceInput): Promise<NewWorkspace> {
      return db.transaction().execute((tx) => createIn(tx, input.name));
    },

    /**
     * On the very first start of an installation, creates a default workspace and key and returns them;
     * returns null on every later start, and to all but one of several processes starting together.
     */
    /**
     * Puts a workspace on a plan (operators). Ceilings change at once; what was already used stays counted.
     * @throws ServiceError `validation_failed` for an unknown plan, `not_found` for an unknown workspace.
     */
    async setPlan(workspaceId: string, plan: string): Promise<void> {
      if (!deps.planNames.includes(plan)) {
        throw new ServiceError('validation_failed', `plan: unknown plan ${plan}; known plans: ${deps.planNames.join(', ')}`);
      }
      await db.transaction().execute(async (tx) => {
        const before = await findWorkspace(tx, workspaceId);
        if (!before || !(await setWorkspacePlan(tx, workspaceId, plan))) throw new ServiceError('not_found', `Workspace ${workspaceId} was not found.`);
        // Only operators change plans, from the command line.
        await recordAudit(tx, { kind: 'system', workspaceId, label: 'operator (command line)', via: 'cli' }, 'plan.changed', { type: 'workspace', id: workspaceId, label: before.name }, clock.now(), {
          from: before.plan ?? null,
          to: plan,
        });
      });
    },

    async bootstrapOnce(): Promise<NewWorkspace | null> {
      return db.transaction().execute(async (tx) => {
        const first = await claimMetaFlag(tx, 'bootstrapped', 'default workspace created', clock.now());
        if (!first) return null;
        const created = await createIn(tx, 'Default workspace');
        const owner = await mintOwnerInvitation(tx, created.workspace_id, clock.now());
        return { ...created, owner_invitation_token: owner.token };
      });
    },
  };
}
