import type { Kysely } from 'kysely';
import { type Adapter, type AdapterPayload, errors } from 'oidc-provider';
import {
  consumeModelOnce,
  deleteClient,
  destroyByGrant,
  destroyModel,
  findClient,
  findModel,
  findModelByUid,
  grantIdOfModel,
  revokeGrant,
  upsertClient,
  upsertModel,
} from '../db/repositories/oauth.repo.js';
import type { Database } from '../db/schema.js';
import { sha256Hex } from '../src/core/ids.js';
import { isMetadataDocumentClientId } from '../src/core/connected-apps/connected-apps.service.js';

/**
 * Models whose id is itself a bearer credential (the opaque token or code the client holds): stored under the
 * SHA-256 of the id, without the `jti` copy in the payload, so a read of the database yields no usable token.
 * They are only ever looked up by id, which is what makes hashing possible.
 */
const CREDENTIAL_MODELS = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'RegistrationAccessToken', 'ClientCredentials']);

export interface AdapterOptions {
  /**
   * The name a metadata-document client gives itself, as last read from its document. Such a client is in no
   * table, so its grants carry the name (`clientName` in the stored payload, which the provider ignores) for the
   * dashboard's list of connected apps.
   */
  documentClientName?: (clientId: string) => Promise<string | undefined>;
}

/**
 * oidc-provider's storage contract over our database: clients live in `oauth_clients` (so confidential clients
 * made over REST and clients registered dynamically share one registry); every other model lives in
 * `oauth_store` with the lookup columns the provider needs (grant, uid) and the ones we need to revoke in bulk
 * (account, client). oidc-provider keeps its own time, so expiry here follows the wall clock as it does.
 */
export function adapterFactory(db: Kysely<Database>, options: AdapterOptions = {}): new (name: string) => Adapter {
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
      const stored = this.hashed ? { ...payload, jti: undefined } : await this.withClientName(payload);
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

    /**
     * oidc-provider checks `consumed` when it loads a code and calls this later, so two concurrent exchanges of
     * one code both pass its check. The database decides instead: only the exchange whose conditional update
     * changed the row goes on; the other fails with `invalid_grant` and revokes the grant, which also kills the
     * token the winner issues from it (RFC 6749 §4.1.2: a replayed code revokes what it issued).
     */
    async consume(id: string): Promise<void> {
      const key = this.key(id);
      if (await consumeModelOnce(db, this.model, key, Date.now())) return;
      const grantId = await grantIdOfModel(db, this.model, key);
      if (grantId !== null) await revokeGrant(db, grantId);
      throw new errors.InvalidGrant(`${this.model === 'AuthorizationCode' ? 'authorization code' : 'grant source'} already consumed`);
    }

    async destroy(id: string): Promise<void> {
      if (this.model === 'Client') await deleteClient(db, id);
      else await destroyModel(db, this.model, this.key(id));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await destroyByGrant(db, grantId);
    }

    private async withClientName(payload: AdapterPayload): Promise<AdapterPayload> {
      const clientId = payload.clientId;
      if (this.model !== 'Grant' || !options.documentClientName || clientId === undefined || !isMetadataDocumentClientId(clientId)) return payload;
      const clientName = await options.documentClientName(clientId).catch(() => undefined);
      return clientName === undefined ? payload : { ...payload, clientName: clientName.slice(0, 200) };
    }

    private live(row: { payload: string; expiresAt: number | null; consumedAt: number | null } | undefined): AdapterPayload | undefined {
      if (!row || (row.expiresAt !== null && row.expiresAt <= Date.now())) return undefined;
      const payload = JSON.parse(row.payload) as AdapterPayload;
      return row.consumedAt === null ? payload : { ...payload, consumed: Math.floor(row.consumedAt / 1000) };
    }
  };
}
