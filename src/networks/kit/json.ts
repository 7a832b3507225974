/**
 * Small readers for network answers and saved progress: both arrive as untrusted JSON, so every field is read
 * defensively and a missing or mistyped one reads as "absent" rather than throwing.
 */

export type Json = Record<string, unknown>;

/** A plain JSON object (not an array, not null). */
export const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The value as an object; `{}` when it is not one (so field reads chain safely). */
export const obj = (v: unknown): Json => (isRecord(v) ? v : {});

/** The value as an array; `[]` when it is not one. */
export const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** A non-empty string; a finite number is read as its digits (networks send some ids as numbers); else null. */
export const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : null);

/** A finite number, or null. */
export const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** Parses a body; `undefined` when it is not JSON at all (an HTML error page, a proxy's text). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Parses a body that should be a JSON object; null when it is not. */
export function jsonObject(text: string): Json | null {
  const v = parseJson(text);
  return isRecord(v) ? v : null;
}
