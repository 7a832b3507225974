import { createHash, randomBytes } from 'node:crypto';

/**
 * A tiny cookie-keeping HTTP client that walks the authorization flow the way a browser would, `Path` included:
 * a cookie scoped to /dashboard never reaches the consent page.
 */
export class Browser {
  private readonly cookies = new Map<string, { value: string; path: string }>();

  set(name: string, value: string, path = '/'): void {
    this.cookies.set(name, { value, path });
  }

  /** The cookies a request to `path` carries (RFC 6265 §5.1.4 path-match). */
  cookieNames(path: string): string[] {
    return [...this.cookies].filter(([, c]) => path === c.path || path.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`)).map(([name]) => name);
  }

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    const names = this.cookieNames(new URL(url).pathname);
    if (names.length > 0) headers.set('cookie', names.map((n) => `${n}=${this.cookies.get(n)!.value}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';').map((p) => p.trim());
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      const path = attributes.find((a) => /^path=/i.test(a))?.slice(5) ?? '/';
      if (value === '' || /max-age=0|expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(name);
      else this.set(name, value, path);
    }
    return res;
  }

  /** Follows redirects on our own origin; stops at the first one that leaves it (the client's callback). */
  async follow(start: string, origin: string, init: RequestInit = {}): Promise<{ res: Response; url: string }> {
    let url = start;
    let res = await this.fetch(url, init);
    for (let i = 0; i < 10 && res.status >= 300 && res.status < 400; i++) {
      const next = new URL(res.headers.get('location')!, url).toString();
      if (!next.startsWith(origin)) return { res, url: next };
      url = next;
      res = await this.fetch(url);
    }
    return { res, url };
  }

  /**
   * Opens an authorization URL, fills the consent form with `apiKey` and approves (or denies). Returns where the
   * server finally sent the browser (the client's redirect URI with `code` or `error`).
   */
  async authorize(authorizeUrl: string, origin: string, apiKey: string, action: 'confirm' | 'abort' = 'confirm'): Promise<URL> {
    const { res, url } = await this.follow(authorizeUrl, origin);
    // A browser whose session already holds this client's grant goes straight back to the client.
    if (!url.startsWith(origin)) return new URL(url);
    if (res.status !== 200) throw new Error(`expected the consent page, got ${res.status} at ${url}: ${await res.text()}`);
    const html = await res.text();
    const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
    const uid = /\/interaction\/([^/"]+)\/confirm/.exec(html)?.[1];
    if (!csrf || !uid) throw new Error('consent page without form');
    const posted = await this.follow(`${origin}/api/oauth/mcp/interaction/${uid}/${action}`, origin, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, api_key: apiKey }).toString(),
    });
    if (posted.url.startsWith(origin)) throw new Error(`the flow did not reach the client: ${posted.res.status} ${await posted.res.text()}`);
    return new URL(posted.url);
  }
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}
