import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

/** The installation's one-time facts (`service_meta`): first start, the OAuth signing key. */

/**
 * Records a one-time fact about the installation. Returns true only for the caller that recorded it first,
 * so two processes starting together cannot both act on it.
 */
export async function claimMetaFlag(db: Kysely<Database>, key: string, value: string, now: number): Promise<boolean> {
  const result = await db
    .insertInto('service_meta')
    .values({ key, value, created_at: now })
    .onConflict((oc) => oc.column('key').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export async function readMeta(db: Kysely<Database>, key: string): Promise<string | undefined> {
  return (await db.selectFrom('service_meta').select('value').where('key', '=', key).executeTakeFirst())?.value;
}
