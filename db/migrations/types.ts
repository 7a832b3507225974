import type { Kysely } from 'kysely';
import type { Dialect } from '../connect.js';

/**
 * A migration is frozen in time: it imports nothing from the application and receives the database as
 * `Kysely<unknown>` so later schema changes cannot silently alter what it does.
 */
export interface FrozenMigration {
  name: string;
  up(db: Kysely<unknown>, dialect: Dialect): Promise<void>;
}
