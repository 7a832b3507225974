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

/**
 * oidc-provider's storage contract over our database: clients live in `oauth_clients` (so confidential clients
 * made over REST and clients registered dynamically share one registry); every other model lives in
 * `oauth_store` with the lookup columns the provider needs (grant, uid) and the ones we need to revoke in bulk
 * (account, client). oidc-provider keeps its own time, so expiry here follows the wall clock as it does.
 */
export function adapterFactory(db: Kysely<Database>): new (name: string) => Adapter {
  return class DatabaseAdapter implements Adapter {
    constructor(private readonly model: string) {}

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
      await upsertModel(db, {
        model: this.model,
        id,
        payload: JSON.stringify(payload),
        grantId: payload.grantId ?? null,
        uid: payload.uid ?? null,
        accountId: payload.accountId ?? null,
        clientId: payload.clientId ?? null,
        expiresAt: expiresIn ? now + expiresIn * 1000 : null,
      });
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      if (this.model === 'Client') return (await findClient(db, id))?.metadata as AdapterPayload | undefined;
      return this.live(await findModel(db, this.model, id));
    }

    async findByUserCode(): Promise<AdapterPayload | undefined> {
      return undefined; // device flow is not enabled
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return this.live(await findModelByUid(db, this.model, uid));
    }

    async consume(id: string): Promise<void> {
      await consumeModel(db, this.model, id, Date.now());
    }

    async destroy(id: string): Promise<void> {
      if (this.model === 'Client') await deleteClient(db, id);
      else await destroyModel(db, this.model, id);
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
