/**
 * Splits a long text into a chain of posts of at most `maxChars` characters: at sentence ends where possible,
 * then at word boundaries, and only inside a word when one word is longer than a post. With `numbering`, each
 * post ends with " i/n" and the room for it is reserved. Returns null when it needs more than `maxPosts` posts.
 */
export function splitIntoThread(text: string, options: { maxChars: number; maxPosts: number; numbering: boolean; measure?: (text: string) => number }): string[] | null {
  const measure = options.measure ?? ((t: string) => Array.from(t).length);
  const clean = text.trim().replace(/[ \t]+/g, ' ');
  if (clean.length === 0) return [];
  // The suffix " 25/25" is the longest numbering for the maximum chain.
  const reserve = options.numbering ? ` ${options.maxPosts}/${options.maxPosts}`.length : 0;
  const room = options.maxChars - reserve;
  const posts: string[] = [];
  let current = '';

  const push = (piece: string) => {
    const candidate = current.length === 0 ? piece : `${current} ${piece}`;
    if (measure(candidate) <= room) {
      current = candidate;
      return;
    }
    if (current.length > 0) posts.push(current);
    current = '';
    // A single piece longer than a post: cut it at word boundaries, then hard.
    let rest = piece;
    while (measure(rest) > room) {
      const chars = Array.from(rest);
      let window = chars.slice(0, room).join('');
      // Networks that weigh characters (X counts most scripts outside Latin twice) fit fewer in the same room.
      while (measure(window) > room) window = Array.from(window).slice(0, -1).join('');
      const cut = window.lastIndexOf(' ');
      const head = cut > room / 3 ? window.slice(0, cut) : window;
      posts.push(head.trimEnd());
      rest = rest.slice(head.length).trimStart();
    }
    current = rest;
  };

  const sentences = clean.split(/(?<=[.!?…])\s+|\n+/).map((s) => s.trim()).filter((s) => s.length > 0);
  for (const sentence of sentences) push(sentence);
  if (current.length > 0) posts.push(current);

  if (posts.length > options.maxPosts) return null;
  if (!options.numbering || posts.length === 1) return posts;
  return posts.map((p, i) => `${p} ${i + 1}/${posts.length}`);
}
