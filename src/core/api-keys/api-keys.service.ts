import type { Kysely } from 'kysely';
import {
  findApiKey,
  findApiKeyByDigest,
  insertApiKey,
  listApiKeys,
  revokeApiKey,
  revokeOtherApiKeys,
  touchApiKey,
  type ApiKeyRow,
} from '../../../db/repositories/api-keys.repo.js';
import { destroyIssuedFor } from '../../../db/repositories/oauth.repo.js';
import { keyAccountsPrefix } from '../oauth-clients/oauth-clients.service.js';
import { lockWorkspace } from '../../../db/repositories/workspaces.repo.js';
import type { Database } from '../../../db/schema.js';
import { type Clock, toIso } from '../clock.js';
import { ServiceError } from '../errors.js';
import { API_KEY_PATTERN, newApiKey, newId, sha256Hex } from '../ids.js';
import { listBrands } from '../../../db/repositories/brands.repo.js';
import { recordAudit } from '../audit/record.js';
import { brandsWithin, type Role, ROLES, roleWithin } from '../permissions/roles.js';
import type { Access, Principal } from '../principal.js';
import { assertWorkspaceAccess } from '../workspaces/access.js';
import type { ApiKey, ApiKeyList, CreateApiKeyInput, CreatedApiKey } from './api-keys.schema.js';

type ApiKeyPrincipal = Extract<Principal, { kind: 'api_key' }>;

/** `last_used_at` is kept to the minute so that authentication is not a write on every request. */
const LAST_USED_GRANULARITY_MS = 60_000;

/**
 * What is kept of a key's plaintext to tell keys apart: the fixed `svc_live_` and the first characters of its own
 * random part (16 of its 128 bits, so the rest stays unguessable). Keys made before this kept only `svc_live`,
 * which every key shares; their secret is not stored, so nothing more can be recovered for them.
 */
const SHOWN_CHARS = 'svc_live_'.length + 4;

/** Spec 2.1's `prefix`: the first 8 characters, whatever more was kept. */
const SPEC_PREFIX_CHARS = 8;

function startsWith(kept: string): string | null {
  return kept.length > SPEC_PREFIX_CHARS ? kept : null;
}

function render(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix.slice(0, SPEC_PREFIX_CHARS),
    starts_with: startsWith(row.prefix),
    created_at: toIso(row.createdAt),
    last_used_at: row.lastUsedAt === null ? null : toIso(row.lastUsedAt),
    revoked_at: row.revokedAt === null ? null : toIso(row.revokedAt),
    role: roleOf(row.role),
    brand_ids: row.brandIds === null ? null : [...row.brandIds],
    created_by: row.createdBy,
  };
}

/** Who is recorded as a key's maker: the person behind the call when there is one, else the key. */
function makerOf(principal: Principal): string | null {
  if (principal.kind === 'user') return principal.userId;
  return principal.userId ?? principal.keyId;
}

/**
 * The access a new key gets: the role asked (default admin) and brands asked (default every brand), never above
 * the maker's own (`roleWithin`, `brandsWithin`), and only brands of this workspace.
 * @throws ServiceError `forbidden` (role or brands above the maker's, with `permission`), `validation_failed`
 *   (`brand_ids`: a brand that does not exist).
 */
async function accessFor(db: Kysely<Database>, principal: Principal, workspaceId: string, input: CreateApiKeyInput): Promise<Access> {
  const role: Role = input.role ?? 'admin';
  if (!roleWithin(role, principal.role)) {
    throw new ServiceError('forbidden', `A ${principal.role} cannot create a key with the role ${role}: a key is never above the role of the credential that makes it.`, { permission: 'api_keys.manage' });
  }
  const brandIds = input.brand_ids === undefined ? null : [...new Set(input.brand_ids)];
  if (!brandsWithin(brandIds, principal.brandIds)) {
    throw new ServiceError('forbidden', 'brand_ids: a key is never limited to more brands than the credential that makes it.', { permission: 'api_keys.manage' });
  }
  if (brandIds !== null) {
    const known = new Set((await listBrands(db, workspaceId)).map((b) => b.id));
    const missing = brandIds.filter((id) => !known.has(id));
    if (missing.length > 0) {
      throw new ServiceError('validation_failed', `brand_ids: no brand ${missing.join(', ')} in this workspace`, { fields: [{ path: 'brand_ids', message: `unknown brand ${missing.join(', ')}` }] });
    }
  }
  return { role, brandIds };
}

/**
 * Creates a key inside `db`, which must be a transaction, and returns its plaintext, which is not stored: only
 * its SHA-256 digest is. It takes the workspace's key lock first (see `keyChange`), so a key minted by any
 * caller, now or later, is ordered against rotations and revocations of the same workspace: a rotation either
 * sees it (and revokes it) or comes after it.
 */
export async function mintApiKey(
  db: Kysely<Database>,
  workspaceId: string,
  name: string,
  now: number,
  access: Access & { createdBy: string | null } = { ...OWNER_ACCESS, createdBy: null },
): Promise<{ row: ApiKeyRow; apiKey: string }> {
  await lockWorkspace(db, workspaceId);
  const apiKey = newApiKey();
  const row: ApiKeyRow = {
    id: newId('key_'),
    workspaceId,
    name,
    prefix: apiKey.slice(0, SHOWN_CHARS),
    createdAt: now,
    lastUsedAt: null,
    revokedAt: null,
    role: access.role,
    brandIds: access.brandIds === null ? null : [...access.brandIds],
    createdBy: access.createdBy,
  };
  await insertApiKey(db, { ...row, keyDigest: sha256Hex(apiKey) });
  return { row, apiKey };
}

/**
 * Runs one change to a workspace's keys (create, rotate, revoke) in a transaction that first takes the
 * workspace's key lock, then checks again that the caller's own key is still active.
 *
 * Why both (spec 2.1, 3.1: `revoke_others` is an atomic rotation). The caller was authenticated before the
 * transaction, outside it; under PostgreSQL's READ COMMITTED a rotation's revoking UPDATE cannot see keys that
 * concurrent, uncommitted transactions are inserting, and a request authenticated with a key a moment before
 * that key was revoked would still mint a key afterwards. With the lock, changes of one workspace run one after
 * another in every process, each statement after the lock sees every earlier change committed, and the
 * re-check refuses a caller whose key a rotation or revocation has just revoked. So no key minted by a revoked
 * key outlives its revocation.
 * @throws ServiceError `invalid_api_key` (or `invalid_token` through OAuth) when the caller's key was revoked.
 */
async function keyChange<T>(db: Kysely<Database>, principal: Principal, workspaceId: string, change: (tx: Kysely<Database>) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (tx) => {
    await lockWorkspace(tx, workspaceId);
    if (principal.keyId !== null) {
      const own = await findApiKey(tx, principal.workspaceId, principal.keyId);
      if (own === undefined || own.revokedAt !== null) {
        throw principal.kind === 'oauth'
          ? new ServiceError('invalid_token', 'The access token is expired or revoked. Authorize again.')
          : invalidKey();
      }
    }
    return change(tx);
  });
}

export type ApiKeysService = ReturnType<typeof createApiKeysService>;

export function createApiKeysService(deps: { db: Kysely<Database>; clock: Clock }) {
  const { db, clock } = deps;
  const lastTouched = new Map<string, number>();

  /** A looked-up key as a principal if it is active; `last_used_at` written at most once a minute per key. */
  async function accept(row: ApiKeyRow | undefined): Promise<ApiKeyPrincipal> {
    if (!row || row.revokedAt !== null) throw invalidKey();
    const now = clock.now();
    const last = Math.max(lastTouched.get(row.id) ?? 0, row.lastUsedAt ?? 0);
    if (now - last >= LAST_USED_GRANULARITY_MS) {
      lastTouched.set(row.id, now);
      await touchApiKey(db, row.id, now);
    }
    return { kind: 'api_key', workspaceId: row.workspaceId, keyId: row.id, role: roleOf(row.role), brandIds: row.brandIds };
  }

  return {
    /**
     * Spec 4.1: creates a key; with `revoke_others` every other key of the workspace is revoked in the same
     * transaction, so there is no moment with both or neither. Creations, rotations and revocations of one
     * workspace are serialised (`keyChange`): after a rotation exactly the new key is active, whatever ran
     * beside it. The plaintext is returned here only.
     * @throws ServiceError `forbidden` for another workspace; `invalid_api_key` / `invalid_token` when the
     *   caller's key was revoked while the request waited.
     */
    async create(principal: Principal, workspaceId: string, input: CreateApiKeyInput): Promise<CreatedApiKey> {
      assertWorkspaceAccess(principal, workspaceId, 'api_keys.manage');
      return keyChange(db, principal, workspaceId, async (tx) => {
        // Read under the lock: the row's times then follow the order in which keys were really created.
        const now = clock.now();
        const access = await accessFor(tx, principal, workspaceId, input);
        const { row, apiKey } = await mintApiKey(tx, workspaceId, input.name, now, { ...access, createdBy: makerOf(principal) });
        const revoked = input.revoke_others === true ? await revokeOtherApiKeys(tx, workspaceId, row.id, now) : 0;
        // OAuth grants approved with the revoked keys go with them (the new key has approved nothing yet); the
        // grants people approved do not depend on any key and stay.
        if (revoked > 0) await destroyIssuedFor(tx, { accountPrefix: keyAccountsPrefix(workspaceId) });
        await recordAudit(tx, principal, 'api_key.created', { type: 'api_key', id: row.id, label: row.name }, now, {
          role: row.role,
          brand_ids: row.brandIds,
          revoked_other_keys: revoked,
        });
        return {
          id: row.id,
          api_key: apiKey,
          name: row.name,
          prefix: row.prefix.slice(0, SPEC_PREFIX_CHARS),
          starts_with: row.prefix,
          created_at: toIso(row.createdAt),
          revoked_other_keys: revoked,
          role: access.role,
          brand_ids: row.brandIds,
          created_by: row.createdBy,
        };
      });
    },

    /** Lists the workspace's keys, newest first, never with their plaintext, in the list envelope every door sends (`{data}`). */
    async list(principal: Principal, workspaceId: string): Promise<ApiKeyList> {
      assertWorkspaceAccess(principal, workspaceId, 'api_keys.manage');
      return { data: (await listApiKeys(db, workspaceId)).map(render) };
    },

    /**
     * Spec 3.1: revokes a key, irreversibly and with immediate effect. Revoking an already revoked key is a
     * no-op (so retries are safe). Serialised with key creation (`keyChange`), so a key the revoked key was
     * minting at the same moment is either refused or created before, never after.
     * @throws ServiceError `not_found` when the key is not the workspace's; `invalid_api_key` /
     *   `invalid_token` when the caller's own key was revoked while the request waited.
     */
    async revoke(principal: Principal, workspaceId: string, keyId: string): Promise<void> {
      assertWorkspaceAccess(principal, workspaceId, 'api_keys.manage');
      await keyChange(db, principal, workspaceId, async (tx) => {
        const existing = await findApiKey(tx, workspaceId, keyId);
        if (!existing) throw new ServiceError('not_found', `API key ${keyId} was not found in this workspace.`);
        const now = clock.now();
        // Revoking a revoked key changes nothing, so it records nothing either.
        if (await revokeApiKey(tx, workspaceId, keyId, now)) {
          await recordAudit(tx, principal, 'api_key.revoked', { type: 'api_key', id: keyId, label: existing.name }, now);
        }
        // Tokens approved with this key die with it (spec 5; ARCHITECTURE 9).
        await destroyIssuedFor(tx, { accountId: `${workspaceId}:${keyId}` });
      });
    },

    /** An active key's role and brands, or undefined when it is revoked or unknown (checks OAuth grants approved with it). */
    async accessOf(workspaceId: string, keyId: string): Promise<Access | undefined> {
      const row = await findApiKey(db, workspaceId, keyId);
      return row === undefined || row.revokedAt !== null ? undefined : { role: roleOf(row.role), brandIds: row.brandIds };
    },

    /**
     * Resolves a bearer credential that looks like an API key. Every failure is the same `invalid_api_key` so
     * the answer does not tell a prober whether a key exists or was revoked.
     * @throws ServiceError `invalid_api_key`.
     */
    async authenticate(presented: string): Promise<ApiKeyPrincipal> {
      if (!API_KEY_PATTERN.test(presented)) throw invalidKey();
      return accept(await findApiKeyByDigest(db, sha256Hex(presented)));
    },
  };
}

/** A key minted by the service itself (a workspace's first key, the CLI's) holds every permission. */
const OWNER_ACCESS: Access = { role: 'owner', brandIds: null };

/** A stored role; one this release does not know (written by a newer one) reads as the narrowest. */
export function roleOf(stored: string): Role {
  return (ROLES as readonly string[]).includes(stored) ? (stored as Role) : 'viewer';
}

function invalidKey(): ServiceError {
  return new ServiceError('invalid_api_key', 'The API key is missing, malformed, revoked or unknown.');
}
