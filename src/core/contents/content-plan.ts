import type { Kysely } from 'kysely';
import { type ConnectionRow, findBrandContext } from '../../../db/repositories/connections.repo.js';
import { findMedia } from '../../../db/repositories/media.repo.js';
import type { Database } from '../../../db/schema.js';
import { type ContentType, type PlatformSlug, PLATFORMS, mediaKindOf, platformFor, textLengthOn } from '../../vocabulary/platforms.js';
import { brandNotFound } from '../brands/brands.service.js';
import { ServiceError } from '../errors.js';
import type { CreateContentInput, TiktokSettings } from './contents.schema.js';
import { mediaCountRefusal } from './media-count.js';
import { splitIntoThread } from './thread-split.js';

/** What a media address told us when probed (the probe itself is infrastructure, injected). */
export type MediaProbeResult =
  | { ok: true; size: number | null; contentType: string | null }
  | { ok: false; reason: 'blocked' | 'unreachable' | 'http_error'; status?: number };

/** Probes one address; `signal` aborts it when the request's probe deadline passes. */
export type ProbeMedia = (url: string, signal: AbortSignal) => Promise<MediaProbeResult>;

/**
 * One deadline for all the media addresses of a request, probed together: creation stays well inside its
 * idempotency claim (60 s) whatever the number of addresses (up to 10) and however slow their hosts.
 */
export const MEDIA_PROBE_DEADLINE_MS = 10_000;

export interface PlanOptions {
  /** Overrides MEDIA_PROBE_DEADLINE_MS (tests). */
  probeDeadlineMs?: number;
}

export interface PlannedMedia {
  url: string | null;
  mediaId: string | null;
  /** null when the address does not report a size: the 100 MB cap is applied when publishing (spec 8). */
  sizeBytes: number | null;
  storagePath: string | null;
  /**
   * The media type: an upload's, as stored with it; an address's, as its server declared it when probed, kept only
   * when it names an image or video type (a generic `application/octet-stream` says nothing). Null when unknown.
   */
  contentType: string | null;
}

export interface PlannedTarget {
  platform: PlatformSlug;
  connection: ConnectionRow;
  text: string | null;
  title: string | null;
  thread: string[] | null;
  sandboxOutcome: string | null;
  /** The creator's privacy and interaction choices, on a TikTok target that has them. */
  tiktok: TiktokSettings | null;
}

/** Everything a content request resolves to once every check passed; stored with the content. */
export interface ContentPlan {
  brandId: string;
  /** The workspace's plan when the request was checked (read with the brand), for the charge. */
  workspacePlan: string;
  contentType: ContentType;
  text: string | null;
  title: string | null;
  media: PlannedMedia[];
  targets: PlannedTarget[];
}

/**
 * Spec 7.2 `caption_too_long`. The offending field's path goes in `fields`, as `validation_failed` and
 * `media_too_large` name theirs, so a client places the refusal without reading the message: `text`, `title`,
 * `thread[i]`, or `overrides.<platform>.text` / `.title` when the value came from that platform's override.
 */
function tooLong(platform: PlatformSlug, what: string, path: string, limit: number, length: number, hint = ''): ServiceError {
  const why = `has ${length} characters; the limit for ${PLATFORMS[platform].name} (${platform}) is ${limit}.${hint}`;
  return new ServiceError(
    'caption_too_long',
    `The ${what} for ${PLATFORMS[platform].name} (${platform}) has ${length} characters; the limit is ${limit}.${hint}`,
    { platform_slug: platform, limit, fields: [{ path, message: why }] },
  );
}

function invalid(path: string, message: string): ServiceError {
  return new ServiceError('validation_failed', `${path}: ${message}`, { fields: [{ path, message }] });
}

/** Chooses the connection of each target platform (spec 4.3, 7.2 `connections_required`). */
function resolveConnections(brandConnections: readonly ConnectionRow[], input: CreateContentInput): Map<PlatformSlug, ConnectionRow> {
  const usable = brandConnections.filter((c) => c.status !== 'inactive');
  const chosen = new Map<PlatformSlug, ConnectionRow>();
  (input.target_connections ?? []).forEach((id, i) => {
    const conn = usable.find((c) => c.id === id);
    const path = `target_connections[${i}]`;
    if (!conn) throw invalid(path, `${id} is not an active connection of brand ${input.brand_id}`);
    const platform = conn.platformSlug as PlatformSlug;
    if (!input.target_platforms.includes(platform)) throw invalid(path, `${id} is on ${platform}, which is not a target platform`);
    if (chosen.has(platform)) throw invalid(path, `only one connection per platform may be chosen (${platform})`);
    chosen.set(platform, conn);
  });
  const ambiguous: ConnectionRow[] = [];
  input.target_platforms.forEach((platform, i) => {
    if (chosen.has(platform)) return;
    const candidates = usable.filter((c) => c.platformSlug === platform);
    if (candidates.length === 0) throw invalid(`target_platforms[${i}]`, `brand ${input.brand_id} has no active connection on ${platform}`);
    if (candidates.length === 1) chosen.set(platform, candidates[0]!);
    else ambiguous.push(...candidates);
  });
  if (ambiguous.length > 0) {
    const platforms = [...new Set(ambiguous.map((c) => c.platformSlug))].join(', ');
    throw new ServiceError('connections_required', `The brand has several connections on ${platforms}; choose one per platform with target_connections.`, {
      connections: ambiguous.map((c) => ({ id: c.id, name: c.name, platform_slug: c.platformSlug })),
    });
  }
  return chosen;
}

/** Text, title and thread for one platform, or the 7.2 error that stops the request. */
function shapeText(platform: PlatformSlug, input: CreateContentInput): { text: string | null; title: string | null; thread: string[] | null } {
  const info = platformFor(platform, input.content_type);
  const override = input.overrides?.[platform];
  const text = override?.text ?? input.text ?? null;
  const title = override?.title ?? input.title ?? null;
  const textPath = override?.text !== undefined ? `overrides.${platform}.text` : 'text';
  const titlePath = override?.title !== undefined ? `overrides.${platform}.title` : 'title';
  let thread: string[] | null = null;
  const length = (t: string) => textLengthOn(platform, t);

  if (input.content_type === 'thread') {
    const max = info.limits.threadMaxPosts ?? 1;
    thread = input.thread ?? null;
    if (thread === null && text !== null && input.thread_split === 'auto') {
      thread = splitIntoThread(text, { maxChars: info.limits.textMaxChars, measure: length, maxPosts: max, numbering: input.thread_numbering === true });
      if (thread === null) throw tooLong(platform, 'text', textPath, info.limits.textMaxChars * max, length(text), ` Even split, it needs more than ${max} posts.`);
    }
    if (thread === null) throw invalid('thread', 'content_type thread needs `thread` (or `text` with thread_split auto)');
    if (thread.length > max) throw invalid('thread', `at most ${max} posts`);
    thread.forEach((post, i) => {
      if (length(post) > info.limits.textMaxChars) throw tooLong(platform, `post ${i + 1} of the thread`, `thread[${i}]`, info.limits.textMaxChars, length(post));
    });
  } else if (text !== null && length(text) > info.limits.textMaxChars) {
    const splittable = info.limits.threadMaxPosts !== null;
    if (splittable && input.thread_split === 'auto') {
      thread = splitIntoThread(text, { maxChars: info.limits.textMaxChars, measure: length, maxPosts: info.limits.threadMaxPosts ?? 1, numbering: input.thread_numbering === true });
      if (thread === null) throw tooLong(platform, 'text', textPath, info.limits.textMaxChars, length(text), ' It is too long even for a full thread.');
    } else {
      throw tooLong(platform, 'text', textPath, info.limits.textMaxChars, length(text), splittable ? ' Reduce it, or send thread_split: "auto" to publish it as a thread.' : ' Reduce it.');
    }
  }
  if (info.titleRequired && (title === null || title.trim() === '')) throw invalid('title', `${info.name} needs a title`);
  // A title is counted as the network counts its text (TikTok's in UTF-16 code units).
  if (info.limits.titleMaxChars !== null && title !== null && length(title) > info.limits.titleMaxChars) {
    throw tooLong(platform, 'title', titlePath, info.limits.titleMaxChars, length(title));
  }
  return { text, title, thread };
}

/**
 * Spec 7.4 `media_unsupported_format`, raised at creation: a photo whose known type the platform refuses
 * (`photoTypes`), named by its field path as `media_too_large` names its item. An address that reported no type,
 * or a type that is not an image, is left to the network: nothing here would be sure.
 */
function refuseUnsupportedPhotos(platform: PlatformSlug, media: readonly PlannedMedia[]): void {
  const accepted = PLATFORMS[platform].limits.photoTypes;
  if (accepted === null) return;
  const refused = media.findIndex((m) => m.contentType !== null && m.contentType.startsWith('image/') && !accepted.includes(m.contentType));
  if (refused < 0) return;
  const item = media[refused]!;
  const path = `media[${refused}].${item.url !== null ? 'url' : 'media_id'}`;
  const names = accepted.map((t) => t.replace('image/', '').toUpperCase()).join(' or ');
  const why = `is ${item.contentType}; ${PLATFORMS[platform].name} (${platform}) accepts photos as ${names} only`;
  throw new ServiceError('media_unsupported_format', `media[${refused}] ${why}. Convert it, or leave ${platform} out.`, {
    platform_slug: platform,
    accepted: [...accepted],
    fields: [{ path, message: why }],
  });
}

/**
 * TikTok's Direct Post guidelines leave privacy and interactions to the creator, with no default: a live TikTok
 * target needs them in `network_options.tiktok` (duet and stitch only for videos). A sandbox connection may omit
 * them. Whether the level is one this creator is offered is known only from TikTok, when publishing.
 */
function tiktokSettings(input: CreateContentInput, connection: ConnectionRow): TiktokSettings | null {
  const settings = input.network_options?.tiktok ?? null;
  const path = 'network_options.tiktok';
  if (settings === null) {
    if (connection.mode !== 'live') return null;
    throw invalid(path, 'TikTok asks the creator to choose who can see the post and whether others may comment, duet and stitch: send privacy_level, allow_comment, allow_duet and allow_stitch (the last two for videos)');
  }
  if (input.content_type !== 'photo') {
    for (const field of ['allow_duet', 'allow_stitch'] as const) {
      if (settings[field] === undefined) throw invalid(`${path}.${field}`, `required for a TikTok ${input.content_type}: the creator chooses it, with no default`);
    }
  }
  return settings;
}

type Probed = MediaProbeResult | { ok: false; reason: 'deadline' };

/**
 * Probes every address at once under one deadline: each probe is aborted at the deadline and, should a probe not
 * honour its signal, stops being waited for then too. No request waits on its media longer than `deadlineMs`.
 */
async function probeAll(urls: string[], probe: ProbeMedia, deadlineMs: number): Promise<Probed[]> {
  if (urls.length === 0) return [];
  const deadline = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const passed = new Promise<Probed>((resolve) => {
    timer = setTimeout(() => {
      deadline.abort();
      resolve({ ok: false, reason: 'deadline' });
    }, deadlineMs);
  });
  try {
    return await Promise.all(
      urls.map((url) =>
        Promise.race([
          probe(url, deadline.signal).then((r): Probed => (deadline.signal.aborted && !r.ok ? { ok: false, reason: 'deadline' } : r)),
          passed,
        ]),
      ),
    );
  } finally {
    clearTimeout(timer);
    deadline.abort();
  }
}

/** A declared `Content-Type` reduced to its media type, when it names an image or a video; else null. */
function mediaTypeOf(declared: string | null): string | null {
  const type = declared?.split(';')[0]?.trim().toLowerCase() ?? '';
  return /^(image|video)\/[a-z0-9.+-]+$/.test(type) ? type : null;
}

/** Resolves and sizes the media items (uploads by id, URLs by probe, all probes together under one deadline). */
async function resolveMedia(db: Kysely<Database>, workspaceId: string, input: CreateContentInput, probe: ProbeMedia, options: PlanOptions): Promise<PlannedMedia[]> {
  const items = input.media ?? [];
  const kind = mediaKindOf(input.content_type);
  if (kind !== null && items.length === 0) throw invalid('media', `content_type ${input.content_type} needs at least one media item`);
  const tooMany = mediaCountRefusal(input.content_type, items.length);
  if (tooMany !== null) throw invalid('media', tooMany);
  // Uploads first, in order: a wrong id is refused before any address is contacted.
  const uploads = new Map<number, PlannedMedia>();
  for (const [i, item] of items.entries()) {
    if (!('media_id' in item)) continue;
    const media = await findMedia(db, workspaceId, item.media_id);
    if (!media) throw invalid(`media[${i}].media_id`, `${item.media_id} is not an upload of this workspace`);
    uploads.set(i, { url: null, mediaId: media.id, sizeBytes: media.sizeBytes, storagePath: media.storagePath, contentType: media.contentType });
  }
  const deadlineMs = options.probeDeadlineMs ?? MEDIA_PROBE_DEADLINE_MS;
  const byUrl = items.flatMap((item, i) => ('url' in item ? [{ i, url: item.url }] : []));
  const probed = await probeAll(byUrl.map((u) => u.url), probe, deadlineMs);
  const results = new Map(byUrl.map((u, n) => [u.i, { url: u.url, result: probed[n]! }]));

  const out: PlannedMedia[] = [];
  for (const i of items.keys()) {
    const upload = uploads.get(i);
    if (upload) {
      out.push(upload);
      continue;
    }
    const { url, result } = results.get(i)!;
    if (!result.ok) {
      const why =
        result.reason === 'blocked'
          ? 'is not a public https address'
          : result.reason === 'http_error'
            ? `answered HTTP ${result.status ?? 'error'}`
            : result.reason === 'deadline'
              ? `did not answer within ${deadlineMs / 1000} s (the media addresses of a request are checked together, within that time)`
              : 'could not be reached';
      throw invalid(`media[${i}].url`, `the address ${why}`);
    }
    out.push({ url, mediaId: null, sizeBytes: result.size, storagePath: null, contentType: mediaTypeOf(result.contentType) });
  }
  return out;
}

/**
 * Runs every check of a content request, in the order an integrator can act on, before anything is stored:
 * brand, platform compatibility, connections, text limits, media sizes and types, sandbox outcomes.
 * @throws ServiceError `not_found`, `validation_failed`, `platform_not_supported`, `connections_required`,
 *   `caption_too_long`, `media_too_large`, `media_unsupported_format`.
 */
export async function planContent(
  db: Kysely<Database>,
  workspaceId: string,
  input: CreateContentInput,
  probe: ProbeMedia,
  options: PlanOptions = {},
): Promise<ContentPlan> {
  const brand = await findBrandContext(db, workspaceId, input.brand_id);
  if (!brand) throw brandNotFound(input.brand_id);

  for (const platform of input.target_platforms) {
    const info = PLATFORMS[platform];
    if (!info.contentTypes.includes(input.content_type)) {
      throw new ServiceError(
        'platform_not_supported',
        `${info.name} (${platform}) does not publish content_type ${input.content_type}; it accepts ${info.contentTypes.join(', ')}.`,
        { platform_slug: platform },
      );
    }
  }
  for (const key of Object.keys(input.overrides ?? {})) {
    if (!input.target_platforms.includes(key as PlatformSlug)) throw invalid(`overrides.${key}`, 'is not a target platform');
  }
  for (const key of Object.keys(input.network_options ?? {})) {
    if (!input.target_platforms.includes(key as PlatformSlug)) throw invalid(`network_options.${key}`, 'is not a target platform');
  }

  const connections = resolveConnections(brand.connections, input);
  const shaped = new Map(input.target_platforms.map((p) => [p, shapeText(p, input)]));
  const tiktok = connections.has('tiktok') ? tiktokSettings(input, connections.get('tiktok')!) : null;

  for (const [platform, outcome] of Object.entries(input.sandbox_outcomes ?? {})) {
    const conn = connections.get(platform as PlatformSlug);
    if (!conn) throw invalid(`sandbox_outcomes.${platform}`, 'is not a target platform');
    if (conn.mode !== 'sandbox') throw invalid(`sandbox_outcomes.${platform}`, `accepted only on sandbox connections; ${conn.id} is live (${outcome} was asked)`);
  }

  const media = await resolveMedia(db, workspaceId, input, probe, options);
  const kind = mediaKindOf(input.content_type);
  if (kind !== null) {
    for (const platform of input.target_platforms) {
      const limit = PLATFORMS[platform].limits.mediaMaxBytes[kind];
      const over = media.findIndex((m) => limit !== null && m.sizeBytes !== null && m.sizeBytes > limit);
      if (limit !== null && over >= 0) {
        const item = media[over]!;
        // The item's field path goes in `fields` (as validation_failed names its paths), so a client places the
        // refusal next to the address or upload it concerns without reading the message.
        const path = `media[${over}].${item.url !== null ? 'url' : 'media_id'}`;
        const why = `is ${item.sizeBytes} bytes; ${PLATFORMS[platform].name} (${platform}) accepts a ${kind} of at most ${limit} bytes`;
        throw new ServiceError('media_too_large', `media[${over}] ${why}.`, { platform_slug: platform, limit, fields: [{ path, message: why }] });
      }
    }
  }
  if (kind === 'photo') for (const platform of input.target_platforms) refuseUnsupportedPhotos(platform, media);

  return {
    brandId: input.brand_id,
    workspacePlan: brand.plan,
    contentType: input.content_type,
    text: input.text ?? null,
    title: input.title ?? null,
    media,
    targets: input.target_platforms.map((platform) => ({
      platform,
      connection: connections.get(platform)!,
      ...shaped.get(platform)!,
      sandboxOutcome: input.sandbox_outcomes?.[platform] ?? null,
      tiktok: platform === 'tiktok' ? tiktok : null,
    })),
  };
}
