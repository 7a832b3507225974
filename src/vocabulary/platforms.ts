/**
 * The platforms and their limits (spec 8), in one table that validation, the sandbox and GET /platforms share.
 * Network limits change: keep this file the single place to update them.
 */

export const PLATFORM_SLUGS = ['instagram', 'facebook', 'threads', 'youtube', 'linkedin'] as const;
export type PlatformSlug = (typeof PLATFORM_SLUGS)[number];

export const CONTENT_TYPES = ['text', 'photo', 'video', 'reel', 'thread'] as const;
export type ContentType = (typeof CONTENT_TYPES)[number];

export type MediaKind = 'photo' | 'video';

export interface PlatformLimits {
  /** Characters of the post text (caption, commentary, description). */
  textMaxChars: number;
  /** Characters of the title, on networks that have one. */
  titleMaxChars: number | null;
  /** Posts in a chained thread, on the short-post network. */
  threadMaxPosts: number | null;
  /** Largest file per media kind, in bytes; null when the spec gives no figure. */
  mediaMaxBytes: Record<MediaKind, number | null>;
  /** Publications per day per account that the network allows, when known. */
  dailyPosts: number | null;
}

export interface PlatformInfo {
  slug: PlatformSlug;
  name: string;
  /** The spec's kind of network. */
  kind: 'photo/reel' | 'photo-and-page' | 'short-post' | 'video' | 'professional-text';
  contentTypes: readonly ContentType[];
  /** Whether the post needs at least one media item for each content type. */
  limits: PlatformLimits;
  /** Whether the title is required (video network). */
  titleRequired: boolean;
  /** Base of public post URLs. */
  postUrlBase: string;
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
    limits: { textMaxChars: 2200, titleMaxChars: null, threadMaxPosts: null, mediaMaxBytes: { photo: 8 * MB, video: 4 * GB }, dailyPosts: 25 },
    titleRequired: false,
    postUrlBase: 'https://www.instagram.com/p/',
  },
  facebook: {
    slug: 'facebook',
    name: 'Facebook Pages',
    kind: 'photo-and-page',
    contentTypes: ['text', 'photo', 'video', 'reel'],
    limits: { textMaxChars: 63206, titleMaxChars: null, threadMaxPosts: null, mediaMaxBytes: { photo: 30 * MB, video: null }, dailyPosts: null },
    titleRequired: false,
    postUrlBase: 'https://www.facebook.com/',
  },
  threads: {
    slug: 'threads',
    name: 'Threads',
    kind: 'short-post',
    contentTypes: ['text', 'photo', 'video', 'thread'],
    limits: { textMaxChars: 500, titleMaxChars: null, threadMaxPosts: 25, mediaMaxBytes: { photo: null, video: null }, dailyPosts: 250 },
    titleRequired: false,
    postUrlBase: 'https://www.threads.net/post/',
  },
  youtube: {
    slug: 'youtube',
    name: 'YouTube',
    kind: 'video',
    contentTypes: ['video', 'reel'],
    limits: { textMaxChars: 5000, titleMaxChars: 100, threadMaxPosts: null, mediaMaxBytes: { photo: null, video: 256 * GB }, dailyPosts: null },
    titleRequired: true,
    postUrlBase: 'https://www.youtube.com/watch?v=',
  },
  linkedin: {
    slug: 'linkedin',
    name: 'LinkedIn',
    kind: 'professional-text',
    contentTypes: ['text', 'photo', 'video'],
    limits: { textMaxChars: 3000, titleMaxChars: null, threadMaxPosts: null, mediaMaxBytes: { photo: null, video: 5 * GB }, dailyPosts: null },
    titleRequired: false,
    postUrlBase: 'https://www.linkedin.com/feed/update/',
  },
};

/** Which media kind a content type carries, or null for text-only types. */
export function mediaKindOf(type: ContentType): MediaKind | null {
  if (type === 'photo') return 'photo';
  if (type === 'video' || type === 'reel') return 'video';
  return null;
}

/** The service's cap for media whose address does not report a size (spec 8). */
export const UNKNOWN_SIZE_MEDIA_CAP_BYTES = 100 * MB;
