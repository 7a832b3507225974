/** How much of a receiver's answer an attempt keeps (README, Webhook debugging): enough to read an error page's first lines. */
export const RESPONSE_EXCERPT_BYTES = 2048;

/**
 * The text kept of a receiver's answer: its first RESPONSE_EXCERPT_BYTES bytes as UTF-8 (a character cut at the
 * end is dropped), control characters other than tab and newline removed, null when nothing readable is left.
 * It is the receiver's text, not ours: only the endpoint's owner reads it, in the dashboard, escaped (house
 * style 4 keeps it out of REST and MCP answers).
 */
export function responseExcerpt(head: Uint8Array): string | null {
  const bytes = head.subarray(0, RESPONSE_EXCERPT_BYTES);
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes).replace(/\uFFFD+$/, '');
  // eslint-disable-next-line no-control-regex -- removing control characters is the point
  const clean = text.replace(/\r\n?/g, '\n').replace(/[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g, '').trim();
  return clean === '' ? null : clean;
}
