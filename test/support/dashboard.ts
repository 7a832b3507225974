import { expect } from 'vitest';
import type { Principal } from '../../src/core/principal.js';
import type { PlatformSlug } from '../../src/vocabulary/platforms.js';
import type { TestServer } from './server.js';

export interface DashboardPage {
  status: number;
  /** Where the answer came from, after following redirects. */
  url: string;
  html: string;
  headers: Headers;
}

/**
 * A cookie-keeping client for the web dashboard over plain HTTP: signs in with an API key, fetches pages,
 * follows redirects (303 after a form), and posts forms with the CSRF token of the last page it saw.
 */
export class DashboardClient {
  private readonly cookies = new Map<string, string>();
  /** The CSRF token found in the last page fetched. */
  csrf: string | undefined;

  constructor(readonly baseUrl: string) {}

  private store(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (/max-age=0/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  /** One request, no redirect following; cookies are kept. */
  async raw(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(new URL(path, this.baseUrl), { ...init, headers, redirect: 'manual' });
    this.store(res);
    return res;
  }

  private async follow(res: Response, url: string): Promise<DashboardPage> {
    let current = res;
    let at = url;
    for (let i = 0; i < 5 && current.status >= 300 && current.status < 400; i++) {
      at = new URL(current.headers.get('location')!, at).toString();
      current = await this.raw(at);
    }
    const html = await current.text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
    if (csrf) this.csrf = csrf;
    // Every dashboard answer is a page for people: never a stack trace or a JSON error.
    expect(html, `${at} leaks a stack trace`).not.toMatch(/\n\s+at .+\(.+:\d+:\d+\)/);
    return { status: current.status, url: at, html, headers: current.headers };
  }

  async get(path: string): Promise<DashboardPage> {
    const url = new URL(path, this.baseUrl).toString();
    return this.follow(await this.raw(url), url);
  }

  /** Posts a urlencoded form; the CSRF token of the last page is added unless `csrf: null` is given. */
  async post(path: string, fields: Record<string, string | string[]>, options: { csrf?: string | null } = {}): Promise<DashboardPage> {
    const body = new URLSearchParams();
    const csrf = options.csrf === undefined ? this.csrf : options.csrf;
    if (csrf !== null && csrf !== undefined) body.append('csrf', csrf);
    for (const [name, value] of Object.entries(fields)) for (const v of Array.isArray(value) ? value : [value]) body.append(name, v);
    const url = new URL(path, this.baseUrl).toString();
    return this.follow(await this.raw(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: body.toString() }), url);
  }

  /** Signs in with an API key and lands on the overview. */
  async signIn(apiKey: string): Promise<DashboardPage> {
    await this.get('/dashboard/sign-in');
    const page = await this.post('/dashboard/sign-in', { api_key: apiKey, next: '/dashboard' });
    expect(page.status, page.html.slice(0, 500)).toBe(200);
    expect(page.url).toMatch(/\/dashboard$/);
    return page;
  }
}

/** The visible text of a page, tags removed and entities decoded, for assertions that read like the screen. */
export function textOf(html: string): string {
  return html
    .replace(/<(script|style|template)[\s\S]*?<\/\1>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * A workspace with a brand and the given sandbox connections, signed in to the dashboard, and the compose form's
 * sending as a browser does; with the workspace's contents and media rows, to check nothing was stored.
 */
export async function composer(server: TestServer, connections: [PlatformSlug, string][]) {
  const ws = await server.workspace();
  const principal: Principal = { kind: 'api_key', workspaceId: ws.workspace_id, keyId: ws.key_id, role: 'admin', brandIds: null };
  const { services } = server.container;
  const brand = await services.brands.create(principal, ws.workspace_id, { name: 'Acme' });
  for (const [platform_slug, name] of connections) await services.connections.createSandbox(principal, ws.workspace_id, brand.id, { platform_slug, mode: 'sandbox', name });
  const client = new DashboardClient(server.url);
  await client.signIn(ws.api_key);

  /** Sends the form as a browser would: the CSRF token first, then the key the page rendered (or `key`). */
  const send = async (entries: ([string, string] | [string, Blob, string])[], key?: string): Promise<{ status: number; html: string }> => {
    const page = await client.get('/dashboard/compose');
    const form = new FormData();
    form.append('csrf', client.csrf!);
    form.append('idempotency_key', key ?? /name="idempotency_key" value="([^"]+)"/.exec(page.html)![1]!);
    for (const entry of entries) {
      if (entry.length === 3) form.append(entry[0], entry[1], entry[2]);
      else form.append(entry[0], entry[1]);
    }
    const res = await client.raw('/dashboard/compose', { method: 'POST', body: form });
    return { status: res.status, html: await res.text() };
  };
  const contents = async () => (await services.contents.list(principal, ws.workspace_id, { limit: 100 })).data;
  const mediaRows = () => server.container.db.kysely.selectFrom('media').selectAll().where('workspace_id', '=', ws.workspace_id).execute();
  return { brand, send, contents, mediaRows };
}

/** The text of the element with this id (an error paragraph, a counter). */
export function byId(html: string, id: string): string | undefined {
  const match = new RegExp(`id="${id}"[^>]*>([\\s\\S]*?)</(p|output|div)>`).exec(html);
  return match ? textOf(match[1]!) : undefined;
}

function decoded(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
}

/**
 * The fields a browser sends for the form whose action is `action`, left as the page rendered it: hidden and text
 * inputs with their values, ticked checkboxes and radios, each select's chosen option, each textarea's text (the
 * CSRF token is added by `DashboardClient.post`). A test overrides the fields a person would change.
 */
export function formAsSent(html: string, action: string): Record<string, string | string[]> {
  const form = new RegExp(`<form method="post" action="${action.replace(/[/.]/g, '\\$&')}"[^>]*>([\\s\\S]*?)</form>`).exec(html);
  expect(form, `form ${action}`).not.toBeNull();
  const body = form![1]!;
  const fields: Record<string, string | string[]> = {};
  const add = (name: string, value: string) => {
    const had = fields[name];
    fields[name] = had === undefined ? value : [...(Array.isArray(had) ? had : [had]), value];
  };
  for (const m of body.matchAll(/<input\b([^>]*)>/g)) {
    const attr = (n: string) => new RegExp(`\\b${n}="([^"]*)"`).exec(m[1]!)?.[1];
    const name = attr('name');
    const type = attr('type') ?? 'text';
    if (name === undefined || name === 'csrf' || type === 'file') continue;
    if ((type === 'checkbox' || type === 'radio') && !/\bchecked\b/.test(m[1]!)) continue;
    add(name, decoded(attr('value') ?? (type === 'checkbox' ? 'on' : '')));
  }
  for (const m of body.matchAll(/<select\b[^>]*name="([^"]+)"[^>]*>([\s\S]*?)<\/select>/g)) {
    const chosen = /<option value="([^"]*)"[^>]*\bselected\b/.exec(m[2]!) ?? /<option value="([^"]*)"/.exec(m[2]!);
    if (chosen) add(m[1]!, decoded(chosen[1]!));
  }
  // A textarea's first newline belongs to the markup, not to its text.
  for (const m of body.matchAll(/<textarea\b[^>]*name="([^"]+)"[^>]*>\n?([\s\S]*?)<\/textarea>/g)) add(m[1]!, decoded(m[2]!));
  return fields;
}
