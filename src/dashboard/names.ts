import type { Brand } from '../core/brands/brands.schema.js';
import type { Connection } from '../core/connections/connections.schema.js';
import type { Content } from '../core/contents/contents.schema.js';
import { allows } from '../core/permissions/authorize.js';
import { html, type SafeHtml } from '../web/html.js';
import type { PageContext } from './page-router.js';

/**
 * Names, not ids: what a person recognises a content, a connection or a brand by. Ids stay
 * reachable (a `title` or a line under the name) because support and the API speak in ids.
 */

/** How many characters of the first line title a content. */
export const TITLE_CHARS = 60;

/**
 * A content's title: the first non-blank line of its text (else its title, else its first thread post), trimmed
 * to about 60 characters at a word end; "Untitled photo" and the like when there is no text at all.
 */
export function contentTitle(content: Pick<Content, 'text' | 'title' | 'thread' | 'content_type'>): string {
  const source = [content.text, content.title, content.thread?.[0]].find((s) => s !== null && s !== undefined && s.trim() !== '') ?? '';
  const line = source.split('\n').find((l) => l.trim() !== '')?.replace(/\s+/g, ' ').trim() ?? '';
  if (line === '') return `Untitled ${content.content_type}`;
  const chars = Array.from(line);
  if (chars.length <= TITLE_CHARS) return line;
  const cut = chars.slice(0, TITLE_CHARS).join('');
  const space = cut.lastIndexOf(' ');
  return `${(space > TITLE_CHARS / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** The account's handle when the connection's name is one (`@acmecoffee`), else null. */
export function handleOf(connection: Pick<Connection, 'name'>): string | null {
  const match = /(^|\s|\()(@[\w.-]+)/.exec(connection.name);
  return match ? match[2]! : null;
}

/** A connection by its account name (and handle when that differs), marked when it is a sandbox. */
export function connectionLabel(connection: Pick<Connection, 'name' | 'mode'>): SafeHtml {
  return html`${connection.name}${connection.mode === 'sandbox' ? html` <span class="tag">sandbox</span>` : ''}`;
}

/** The names a page needs to show brands and connections by name: one read of each list. */
export interface Names {
  brands: Map<string, Brand>;
  connections: Map<string, Connection>;
}

export async function loadNames(ctx: PageContext): Promise<Names> {
  const { services } = ctx.deps;
  // Every connection, inactive ones too: an old post still names the account it went out from. A role that may not
  // read connections (a client reviewing posts) gets the brands' names only; its pages show networks without accounts.
  const connectionList = allows(ctx.principal, 'connections.read') ? services.connections.list(ctx.principal, ctx.workspaceId, {}) : Promise.resolve({ data: [] as Connection[] });
  const [{ data: brands }, { data: connections }] = await Promise.all([services.brands.list(ctx.principal, ctx.workspaceId), connectionList]);
  return { brands: new Map(brands.map((b) => [b.id, b])), connections: new Map(connections.map((c) => [c.id, c])) };
}

/** A brand by name, or its id when it was deleted since. */
export function brandName(names: Names, brandId: string): string {
  return names.brands.get(brandId)?.name ?? `${brandId} (deleted)`;
}
