/**
 * The origin of a server a user names for a per-server network ("mastodon.social", "https://mastodon.social/"),
 * lower-cased; undefined when it is not a bare host or origin (a path, a query, credentials, another scheme).
 * Whether the address may be reached at all is the outbound guard's decision, at connect time.
 */
export function instanceOrigin(input: string): string | undefined {
  const text = input.trim();
  if (text === '' || /\s/.test(text)) return undefined;
  let url: URL;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || (url.pathname !== '/' && url.pathname !== '')) return undefined;
  return url.origin;
}
