import type { ColumnType, Generated } from 'kysely';

/**
 * Table types. Times are epoch milliseconds in a BIGINT column: PostgreSQL's driver hands them back as text,
 * SQLite as a number, so reads are typed as either and the row mappers in `repositories/` convert them.
 */
export type Millis = ColumnType<number | string, number, number>;
export type NullableMillis = ColumnType<number | string | null, number | null | undefined, number | null>;

export interface WorkspacesTable {
  id: string;
  name: string;
  created_at: Millis;
}

export interface ApiKeysTable {
  id: string;
  workspace_id: string;
  name: string;
  prefix: string;
  /** hex SHA-256 of the plaintext key; the plaintext is never stored. */
  key_digest: string;
  created_at: Millis;
  last_used_at: NullableMillis;
  revoked_at: NullableMillis;
}

/** Owned by rate-limiter-flexible (its documented table shape); created by our migration so SQL stays in db/. */
export interface RateLimitsTable {
  key: string;
  points: Generated<number>;
  expire: ColumnType<number | string | null, number | null, number | null>;
}

/** Small key/value facts about this installation, e.g. whether the first start already happened. */
export interface ServiceMetaTable {
  key: string;
  value: string;
  created_at: Millis;
}

export interface Database {
  workspaces: WorkspacesTable;
  api_keys: ApiKeysTable;
  rate_limits: RateLimitsTable;
  service_meta: ServiceMetaTable;
}
