/**
 * HTML built from tagged templates: every interpolated value is escaped unless it is itself `SafeHtml`, so a
 * page cannot forget to escape. Arrays are joined; null, undefined and false render nothing.
 */

export class SafeHtml {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

export type Renderable = SafeHtml | string | number | boolean | null | undefined | readonly Renderable[];

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

function render(value: Renderable): string {
  if (value instanceof SafeHtml) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Renderable[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new SafeHtml(out);
}

/** Text already known to be safe HTML (a constant of ours). Never pass user input. */
export function trusted(text: string): SafeHtml {
  return new SafeHtml(text);
}

/** Renders `items` with `each`, or `empty` when there are none. */
export function list<T>(items: readonly T[], each: (item: T, index: number) => SafeHtml, empty: SafeHtml | string = ''): SafeHtml {
  return items.length === 0 ? html`${empty}` : new SafeHtml(items.map((item, i) => each(item, i).text).join(''));
}
