import { PLATFORMS, type PlatformSlug, textLengthOn } from '../../../vocabulary/platforms.js';
import { number } from '../../layout.js';

/**
 * The live counters' words, as the page first shows them; app.js writes the same words as the user types, with
 * the same counting rules (src/vocabulary/text-length.ts, served to the browser as /dashboard/assets/text-length.js).
 */

/** Code points: what most networks count, and what the counter says first. */
export const chars = (s: string) => Array.from(s).length;

/**
 * One network's part of the main text's counter: its limit, and its own count when it counts otherwise (X weighs
 * links and most scripts outside Latin, Bluesky and Mastodon count graphemes), so a text is never shown as fitting
 * a network that will refuse it.
 */
export function networkCount(slug: PlatformSlug, text: string): { label: string; over: boolean } {
  const info = PLATFORMS[slug];
  const limit = info.limits.textMaxChars;
  const counted = textLengthOn(slug, text);
  const label = counted === chars(text) ? `${info.name} ${number(limit)}` : `${info.name} counts ${number(counted)} of ${number(limit)}`;
  return { label, over: counted > limit };
}

/** The counting rule of each network, for app.js (`data-countings`). */
export const COUNTINGS = Object.fromEntries(Object.entries(PLATFORMS).map(([slug, info]) => [slug, info.textCounting]));
