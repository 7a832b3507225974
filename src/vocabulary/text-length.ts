/**
 * How each network counts the length of a post's text. Most count Unicode code points; Bluesky counts
 * graphemes (what a reader sees as one character); X weighs characters (most scripts outside Latin count twice)
 * and counts every link as 23, whatever its length; Mastodon counts graphemes, every link as 23 and a mention of
 * another server's account by its local part only (its StatusLengthValidator); TikTok counts UTF-16 code units
 * (its "runes": an emoji outside the basic plane counts 2).
 */
export type TextCounting = 'code_points' | 'graphemes' | 'x_weighted' | 'mastodon' | 'utf16';
export const TEXT_COUNTINGS: readonly TextCounting[] = ['code_points', 'graphemes', 'x_weighted', 'mastodon', 'utf16'];

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** X's weighting (its published twitter-text configuration, version 3): these ranges weigh 1, the rest 2. */
const X_LIGHT_RANGES: readonly (readonly [number, number])[] = [
  [0, 4351],
  [8192, 8205],
  [8208, 8223],
  [8242, 8247],
];
/** X shortens every link to a t.co address of this many characters. */
const X_LINK_WEIGHT = 23;
const X_LINK = /\bhttps?:\/\/[^\s]+/gi;

const weightOf = (codePoint: number) => (X_LIGHT_RANGES.some(([lo, hi]) => codePoint >= lo && codePoint <= hi) ? 1 : 2);

function xWeight(text: string): number {
  let total = 0;
  let rest = text;
  for (const link of text.match(X_LINK) ?? []) {
    total += X_LINK_WEIGHT;
    rest = rest.replace(link, '');
  }
  for (const segment of graphemes.segment(rest)) {
    const cluster = segment.segment;
    const first = cluster.codePointAt(0) ?? 0;
    // An emoji (with its modifiers and joiners) counts as one heavy character.
    if (/\p{Extended_Pictographic}/u.test(cluster)) total += 2;
    else total += Array.from(cluster).reduce((sum, ch) => sum + weightOf(ch.codePointAt(0) ?? first), 0);
  }
  return total;
}

/** `@alice@example.social` counts as `@alice` on Mastodon. */
const REMOTE_MENTION = /(^|[^\w@])(@\w+)@[\w.-]+\w/gu;

function mastodonLength(text: string): number {
  let links = 0;
  const bare = text.replace(X_LINK, () => {
    links++;
    return '';
  });
  return links * X_LINK_WEIGHT + Array.from(graphemes.segment(bare.replace(REMOTE_MENTION, '$1$2'))).length;
}

/** The length of `text` as the network counts it. */
export function measureText(counting: TextCounting, text: string): number {
  switch (counting) {
    case 'code_points':
      return Array.from(text).length;
    case 'graphemes':
      return Array.from(graphemes.segment(text)).length;
    case 'x_weighted':
      return xWeight(text);
    case 'mastodon':
      return mastodonLength(text);
    case 'utf16':
      return text.length;
  }
}
