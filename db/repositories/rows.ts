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


/** A brand list column (JSON array of ids) as the application holds it; null is every brand. */
export function parseBrandIds(value: string | null): string[] | null {
  if (value === null) return null;
  const parsed: unknown = JSON.parse(value);
  return Array.isArray(parsed) ? parsed.filter((v): v is string => typeof v === 'string') : null;
}

export function formatBrandIds(brandIds: readonly string[] | null): string | null {
  return brandIds === null ? null : JSON.stringify([...brandIds]);
}
