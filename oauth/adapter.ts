import type { Kysely } from 'kysely';
import type { Adapter, AdapterPayload } from 'oidc-provider';
import {
  consumeModel,
  deleteClient,
  destroyByGrant,
  destroyModel,
  findClient,
  findModel,
  findModelByUid,
  upsertClient,
  upsertModel,
} from '../db/repositories/oauth.repo.js';
import type { Database } from '../db/schema.js';
import { sha256Hex } from '../src/core/ids.js';

/**
 * Models whose id is itself a bearer credential (the opaque token or code the client holds): stored under the
 * SHA-256 of the id, without the `jti` copy in the payload, so a read of the database yields no usable token.
 * They are only ever looked up by id, which is what makes hashing possible.
 */
const CREDENTIAL_MODELS = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'RegistrationAccessToken', 'ClientCredentials']);

/**
 * oidc-provider's storage contract over our database: clients live in `oauth_clients` (so confidential clients
 * made over REST and clients registered dynamically share one registry); every other model lives in
 * `oauth_store` with the lookup columns the provider needs (grant, uid) and the ones we need to revoke in bulk
 * (account, client). oidc-provider keeps its own time, so expiry here follows the wall clock as it does.
 */
export function adapterFactory(db: Kysely<Database>): new (name: string) => Adapter {
  return class DatabaseAdapter implements Adapter {
    private readonly hashed: boolean;

    constructor(private readonly model: string) {
      this.hashed = CREDENTIAL_MODELS.has(model);
    }

    private key(id: string): string {
      return this.hashed ? sha256Hex(id) : id;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      const now = Date.now();
      if (this.model === 'Client') {
        const existing = await findClient(db, id);
        await upsertClient(db, {
          id,
          workspaceId: existing?.workspaceId ?? null,
          kind: existing?.kind ?? 'public',
          metadata: payload as Record<string, unknown>,
          createdAt: existing?.createdAt ?? now,
          updatedAt: now,
        });
        return;
      }
      const stored = this.hashed ? { ...payload, jti: undefined } : payload;
      await upsertModel(db, {
        model: this.model,
        id: this.key(id),
        payload: JSON.stringify(stored),
        grantId: payload.grantId ?? null,
        uid: payload.uid ?? null,
        accountId: payload.accountId ?? null,
        clientId: payload.clientId ?? null,
        expiresAt: expiresIn ? now + expiresIn * 1000 : null,
      });
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      if (this.model === 'Client') return (await findClient(db, id))?.metadata as AdapterPayload | undefined;
      const payload = this.live(await findModel(db, this.model, this.key(id)));
      return payload && this.hashed ? { ...payload, jti: id } : payload;
    }

    async findByUserCode(): Promise<AdapterPayload | undefined> {
      return undefined; // device flow is not enabled
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return this.live(await findModelByUid(db, this.model, uid));
    }

    async consume(id: string): Promise<void> {
      await consumeModel(db, this.model, this.key(id), Date.now());
    }

    async destroy(id: string): Promise<void> {
      if (this.model === 'Client') await deleteClient(db, id);
      else await destroyModel(db, this.model, this.key(id));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await destroyByGrant(db, grantId);
    }

    private live(row: { payload: string; expiresAt: number | null; consumedAt: number | null } | undefined): AdapterPayload | undefined {
      if (!row || (row.expiresAt !== null && row.expiresAt <= Date.now())) return undefined;
      const payload = JSON.parse(row.payload) as AdapterPayload;
      return row.consumedAt === null ? payload : { ...payload, consumed: Math.floor(row.consumedAt / 1000) };
    }
  };
}
