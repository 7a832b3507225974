import { type Kysely, sql } from 'kysely';
import type { Database } from '../schema.js';

/** A round trip to the database. */
export async function ping(db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db);
}
