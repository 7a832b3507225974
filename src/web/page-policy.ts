import type { Response } from 'express';

/**
 * The headers of every HTML page we render (the dashboard and the OAuth consent page): one Content-Security-Policy
 * builder, so the pages cannot drift apart. A page may load from our own origin only, and never runs inline script
 * or style: the source type has no unsafe-inline (nor any other keyword), so no page can ask for it.
 */

/**
 * What a page may load, per fetch directive (CSP Level 3 §6.1): our origin, `data:` for images drawn in CSS,
 * `blob:` for a worker a page builds (the reference's search), or the nonce of one answer (see `nonceSource`).
 */
export type PageSource = "'self'" | 'data:' | 'blob:' | `'nonce-${string}'`;

/** The source that admits exactly the elements carrying this answer's nonce (base64 only, so it cannot break out). */
export function nonceSource(nonce: string): PageSource {
  if (!/^[A-Za-z0-9+/]+=*$/.test(nonce)) throw new Error('a nonce is base64');
  return `'nonce-${nonce}'`;
}

export interface PagePolicy {
  script?: readonly PageSource[];
  style?: readonly PageSource[];
  img?: readonly PageSource[];
  /** Video and audio elements (the dashboard shows an uploaded video's first frame as its poster). */
  media?: readonly PageSource[];
  connect?: readonly PageSource[];
  worker?: readonly PageSource[];
  /** A page without forms: `form-action 'none'` instead of our origin and `formTargets`. */
  noForms?: boolean;
  /**
   * Where a form may lead besides our origin: origins (`https://host`) or schemes (`app.example:`). CSP3's
   * `form-action` also governs the redirects that follow a form post, so the OAuth client's callback and the
   * networks' consent screens must be listed.
   */
  formTargets?: readonly string[];
}

/** An origin or a bare scheme: nothing that could close the directive or name a keyword. */
const FORM_TARGET = /^[a-z][a-z0-9+.-]*:(\/\/[a-z0-9.\-[\]:]+)?$/i;

/**
 * The policy of a page: `default-src 'none'` then only what `policy` grants, no framing (`frame-ancestors`) and
 * no `<base>`. Throws on a form target that is not an origin or a scheme (a value meant as data, never policy).
 */
export function contentSecurityPolicy(policy: PagePolicy): string {
  const targets = policy.formTargets ?? [];
  const bad = targets.find((t) => !FORM_TARGET.test(t));
  if (bad !== undefined) throw new Error(`form target is not an origin or a scheme: ${JSON.stringify(bad)}`);
  const fetch = (name: string, sources: readonly PageSource[] | undefined) => (sources && sources.length > 0 ? [`${name} ${sources.join(' ')}`] : []);
  return [
    "default-src 'none'",
    ...fetch('script-src', policy.script),
    ...fetch('style-src', policy.style),
    ...fetch('img-src', policy.img),
    ...fetch('media-src', policy.media),
    ...fetch('connect-src', policy.connect),
    ...fetch('worker-src', policy.worker),
    policy.noForms === true ? "form-action 'none'" : ["form-action 'self'", ...targets].join(' '),
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

/**
 * Sets what every HTML page answers with: its policy, `no-store` (pages carry CSRF tokens and account data) and
 * `X-Frame-Options: DENY` for browsers that predate `frame-ancestors`.
 */
export function setPageHeaders(res: Response, policy: PagePolicy): void {
  res.setHeader('Content-Security-Policy', contentSecurityPolicy(policy));
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Frame-Options', 'DENY');
}
