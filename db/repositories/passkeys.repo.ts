import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { toMillis, toMillisOrNull } from './rows.js';

export interface PasskeyRow {
  id: string;
  credentialId: string;
  userId: string;
  publicKey: string;
  counter: number;
  transports: string[];
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
}

const COLUMNS = ['id', 'credential_id', 'user_id', 'public_key', 'counter', 'transports', 'name', 'created_at', 'last_used_at'] as const;

type Selected = {
  id: string;
  credential_id: string;
  user_id: string;
  public_key: string;
  counter: number | string;
  transports: string | null;
  name: string;
  created_at: number | string;
  last_used_at: number | string | null;
};

function toRow(r: Selected): PasskeyRow {
  const transports: unknown = r.transports === null ? [] : JSON.parse(r.transports);
  return {
    id: r.id,
    credentialId: r.credential_id,
    userId: r.user_id,
    publicKey: r.public_key,
    counter: toMillis(r.counter),
    transports: Array.isArray(transports) ? transports.filter((t): t is string => typeof t === 'string') : [],
    name: r.name,
    createdAt: toMillis(r.created_at),
    lastUsedAt: toMillisOrNull(r.last_used_at),
  };
}

/** Adds a credential; a credential id already registered (to anyone) violates its unique index. */
export async function insertPasskey(db: Kysely<Database>, row: PasskeyRow): Promise<void> {
  await db
    .insertInto('passkeys')
    .values({
      id: row.id,
      credential_id: row.credentialId,
      user_id: row.userId,
      public_key: row.publicKey,
      counter: row.counter,
      transports: JSON.stringify(row.transports),
      name: row.name,
      created_at: row.createdAt,
      last_used_at: row.lastUsedAt,
    })
    .execute();
}

export async function findPasskeyByCredentialId(db: Kysely<Database>, credentialId: string): Promise<PasskeyRow | undefined> {
  const r = await db.selectFrom('passkeys').select(COLUMNS).where('credential_id', '=', credentialId).executeTakeFirst();
  return r && toRow(r);
}

/** A person's passkeys, oldest first. */
export async function listPasskeysOfUser(db: Kysely<Database>, userId: string): Promise<PasskeyRow[]> {
  const rows = await db.selectFrom('passkeys').select(COLUMNS).where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute();
  return rows.map(toRow);
}

/**
 * Records a successful use: the new signature counter and the time. Conditional on the counter read before the
 * check, so two assertions verified at once against the same counter cannot both be recorded; false when another
 * use got there first.
 */
export async function recordPasskeyUse(db: Kysely<Database>, id: string, expectedCounter: number, counter: number, now: number): Promise<boolean> {
  const result = await db
    .updateTable('passkeys')
    .set({ counter, last_used_at: now })
    .where('id', '=', id)
    .where('counter', '=', expectedCounter)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function renamePasskey(db: Kysely<Database>, userId: string, id: string, name: string): Promise<PasskeyRow | undefined> {
  const result = await db.updateTable('passkeys').set({ name }).where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) return undefined;
  const r = await db.selectFrom('passkeys').select(COLUMNS).where('id', '=', id).executeTakeFirst();
  return r && toRow(r);
}

/** Removes one of a person's passkeys; the removed row, or undefined when it was not theirs or already gone. */
export async function deletePasskey(db: Kysely<Database>, userId: string, id: string): Promise<PasskeyRow | undefined> {
  const r = await db.deleteFrom('passkeys').where('id', '=', id).where('user_id', '=', userId).returning(COLUMNS).executeTakeFirst();
  return r && toRow(r);
}
