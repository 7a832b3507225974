import type { ContentRow } from '../../../db/repositories/contents.repo.js';
import { validationError } from '../errors.js';
import { notEditable } from './content-errors.js';
import { type ContentFields, contentFieldsSchema, type CreateContentInput, type UpdateContentInput, type UpdatedContent } from './contents.schema.js';

/** The content fields of a creation request (its timing is not stored with them). */
export function fieldsOf(input: CreateContentInput): ContentFields {
  return withoutTiming(input);
}

/** A request's fields without its timing (publish_at, time_zone, queue, draft). */
function withoutTiming<T extends { publish_at?: unknown; time_zone?: unknown; queue?: unknown; draft?: unknown }>(input: T): Omit<T, 'publish_at' | 'time_zone' | 'queue' | 'draft'> {
  const out: Record<string, unknown> = { ...input };
  for (const key of ['publish_at', 'time_zone', 'queue', 'draft']) delete out[key];
  return out as Omit<T, 'publish_at' | 'time_zone' | 'queue' | 'draft'>;
}

/** An edit applied to the stored fields: sent fields replace, `null` clears; the result is checked as at creation. */
export function mergeFields(stored: ContentFields, patch: UpdateContentInput): ContentFields {
  const changes = withoutTiming(patch);
  const merged: Record<string, unknown> = { ...stored };
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    if (value === null) delete merged[key];
    else merged[key] = value;
  }
  const parsed = contentFieldsSchema.safeParse(merged);
  if (!parsed.success) throw validationError(parsed.error, 'body');
  return parsed.data;
}

/**
 * The platforms whose own text or title an edit left in place while it changed the shared one: an edit that
 * sends `overrides` chose them itself, so nothing is reported then.
 */
export function keptOverrides(stored: ContentFields, fields: ContentFields, patch: UpdateContentInput): UpdatedContent['kept_overrides'] {
  if (patch.overrides !== undefined) return [];
  const changed = {
    text: patch.text !== undefined && (patch.text ?? undefined) !== stored.text,
    title: patch.title !== undefined && (patch.title ?? undefined) !== stored.title,
  };
  const kept: UpdatedContent['kept_overrides'] = [];
  for (const platform of fields.target_platforms) {
    const own = fields.overrides?.[platform];
    const which = (['text', 'title'] as const).filter((f) => changed[f] && own?.[f] !== undefined);
    if (which.length > 0) kept.push({ platform_slug: platform, fields: which });
  }
  return kept;
}

/** The fields a content was stored with; a content stored before its fields were kept cannot be changed. */
export function storedFields(row: ContentRow): ContentFields {
  if (row.input === null) throw notEditable(row);
  return contentFieldsSchema.parse(JSON.parse(row.input));
}
