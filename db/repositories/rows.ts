/**
 * The one place that knows how each driver returns values: PostgreSQL gives BIGINT as text, SQLite gives
 * numbers (and 0/1 for booleans).
 */
export function toMillis(value: number | string | bigint): number {
  return typeof value === 'number' ? value : Number(value);
}

export function toMillisOrNull(value: number | string | bigint | null): number | null {
  return value === null ? null : toMillis(value);
}

