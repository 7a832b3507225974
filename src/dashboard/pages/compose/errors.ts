import type { CreateContentInput, Preview } from '../../../core/contents/contents.schema.js';
import type { ServiceError } from '../../../core/errors.js';
import { mediaKindOf, PLATFORMS, type PlatformSlug, textLengthOn } from '../../../vocabulary/platforms.js';
import { explainServiceError, platformName } from '../../explain.js';
import { type FieldErrors, fieldErrorsOf } from '../../forms.js';
import { bytes, number } from '../../layout.js';
import type { ComposeValues } from './form.js';
import { WHEN_PATHS } from '../../when-field.js';
import { chars } from './counter.js';

/** What a submit came to, short of a redirect: errors by field path, a banner, a preview. */
export interface Outcome {
  errors?: FieldErrors;
  banner?: { message: string; wallet: boolean };
  /** The connections offered by a 422 connections_required. */
  offered?: { id: string; name: string; platform_slug: string }[];
  preview?: Preview;
  /** For the preview: each media item's picture address (uploads of ours), null where there is none to show. */
  previewImages?: (string | null)[];
  /** How many files this submit stored in the media library (a preview says so: they count on media storage). */
  previewUploads?: number;
  status?: number;
}

/** Refusals about the credit balance: their banner links to the wallet. */
const CREDIT_REFUSAL_CODES = new Set(['saldo_insuficiente', 'saldo_fragmentado', 'lote_vencido']);

/** Field paths the form shows next to a control; any other error goes to the banner. */
const FIELD_PREFIXES = ['brand_id', 'target_platforms', 'target_connections', 'content_type', 'text', 'title', 'thread', 'media', 'media_file', 'modo', 'overrides', ...WHEN_PATHS];


/** Errors of `path` and of the items under it (`thread` → `thread[2]`), keyed by their full path. */
export function errorsUnder(errors: FieldErrors, path: string): [string, string][] {
  return Object.entries(errors).filter(([k]) => k === path || k.startsWith(`${path}[`) || k.startsWith(`${path}.`));
}

/** The item index of a path under `prefix` (`media[2].url` → 2), or null for the list as a whole. */
export function indexOf(path: string, prefix: string): number | null {
  const match = new RegExp(`^${prefix}\\[(\\d+)\\]`).exec(path);
  return match ? Number(match[1]) : null;
}

/** The banner's text: the outcome's own, else the errors no control shows, else a pointer to the fields. */
export function bannerOf(outcome: Outcome): string | null {
  const errors = outcome.errors ?? {};
  const unplaced = Object.entries(errors)
    .filter(([path]) => !FIELD_PREFIXES.some((p) => path === p || path.startsWith(`${p}[`) || path.startsWith(`${p}.`)))
    .map(([path, message]) => (path === '_' ? message : `${path}: ${message}`));
  return outcome.banner?.message ?? (unplaced.length > 0 ? unplaced.join(' ') : Object.keys(errors).length > 0 ? 'Nothing was published: see the messages next to the fields below.' : null);
}

/**
 * The schema's refusals of a control, in words for the person at the form: zod's sentences are written for
 * integrators (“expected array to have >=1 items”). Only refusals whose cause the form itself shows are reworded.
 */
export function friendlier(errors: FieldErrors, values: ComposeValues): FieldErrors {
  const out: FieldErrors = {};
  for (const [path, message] of Object.entries(errors)) {
    if (path === 'target_platforms' && values.platforms.length === 0) out[path] = 'Choose at least one network.';
    else if (/^media\[\d+\]\.url$/.test(path)) out[path] = 'Enter a full public address, starting with https://.';
    else out[path] = message;
  }
  return out;
}

/** The request's value at a field path the core named (`text`, `title`, `thread[2]`, `overrides.threads.text`). */
function valueAt(input: CreateContentInput, path: string): string | undefined {
  const post = indexOf(path, 'thread');
  if (post !== null) return input.thread?.[post];
  const override = /^overrides\.([a-z]+)\.(text|title)$/.exec(path);
  if (override) return input.overrides?.[override[1] as PlatformSlug]?.[override[2] as 'text' | 'title'];
  return path === 'title' ? input.title : path === 'text' ? input.text : undefined;
}

/**
 * A caption_too_long in words for the person at the form, at the field the core names in `fields` (spec 7.2);
 * the platform and its limit come with the error, the length from the value at that path.
 */
function captionError(err: ServiceError, input: CreateContentInput): FieldErrors {
  const path = fieldPathsOf(err)[0];
  if (path === undefined) return { _: err.message };
  const slug = err.extra.platform_slug;
  const limit = err.extra.limit;
  const value = valueAt(input, path);
  if (typeof slug !== 'string' || !(slug in PLATFORMS) || typeof limit !== 'number' || value === undefined) return { [path]: err.message };
  const info = PLATFORMS[slug as PlatformSlug];
  // Titles count code points everywhere; texts and thread posts count as the network does.
  const length = path.endsWith('title') ? chars(value) : textLengthOn(slug as PlatformSlug, value);
  const counted = `${number(length)} characters${length === chars(value) ? '' : ` as ${info.name} counts them`}, the limit is ${number(limit)}.`;
  const post = indexOf(path, 'thread');
  if (post !== null) return { [path]: `Post ${post + 1} is too long for ${info.name}: ${counted}` };
  if (path.endsWith('title')) return { [path]: `The title is too long for ${info.name}: ${counted}` };
  const split = info.limits.threadMaxPosts !== null;
  const how =
    split && input.thread_split === 'auto'
      ? ` It is too long even as a thread of ${info.limits.threadMaxPosts} posts: shorten it.`
      : split
        ? ' Shorten it, or tick “Split long text into a thread” to publish it as a chain of posts.'
        : ' Shorten it, or untick this network.';
  return { [path]: `Too long for ${info.name}: ${counted}${how}` };
}

/** The field paths a refusal names in its `fields` (validation_failed, media_too_large, caption_too_long), in order. */
function fieldPathsOf(err: ServiceError): string[] {
  const fields: unknown = err.extra.fields;
  if (!Array.isArray(fields)) return [];
  return fields.flatMap((f: unknown) => (typeof f === 'object' && f !== null && 'path' in f && typeof f.path === 'string' ? [f.path] : []));
}

/** A refusal of the core, placed next to the field it concerns (spec 7.2) or in the banner. */
export function placeError(err: ServiceError, input: CreateContentInput): Outcome {
  const status = err.status;
  const fields = fieldErrorsOf(err);
  if (fields) return { errors: fields, status };
  switch (err.code) {
    case 'not_found':
      return { errors: { brand_id: err.message }, status };
    case 'caption_too_long':
      return { errors: captionError(err, input), status };
    case 'media_too_large': {
      // The core names the item in `fields` (`media[1].url`); the limit comes with the error.
      const kind = mediaKindOf(input.content_type) ?? 'file';
      const limit = typeof err.extra.limit === 'number' ? ` at most ${bytes(err.extra.limit)}` : '';
      const message = `This file is larger than ${platformName(String(err.extra.platform_slug))} accepts for a ${kind}:${limit}.`;
      const paths = fieldPathsOf(err);
      return { errors: Object.fromEntries((paths.length > 0 ? paths : ['media']).map((path) => [path, message])), status };
    }
    case 'platform_not_supported': {
      const i = input.target_platforms.indexOf(err.extra.platform_slug as PlatformSlug);
      return { errors: { [i >= 0 ? `target_platforms[${i}]` : 'target_platforms']: `${err.message} Untick it or change the content type.` }, status };
    }
    case 'connections_required': {
      const offered = Array.isArray(err.extra.connections) ? (err.extra.connections as NonNullable<Outcome['offered']>) : [];
      const byPlatform = [...new Set(offered.map((c) => c.platform_slug))].map(
        (slug) => `${platformName(slug)}: ${offered.filter((c) => c.platform_slug === slug).map((c) => `${c.name} (${c.id})`).join(', ')}`,
      );
      return { offered, errors: { target_connections: `Choose which connection publishes. This brand has several on ${byPlatform.join('; ')}.` }, status };
    }
    default:
      return { banner: { message: explainServiceError(err), wallet: CREDIT_REFUSAL_CODES.has(err.code) }, status };
  }
}
