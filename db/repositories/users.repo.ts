import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';
import { toMillis, toMillisOrNull } from './rows.js';

export interface UserRow {
  id: string;
  email: string;
  name: string | null;
  passwordHash: string | null;
  emailVerifiedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

const COLUMNS = ['id', 'email', 'name', 'password_hash', 'email_verified_at', 'created_at', 'updated_at'] as const;

type Selected = { id: string; email: string; name: string | null; password_hash: string | null; email_verified_at: number | string | null; created_at: number | string; updated_at: number | string };

function toRow(r: Selected): UserRow {
  return {
    id: r.id,
    email: r.email,
    name: r.name,
    passwordHash: r.password_hash,
    emailVerifiedAt: toMillisOrNull(r.email_verified_at),
    createdAt: toMillis(r.created_at),
    updatedAt: toMillis(r.updated_at),
  };
}

/** Emails are compared lowercased and trimmed; the unique index holds that form. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export async function insertUser(db: Kysely<Database>, row: UserRow): Promise<void> {
  await db
    .insertInto('users')
    .values({
      id: row.id,
      email: normalizeEmail(row.email),
      name: row.name,
      password_hash: row.passwordHash,
      email_verified_at: row.emailVerifiedAt,
      created_at: row.createdAt,
      updated_at: row.updatedAt,
    })
    .execute();
}

export async function findUser(db: Kysely<Database>, id: string): Promise<UserRow | undefined> {
  const r = await db.selectFrom('users').select(COLUMNS).where('id', '=', id).executeTakeFirst();
  return r && toRow(r);
}

export async function findUserByEmail(db: Kysely<Database>, email: string): Promise<UserRow | undefined> {
  const r = await db.selectFrom('users').select(COLUMNS).where('email', '=', normalizeEmail(email)).executeTakeFirst();
  return r && toRow(r);
}

export async function setUserPassword(db: Kysely<Database>, id: string, passwordHash: string, now: number): Promise<void> {
  await db.updateTable('users').set({ password_hash: passwordHash, updated_at: now }).where('id', '=', id).execute();
}
