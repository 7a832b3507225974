import { describe, expect, it } from 'vitest';
import { splitIntoThread } from '../../src/core/contents/thread-split.js';
import { textLengthOn } from '../../src/vocabulary/platforms.js';
import { measureText } from '../../src/vocabulary/text-length.js';

describe('text length as each network counts it', () => {
  it('code points, graphemes and X weighting differ on the same text', () => {
    const family = '👨\u200d👩\u200d👧';
    expect(measureText('code_points', family)).toBe(5);
    expect(measureText('graphemes', family)).toBe(1);
    expect(measureText('x_weighted', family)).toBe(2);
    expect(measureText('x_weighted', 'hello')).toBe(5);
    expect(measureText('x_weighted', 'café')).toBe(4);
    expect(measureText('x_weighted', '漢字')).toBe(4);
    expect(measureText('x_weighted', `see https://example.com/${'a'.repeat(100)} now`)).toBe(4 + 23 + 4);
    expect(textLengthOn('bluesky', 'é'.normalize('NFD'))).toBe(1);
    expect(measureText('mastodon', `hi @alice@example.social see https://example.com/${'a'.repeat(100)}`)).toBe('hi @alice see '.length + 23);
    expect(measureText('mastodon', family)).toBe(1);
    expect(textLengthOn('threads', 'é'.normalize('NFD'))).toBe(2);
    // TikTok counts UTF-16 code units: an emoji outside the basic plane is 2, a letter with its accent is 1 or 2.
    expect(measureText('utf16', family)).toBe(8);
    expect(textLengthOn('tiktok', '😀')).toBe(2);
    expect(textLengthOn('tiktok', 'é')).toBe(1);
  });

  it('a text split for X keeps every post within 280 weighted characters, cutting inside long CJK runs', () => {
    const text = '漢字'.repeat(200);
    const posts = splitIntoThread(text, { maxChars: 280, maxPosts: 25, numbering: false, measure: (t) => textLengthOn('x', t) });
    expect(posts).not.toBeNull();
    expect(posts!.length).toBe(3);
    for (const post of posts!) expect(textLengthOn('x', post)).toBeLessThanOrEqual(280);
    expect(posts!.join('')).toBe(text);
  });
});
