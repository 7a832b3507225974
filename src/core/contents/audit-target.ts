import type { AuditTarget } from '../audit/record.js';

const LABEL_CHARS = 60;

/** A content's first words (its text, else its title), short enough to read in a list of entries. */
function firstWords(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= LABEL_CHARS) return flat;
  const cut = flat.slice(0, LABEL_CHARS);
  const space = cut.lastIndexOf(' ');
  return `${space > LABEL_CHARS / 2 ? cut.slice(0, space) : cut}…`;
}

/**
 * A content as the audit log names it: its id and its first words, copied now so the entry reads after edits.
 * `input` is the stored fields' JSON or the fields themselves; a content without text is named by its type.
 */
export function contentTarget(id: string, input: string | { text?: string | undefined; title?: string | undefined } | null, contentType?: string): AuditTarget {
  let fields: { text?: unknown; title?: unknown } = {};
  if (typeof input === 'string') {
    try {
      fields = JSON.parse(input) as { text?: unknown; title?: unknown };
    } catch {
      fields = {};
    }
  } else if (input !== null) {
    fields = input;
  }
  const words = [fields.text, fields.title].find((v): v is string => typeof v === 'string' && v.trim() !== '');
  return { type: 'content', id, label: words === undefined ? (contentType ?? null) : firstWords(words) };
}
