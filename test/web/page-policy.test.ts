import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { html, trusted } from '../../src/web/html.js';
import { contentSecurityPolicy } from '../../src/web/page-policy.js';

describe('one policy for every HTML page (src/web/page-policy.ts)', () => {
  it('denies by default, grants only what a page asks for, never frames, never <base>', () => {
    expect(contentSecurityPolicy({ style: ["'self'"], formTargets: ['https://claude.ai'] })).toBe(
      "default-src 'none'; style-src 'self'; form-action 'self' https://claude.ai; frame-ancestors 'none'; base-uri 'none'",
    );
    // The dashboard's policy, byte for byte what it was before the builder was shared.
    expect(contentSecurityPolicy({ script: ["'self'"], style: ["'self'"], img: ["'self'", 'data:'], connect: ["'self'"], formTargets: [] })).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
  });

  it('takes origins and bare schemes as form targets, and refuses anything that could add a directive or a keyword', () => {
    expect(contentSecurityPolicy({ formTargets: ['http://[::1]:8080', 'com.example.app:'] })).toContain("form-action 'self' http://[::1]:8080 com.example.app:;");
    for (const bad of ["https://a.example; script-src 'unsafe-inline'", "'unsafe-inline'", '*', 'https://a.example/path', 'https://a.example https://b.example', '']) {
      expect(() => contentSecurityPolicy({ formTargets: [bad] }), bad).toThrow(/form target/);
    }
  });
});

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return sources(path);
    return /\.(ts|js|css)$/.test(path) ? [path] : [];
  });
}

describe('no page sets its own policy', () => {
  it("every HTML page's Content-Security-Policy comes from src/web/page-policy.ts, and nothing asks for 'unsafe-inline'", () => {
    const files = ['src', 'oauth', 'tools'].flatMap(sources);
    expect(files.length).toBeGreaterThan(50);
    const own = files.filter((f) => f !== join('src', 'web', 'page-policy.ts') && /setHeader\(\s*['"]Content-Security-Policy/i.test(readFileSync(join(ROOT, f), 'utf8')));
    expect(own).toEqual([]);
    expect(files.filter((f) => readFileSync(join(ROOT, f), 'utf8').includes("'unsafe-"))).toEqual([]);
  });
});

describe('the escaping template (src/web/html.ts)', () => {
  it('escapes every interpolation, in text and in attributes, unless it is SafeHtml', () => {
    const hostile = `"><script>alert('x')</script>&`;
    const out = html`<p title="${hostile}">${hostile}${[hostile, null, false, undefined, 3]}${trusted('<b>ok</b>')}</p>`.text;
    expect(out).toBe(
      '<p title="&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;">&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;3<b>ok</b></p>',
    );
  });
});
