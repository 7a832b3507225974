import { type ContentType, mediaKindOf } from '../../vocabulary/platforms.js';

/** Most media items one content carries (the request schema's bound on `media`). */
export const MEDIA_ITEMS_MAX = 10;

/**
 * How many media items a content type takes. A video or a reel is one video: the networks publish a video alone
 * (a YouTube video and an Instagram reel hold exactly one, an X or Mastodon post one video and nothing else, a
 * LinkedIn post one video or images), so a second file could only fail later, network by network.
 */
export function mediaItemsMax(type: ContentType): number {
  return mediaKindOf(type) === 'video' ? 1 : MEDIA_ITEMS_MAX;
}

/** Why `count` media items do not fit a content of `type`, or null when they do. */
export function mediaCountRefusal(type: ContentType, count: number): string | null {
  const max = mediaItemsMax(type);
  if (count <= max) return null;
  return max === 1 ? `content_type ${type} takes one media item (a single video); got ${count}` : `a content takes at most ${max} media items; got ${count}`;
}
