/**
 * Rich-text facets (lexicon app.bsky.richtext.facet; docs.bsky.app "Links, mentions, and rich text"): Bluesky
 * has no markup, a post's links, mentions and hashtags are ranges of its text given in UTF-8 BYTE offsets
 * (byteStart inclusive, byteEnd exclusive). Facets may not overlap. Detection follows the rules of Bluesky's own
 * library (@atproto/api rich-text/detection.ts), with one difference said where it applies.
 */

export type FacetFeature =
  | { $type: 'app.bsky.richtext.facet#link'; uri: string }
  | { $type: 'app.bsky.richtext.facet#mention'; did: string }
  | { $type: 'app.bsky.richtext.facet#tag'; tag: string };

export interface Facet {
  index: { byteStart: number; byteEnd: number };
  features: FacetFeature[];
}

/** A range found in the text (UTF-16 offsets, as JavaScript strings index), before mentions are resolved. */
export interface Span {
  start: number;
  end: number;
  kind: 'link' | 'mention' | 'tag';
  /** The link's URI, the mentioned handle (no '@'), or the tag (no '#'). */
  value: string;
}

/** atproto handle syntax (atproto.com/specs/handle): dot-separated labels, the last one starting with a letter. */
const HANDLE = /^([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)+[a-zA-Z]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$/;
const MENTION = /(^|\s|\()@([a-zA-Z0-9.-]+)\b/g;
/**
 * Links with their scheme only. Bluesky's library also links bare domains (`example.com`) by checking the
 * top-level domain against the IANA list; without that list a bare word with a dot would be linked by mistake, so
 * such domains stay plain text.
 */
const LINK = /(^|\s|\()(https?:\/\/\S+)/gi;
const INVISIBLE = '\\u00AD\\u2060\\u200A\\u200B\\u200C\\u200D\\u20e2';
/** A '#' (or full-width '＃') after a space or the start, then a tag that is not only digits or punctuation. */
// The class lists invisible and combining characters one by one on purpose (they end a tag), which this rule flags.
// eslint-disable-next-line no-misleading-character-class
const TAG = new RegExp(`(^|\\s)[#＃]((?!\\ufe0f)[^\\s${INVISIBLE}]*[^\\d\\s\\p{P}${INVISIBLE}]+[^\\s${INVISIBLE}]*)?`, 'gu');
const TRAILING_PUNCTUATION = /\p{P}+$/u;
const TAG_MAX_GRAPHEMES = 64;
const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** Links, mentions and tags of `text`, in order, overlapping ones dropped (the first one wins). */
export function findSpans(text: string): Span[] {
  const spans: Span[] = [];
  for (const m of text.matchAll(MENTION)) {
    const handle = m[2] ?? '';
    if (!HANDLE.test(handle)) continue; // "@home" or "a@b" are not handles
    const start = (m.index ?? 0) + (m[1] ?? '').length;
    spans.push({ start, end: start + 1 + handle.length, kind: 'mention', value: handle.toLowerCase() });
  }
  for (const m of text.matchAll(LINK)) {
    let uri = m[2] ?? '';
    const start = (m.index ?? 0) + (m[1] ?? '').length;
    // A sentence's punctuation after a link is not part of it; nor is a closing parenthesis that opens nowhere.
    if (/[.,;:!?]$/.test(uri)) uri = uri.slice(0, -1);
    if (uri.endsWith(')') && !uri.includes('(')) uri = uri.slice(0, -1);
    spans.push({ start, end: start + uri.length, kind: 'link', value: uri });
  }
  for (const m of text.matchAll(TAG)) {
    const tag = (m[2] ?? '').trim().replace(TRAILING_PUNCTUATION, '');
    if (tag === '' || Array.from(graphemes.segment(tag)).length > TAG_MAX_GRAPHEMES) continue;
    const start = (m.index ?? 0) + (m[1] ?? '').length;
    spans.push({ start, end: start + 1 + tag.length, kind: 'tag', value: tag });
  }
  spans.sort((a, b) => a.start - b.start);
  const kept: Span[] = [];
  for (const s of spans) if (kept.length === 0 || s.start >= (kept.at(-1)?.end ?? 0)) kept.push(s);
  return kept;
}

/** UTF-8 byte offset of a UTF-16 offset. */
const byteOffset = (text: string, i: number): number => Buffer.byteLength(text.slice(0, i), 'utf8');

/**
 * The facets of `text`: every link and tag, and the mentions whose handle resolved to a DID (`dids`, by lowercase
 * handle); an unresolved mention stays plain text, as in Bluesky's app.
 */
export function facetsOf(text: string, spans: Span[], dids: ReadonlyMap<string, string>): Facet[] {
  const facets: Facet[] = [];
  for (const s of spans) {
    let feature: FacetFeature;
    if (s.kind === 'link') feature = { $type: 'app.bsky.richtext.facet#link', uri: s.value };
    else if (s.kind === 'tag') feature = { $type: 'app.bsky.richtext.facet#tag', tag: s.value };
    else {
      const did = dids.get(s.value);
      if (!did) continue;
      feature = { $type: 'app.bsky.richtext.facet#mention', did };
    }
    facets.push({ index: { byteStart: byteOffset(text, s.start), byteEnd: byteOffset(text, s.end) }, features: [feature] });
  }
  return facets;
}
