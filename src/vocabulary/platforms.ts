import { measureText, type TextCounting } from './text-length.js';

/**
 * The platforms and their limits (spec 8), in one table that validation, the sandbox and GET /platforms share.
 * Network limits change: keep this file the single place to update them.
 */

export const PLATFORM_SLUGS = ['instagram', 'facebook', 'threads', 'youtube', 'linkedin', 'x', 'bluesky', 'mastodon', 'tiktok', 'pinterest'] as const;
export type PlatformSlug = (typeof PLATFORM_SLUGS)[number];

export const CONTENT_TYPES = ['text', 'photo', 'video', 'reel', 'thread'] as const;
export type ContentType = (typeof CONTENT_TYPES)[number];

export type MediaKind = 'photo' | 'video';

export interface PlatformLimits {
  /** Characters of the post text (caption, commentary, description). */
  textMaxChars: number;
  /** Characters of a photo post's text, where the network allows another length than `textMaxChars`. */
  photoTextMaxChars: number | null;
  /** Characters of the title, on networks that have one. */
  titleMaxChars: number | null;
  /** Posts in a chained thread, on the short-post network. */
  threadMaxPosts: number | null;
  /** Largest file per media kind, in bytes; null when the spec gives no figure. */
  mediaMaxBytes: Record<MediaKind, number | null>;
  /** Publications per day per account that the network allows, when known. */
  dailyPosts: number | null;
  /**
   * The image types (MIME) a photo post may carry, where the network takes fewer than the usual JPEG, PNG, GIF
   * and WebP; null where the network converts or accepts them all. Checked at creation, before any charge.
   */
  photoTypes: readonly string[] | null;
}

export interface PlatformInfo {
  slug: PlatformSlug;
  name: string;
  /** The spec's kind of network. */
  kind: 'photo/reel' | 'photo-and-page' | 'short-post' | 'video' | 'professional-text' | 'pin-board';
  contentTypes: readonly ContentType[];
  /** Whether the post needs at least one media item for each content type. */
  limits: PlatformLimits;
  /** Whether the title is required (video network). */
  titleRequired: boolean;
  /** Base of public post URLs. */
  postUrlBase: string;
  /** How the network counts `textMaxChars` and `titleMaxChars` (see text-length.ts). */
  textCounting: TextCounting;
  /**
   * How a live connection is made: the network's OAuth with this installation's client id (`oauth`), OAuth
   * with an app registered on the user's own server (`instance_oauth`), or the account's app password.
   */
  connect: 'oauth' | 'instance_oauth' | 'app_password';
  /**
   * The places inside one account a live connection can publish to and be moved between (Pinterest: the
   * account's boards), or null where a connection publishes to the account itself. A fact about the network,
   * whether or not live connections are configured here.
   */
  places: 'boards' | null;
}

const MB = 1024 * 1024;
const GB = 1024 * MB;

export const PLATFORMS: Record<PlatformSlug, PlatformInfo> = {
  instagram: {
    slug: 'instagram',
    name: 'Instagram',
    kind: 'photo/reel',
    // A video is published as a reel (the Graph API's media_type REELS).
    contentTypes: ['photo', 'video', 'reel'],
    // Content Publishing: an image container takes JPEG only (a PNG container ends in ERROR); 100 API-published
    // posts per account in a moving 24 hours (content_publishing_limit).
    limits: { textMaxChars: 2200, photoTextMaxChars: null, titleMaxChars: null, threadMaxPosts: null, mediaMaxBytes: { photo: 8 * MB, video: 4 * GB }, dailyPosts: 100, photoTypes: ['image/jpeg'] },
    titleRequired: false,
    postUrlBase: 'https://www.instagram.com/p/',
    textCounting: 'code_points',
    connect: 'oauth',
    places: null,
  },
  facebook: {
    slug: 'facebook',
    name: 'Facebook Pages',
    kind: 'photo-and-page',
    contentTypes: ['text', 'photo', 'video', 'reel'],
    limits: { textMaxChars: 63206, photoTextMaxChars: null, titleMaxChars: null, threadMaxPosts: null, mediaMaxBytes: { photo: 30 * MB, video: null }, dailyPosts: null, photoTypes: null },
    titleRequired: false,
    postUrlBase: 'https://www.facebook.com/',
    textCounting: 'code_points',
    connect: 'oauth',
    places: null,
  },
  threads: {
    slug: 'threads',
    name: 'Threads',
    kind: 'short-post',
    contentTypes: ['text', 'photo', 'video', 'thread'],
    limits: { textMaxChars: 500, photoTextMaxChars: null, titleMaxChars: null, threadMaxPosts: 25, mediaMaxBytes: { photo: null, video: null }, dailyPosts: 250, photoTypes: null },
    titleRequired: false,
    postUrlBase: 'https://www.threads.net/post/',
    textCounting: 'code_points',
    connect: 'oauth',
    places: null,
  },
  youtube: {
    slug: 'youtube',
    name: 'YouTube',
    kind: 'video',
    contentTypes: ['video', 'reel'],
    limits: { textMaxChars: 5000, photoTextMaxChars: null, titleMaxChars: 100, threadMaxPosts: null, mediaMaxBytes: { photo: null, video: 256 * GB }, dailyPosts: null, photoTypes: null },
    titleRequired: true,
    postUrlBase: 'https://www.youtube.com/watch?v=',
    textCounting: 'code_points',
    connect: 'oauth',
    places: null,
  },
  linkedin: {
    slug: 'linkedin',
    name: 'LinkedIn',
    kind: 'professional-text',
    contentTypes: ['text', 'photo', 'video'],
    limits: { textMaxChars: 3000, photoTextMaxChars: null, titleMaxChars: null, threadMaxPosts: null, mediaMaxBytes: { photo: null, video: 5 * GB }, dailyPosts: null, photoTypes: null },
    titleRequired: false,
    postUrlBase: 'https://www.linkedin.com/feed/update/',
    textCounting: 'code_points',
    connect: 'oauth',
    places: null,
  },
  x: {
    slug: 'x',
    name: 'X',
    kind: 'short-post',
    contentTypes: ['text', 'photo', 'video', 'thread'],
    // 280 weighted characters; a thread is a chain of replies. Photos 5 MB, videos 512 MB (media upload).
    limits: { textMaxChars: 280, photoTextMaxChars: null, titleMaxChars: null, threadMaxPosts: 25, mediaMaxBytes: { photo: 5 * MB, video: 512 * MB }, dailyPosts: 100, photoTypes: null },
    titleRequired: false,
    postUrlBase: 'https://x.com/i/web/status/',
    textCounting: 'x_weighted',
    connect: 'oauth',
    places: null,
  },
  bluesky: {
    slug: 'bluesky',
    name: 'Bluesky',
    kind: 'short-post',
    contentTypes: ['text', 'photo', 'video', 'thread'],
    // 300 graphemes per post; an image blob is at most 1,000,000 bytes, a video 100 MB.
    limits: { textMaxChars: 300, photoTextMaxChars: null, titleMaxChars: null, threadMaxPosts: 25, mediaMaxBytes: { photo: 1_000_000, video: 100 * MB }, dailyPosts: null, photoTypes: null },
    titleRequired: false,
    postUrlBase: 'https://bsky.app/profile/',
    textCounting: 'graphemes',
    connect: 'app_password',
    places: null,
  },
  mastodon: {
    slug: 'mastodon',
    name: 'Mastodon',
    kind: 'short-post',
    contentTypes: ['text', 'photo', 'video', 'thread'],
    // Mastodon's defaults; each instance may set its own (the adapter reads /api/v2/instance before posting).
    limits: { textMaxChars: 500, photoTextMaxChars: null, titleMaxChars: null, threadMaxPosts: 25, mediaMaxBytes: { photo: 16 * MB, video: 99 * MB }, dailyPosts: null, photoTypes: null },
    titleRequired: false,
    postUrlBase: 'https://mastodon.social/@',
    textCounting: 'mastodon',
    connect: 'instance_oauth',
    places: null,
  },
  tiktok: {
    slug: 'tiktok',
    name: 'TikTok',
    kind: 'video',
    contentTypes: ['video', 'reel', 'photo'],
    // A video's caption is 2,200 UTF-16 code units; a photo post's description 4,000 and its title 90; about 15 posts
    // per creator per day through the API. Photo posts take JPEG and WebP only (others fail at PROCESSING_DOWNLOAD).
    limits: { textMaxChars: 2200, photoTextMaxChars: 4000, titleMaxChars: 90, threadMaxPosts: null, mediaMaxBytes: { photo: 20 * MB, video: 4 * GB }, dailyPosts: 15, photoTypes: ['image/jpeg', 'image/webp'] },
    titleRequired: false,
    postUrlBase: 'https://www.tiktok.com/@',
    textCounting: 'utf16',
    connect: 'oauth',
    places: null,
  },
  pinterest: {
    slug: 'pinterest',
    name: 'Pinterest',
    kind: 'pin-board',
    contentTypes: ['photo', 'video'],
    // A pin's description is 800 characters (PinCreate.description) and its title 100; images up to 20 MB, videos 2 GB.
    limits: { textMaxChars: 800, photoTextMaxChars: null, titleMaxChars: 100, threadMaxPosts: null, mediaMaxBytes: { photo: 20 * MB, video: 2 * GB }, dailyPosts: null, photoTypes: null },
    titleRequired: false,
    postUrlBase: 'https://www.pinterest.com/pin/',
    textCounting: 'code_points',
    connect: 'oauth',
    places: 'boards',
  },
};

/**
 * The platform's description with the text limit of one content type in `limits.textMaxChars` (a TikTok photo
 * post's description is longer than a video's caption), for the checks that know what is posted.
 */
export function platformFor(slug: PlatformSlug, type: ContentType): PlatformInfo {
  const info = PLATFORMS[slug];
  const photoText = info.limits.photoTextMaxChars;
  return type === 'photo' && photoText !== null ? { ...info, limits: { ...info.limits, textMaxChars: photoText } } : info;
}

/** TikTok's privacy levels (Content Posting API `privacy_level`); a creator is offered some of them. */
export const TIKTOK_PRIVACY_LEVELS = ['PUBLIC_TO_EVERYONE', 'MUTUAL_FOLLOW_FRIENDS', 'FOLLOWER_OF_CREATOR', 'SELF_ONLY'] as const;
export type TiktokPrivacyLevel = (typeof TIKTOK_PRIVACY_LEVELS)[number];

/** The length of `text` as `slug` counts it against `textMaxChars`. */
export function textLengthOn(slug: PlatformSlug, text: string): number {
  return measureText(PLATFORMS[slug].textCounting, text);
}

/** Which media kind a content type carries, or null for text-only types. */
export function mediaKindOf(type: ContentType): MediaKind | null {
  if (type === 'photo') return 'photo';
  if (type === 'video' || type === 'reel') return 'video';
  return null;
}

/** The service's cap for media whose address does not report a size (spec 8). */
export const UNKNOWN_SIZE_MEDIA_CAP_BYTES = 100 * MB;
