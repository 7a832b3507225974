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
import type { Database } from '../../../db/schema.js';
import { type Clock, toIso } from '../clock.js';
import { ServiceError } from '../errors.js';
import { API_KEY_PATTERN, newApiKey, newId, sha256Hex } from '../ids.js';
import type { Principal } from '../principal.js';
import { assertWorkspaceAccess } from '../workspaces/access.js';
import type { ApiKey, CreateApiKeyInput, CreatedApiKey } from './api-keys.schema.js';

/** `last_used_at` is kept to the minute so that authentication is not a write on every request. */
const LAST_USED_GRANULARITY_MS = 60_000;

function render(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    created_at: toIso(row.createdAt),
    last_used_at: row.lastUsedAt === null ? null : toIso(row.lastUsedAt),
    revoked_at: row.revokedAt === null ? null : toIso(row.revokedAt),
  };
}

/**
 * Creates a key inside `db` (which may be a transaction) and returns its plaintext, which is not stored:
 * only its SHA-256 digest is.
 */
export async function mintApiKey(
  db: Kysely<Database>,
  workspaceId: string,
  name: string,
  now: number,
): Promise<{ row: ApiKeyRow; apiKey: string }> {
  const apiKey = newApiKey();
  const row: ApiKeyRow = {
    id: newId('key_'),
    workspaceId,
    name,
    prefix: apiKey.slice(0, 8),
    createdAt: now,
    lastUsedAt: null,
    revokedAt: null,
  };
  await insertApiKey(db, { ...row, keyDigest: sha256Hex(apiKey) });
  return { row, apiKey };
}

export type ApiKeysService = ReturnType<typeof createApiKeysService>;

export function createApiKeysService(deps: { db: Kysely<Database>; clock: Clock }) {
  const { db, clock } = deps;
  const lastTouched = new Map<string, number>();

  return {
    /**
     * Spec 4.1: creates a key; with `revoke_others` every other key of the workspace is revoked in the same
     * transaction, so there is no moment with both or neither. The plaintext is returned here only.
     * @throws ServiceError `forbidden` for another workspace.
     */
    async create(principal: Principal, workspaceId: string, input: CreateApiKeyInput): Promise<CreatedApiKey> {
      assertWorkspaceAccess(principal, workspaceId);
      const now = clock.now();
      return db.transaction().execute(async (tx) => {
        const { row, apiKey } = await mintApiKey(tx, workspaceId, input.name, now);
        const revoked = input.revoke_others === true ? await revokeOtherApiKeys(tx, workspaceId, row.id, now) : 0;
        // OAuth grants approved with the revoked keys go with them (the new key has approved nothing yet).
        if (revoked > 0) await destroyIssuedFor(tx, { accountPrefix: `${workspaceId}:` });
        return {
          id: row.id,
          api_key: apiKey,
          name: row.name,
          prefix: row.prefix,
          created_at: toIso(row.createdAt),
          revoked_other_keys: revoked,
        };
      });
    },

    /** Lists the workspace's keys, newest first, never with their plaintext. */
    async list(principal: Principal, workspaceId: string): Promise<ApiKey[]> {
      assertWorkspaceAccess(principal, workspaceId);
      return (await listApiKeys(db, workspaceId)).map(render);
    },

    /**
     * Spec 3.1: revokes a key, irreversibly and with immediate effect. Revoking an already revoked key is a
     * no-op (so retries are safe).
     * @throws ServiceError `not_found` when the key is not the workspace's.
     */
    async revoke(principal: Principal, workspaceId: string, keyId: string): Promise<void> {
      assertWorkspaceAccess(principal, workspaceId);
      const existing = await findApiKey(db, workspaceId, keyId);
      if (!existing) throw new ServiceError('not_found', `API key ${keyId} was not found in this workspace.`);
      await db.transaction().execute(async (tx) => {
        await revokeApiKey(tx, workspaceId, keyId, clock.now());
        // Tokens approved with this key die with it (spec 5; ARCHITECTURE 9).
        await destroyIssuedFor(tx, { accountId: `${workspaceId}:${keyId}` });
      });
    },

    /** Whether a key exists and is active (used to check OAuth grants approved with it). */
    async isActive(workspaceId: string, keyId: string): Promise<boolean> {
      const row = await findApiKey(db, workspaceId, keyId);
      return row !== undefined && row.revokedAt === null;
    },

    /**
     * Resolves a bearer credential that looks like an API key. Every failure is the same `invalid_api_key` so
     * the answer does not tell a prober whether a key exists or was revoked.
     * @throws ServiceError `invalid_api_key`.
     */
    async authenticate(presented: string): Promise<Extract<Principal, { kind: 'api_key' }>> {
      if (!API_KEY_PATTERN.test(presented)) throw invalidKey();
      const row = await findApiKeyByDigest(db, sha256Hex(presented));
      if (!row || row.revokedAt !== null) throw invalidKey();
      const now = clock.now();
      const last = Math.max(lastTouched.get(row.id) ?? 0, row.lastUsedAt ?? 0);
      if (now - last >= LAST_USED_GRANULARITY_MS) {
        lastTouched.set(row.id, now);
        await touchApiKey(db, row.id, now);
      }
      return { kind: 'api_key', workspaceId: row.workspaceId, keyId: row.id };
    },
  };
}

function invalidKey(): ServiceError {
  return new ServiceError('invalid_api_key', 'The API key is missing, malformed, revoked or unknown.');
}
