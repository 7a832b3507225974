import type { MediaRef, NetworkFailure } from '../adapter.js';
import { failure } from '../kit/failure.js';
import { list, num, obj, str } from '../kit/json.js';
import type { NetworkDeps } from '../network-deps.js';
import { call } from './api.js';

/**
 * A server's own limits (docs: methods/instance#v2, entities/Instance `configuration`), read before anything is
 * uploaded or posted so an over-limit job fails clearly instead of half way. Each field is null when the server
 * does not say (then the server's own 422 is the judge).
 */
export interface InstanceLimits {
  maxCharacters: number | null;
  maxMediaAttachments: number | null;
  /** `characters_reserved_per_url`: every link counts as this many characters (23 by default). */
  charactersPerUrl: number;
  imageSizeLimit: number | null;
  videoSizeLimit: number | null;
  /** Empty when the server does not list them. */
  supportedMimeTypes: string[];
}

/** Limits change rarely; a short cache keeps a chain or a burst of jobs from asking for every post. */
export const LIMITS_TTL_MS = 10 * 60_000;
const DEFAULT_CHARACTERS_PER_URL = 23;

/** Reads and caches each server's limits. A server before 4.0 (no /api/v2/instance) has none: nothing is checked. */
export function createLimitsCache(deps: NetworkDeps) {
  const cache = new Map<string, { until: number; limits: InstanceLimits | null }>();
  return async function limitsOf(origin: string, token: string): Promise<InstanceLimits | null> {
    const hit = cache.get(origin);
    if (hit && hit.until > deps.now()) return hit.limits;
    // Public, but a server in limited-federation mode wants a user: the token is sent anyway.
    const res = await call(deps, { origin, method: 'GET', path: '/api/v2/instance', token });
    if (!res.ok && res.status !== 404) return null; // not cached: asked again next time; the post decides meanwhile
    const limits = res.ok ? readLimits(res.body) : null;
    cache.set(origin, { until: deps.now() + LIMITS_TTL_MS, limits });
    return limits;
  };
}

function readLimits(body: unknown): InstanceLimits | null {
  const config = obj(obj(body).configuration);
  if (Object.keys(config).length === 0) return null;
  const statuses = obj(config.statuses);
  const media = obj(config.media_attachments);
  return {
    maxCharacters: num(statuses.max_characters),
    maxMediaAttachments: num(statuses.max_media_attachments),
    charactersPerUrl: num(statuses.characters_reserved_per_url) ?? DEFAULT_CHARACTERS_PER_URL,
    imageSizeLimit: num(media.image_size_limit),
    videoSizeLimit: num(media.video_size_limit),
    supportedMimeTypes: list(media.supported_mime_types).map(str).filter((t): t is string => t !== null),
  };
}

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
// Mastodon only shortens links with a scheme (extract_url_without_protocol: false). A trailing punctuation mark is
// taken into the link here: counting it as part of the 23 can only make us count less than the server, never more.
const LINK = /\bhttps?:\/\/[^\s<>"]+/gi;
const REMOTE_MENTION = /(^|[^\p{L}\p{N}_/])@([\p{L}\p{N}_]+)@[\p{L}\p{N}.-]+[\p{L}\p{N}]/gu;

/**
 * A status's length as Mastodon's StatusLengthValidator counts it: grapheme clusters, every link as
 * `charactersPerUrl`, a remote mention `@user@domain` as `@user`. Approximate on purpose in one direction only:
 * it may count a little less than the server (which then answers 422), never more (refusing what would pass).
 */
export function countableLength(text: string, charactersPerUrl: number): number {
  const shortened = text.replace(LINK, 'x'.repeat(charactersPerUrl)).replace(REMOTE_MENTION, '$1@$2');
  return Array.from(graphemes.segment(shortened)).length;
}

const MB = 1024 * 1024;
const inMb = (bytes: number) => `${(bytes / MB).toFixed(bytes < 10 * MB ? 1 : 0)} MB`;

/** The MIME type an upload is sent with: the one given, or guessed from the address (the server needs one). */
export function mimeTypeOf(media: MediaRef, contentType: string): string {
  if (media.contentType) return media.contentType.split(';')[0]?.trim().toLowerCase() ?? media.contentType;
  const ext = /\.([a-z0-9]+)(?:$|[?#])/i.exec(media.url)?.[1]?.toLowerCase() ?? '';
  const byExt: Record<string, string> = { jpg: 'image/jpeg', jpeg: 'image/jpeg', png: 'image/png', gif: 'image/gif', webp: 'image/webp', mp4: 'video/mp4', mov: 'video/quicktime', webm: 'video/webm' };
  return byExt[ext] ?? (contentType === 'photo' ? 'image/jpeg' : 'video/mp4');
}

const isVideo = (mime: string) => mime.startsWith('video/');

/** The size limit that applies to a file (a GIF is checked as an image on upload, before it becomes a gifv). */
export function sizeLimitFor(limits: InstanceLimits, mime: string): number | null {
  return isVideo(mime) ? limits.videoSizeLimit : limits.imageSizeLimit;
}

export function tooLarge(limits: InstanceLimits, mime: string, bytes: number): NetworkFailure | null {
  const limit = sizeLimitFor(limits, mime);
  if (limit === null || bytes <= limit) return null;
  return failure('media_too_large', false, `The file is ${inMb(bytes)}; this Mastodon server accepts ${isVideo(mime) ? 'videos' : 'images'} up to ${inMb(limit)}.`);
}

/**
 * Everything the server's limits let us check before the first request that changes anything: each post's
 * length, the number of attachments, each file's type and (when known) size. Null when all pass.
 */
export function checkAgainstLimits(limits: InstanceLimits, texts: string[], media: MediaRef[], contentType: string): NetworkFailure | null {
  for (const [k, text] of texts.entries()) {
    const length = countableLength(text, limits.charactersPerUrl);
    if (limits.maxCharacters !== null && length > limits.maxCharacters) {
      const which = texts.length > 1 ? `Post ${k + 1} of the chain` : 'The text';
      return failure('upstream_unknown', false, `${which} is ${length} characters long; this Mastodon server allows ${limits.maxCharacters} (links count as ${limits.charactersPerUrl}).`);
    }
  }
  if (limits.maxMediaAttachments !== null && media.length > limits.maxMediaAttachments) {
    return failure('upstream_unknown', false, `This Mastodon server takes at most ${limits.maxMediaAttachments} media per post; ${media.length} were given.`);
  }
  const types = media.map((m) => mimeTypeOf(m, contentType));
  // PostStatusService: "Cannot attach a video to a post that already contains images".
  if (media.length > 1 && types.some(isVideo)) {
    return failure('upstream_unknown', false, 'Mastodon attaches a video alone: one video per post, without other media.');
  }
  for (const [i, m] of media.entries()) {
    const mime = types[i] ?? '';
    if (limits.supportedMimeTypes.length > 0 && !limits.supportedMimeTypes.includes(mime)) {
      return failure('media_unsupported_format', false, `This Mastodon server does not accept ${mime} files.`);
    }
    const big = m.sizeBytes === null ? null : tooLarge(limits, mime, m.sizeBytes);
    if (big) return big;
  }
  return null;
}
