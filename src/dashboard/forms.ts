import type { z } from 'zod';
import { formatIssuePath, ServiceError } from '../core/errors.js';

/** Messages per field path (`media[0].url`), for showing each error next to its field. */
export type FieldErrors = Record<string, string>;

export type Checked<T> = { ok: true; data: T } | { ok: false; errors: FieldErrors };

/** Validates what a form produced with the same zod schema the REST API and MCP tools use. */
export function check<S extends z.ZodType>(schema: S, value: unknown): Checked<z.output<S>> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return { ok: true, data: parsed.data };
  const errors: FieldErrors = {};
  for (const issue of parsed.error.issues) {
    const path = formatIssuePath(issue.path) || '_';
    errors[path] ??= issue.message;
  }
  return { ok: false, errors };
}

/** The field errors a core `validation_failed` carries, or null for any other failure. */
export function fieldErrorsOf(err: unknown): FieldErrors | null {
  if (!(err instanceof ServiceError) || err.code !== 'validation_failed') return null;
  const fields = err.extra.fields;
  if (!Array.isArray(fields)) return { _: err.message };
  const errors: FieldErrors = {};
  for (const f of fields as { path?: unknown; message?: unknown }[]) {
    if (typeof f.path === 'string' && typeof f.message === 'string') errors[f.path] ??= f.message;
  }
  return errors;
}

/** The first error whose path is `path` or lies under it (`media` matches `media[0].url`). */
export function errorAt(errors: FieldErrors | null | undefined, path: string): string | undefined {
  if (!errors) return undefined;
  if (errors[path] !== undefined) return errors[path];
  const key = Object.keys(errors).find((k) => k.startsWith(`${path}.`) || k.startsWith(`${path}[`));
  return key === undefined ? undefined : `${key}: ${errors[key]}`;
}

/** A non-empty trimmed string, or undefined (an empty optional field means "not given"). */
export function optional(text: string): string | undefined {
  const trimmed = text.trim();
  return trimmed === '' ? undefined : trimmed;
}
