import { get } from 'node:http';
import { expect, it } from 'vitest';
import { CONSENT_STYLESHEET_PATH, renderConsentPage } from '../../oauth/consent-page.js';
import { Browser, pkcePair } from '../support/oauth-browser.js';
import { describeEachDb } from '../support/server.js';

const HOSTILE = `"><script>alert(1)</script><style>*{}</style>'&`;
const ESCAPED = '&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;style&gt;*{}&lt;/style&gt;&#39;&amp;';

it('the consent page escapes every value it shows and carries no inline style or script', () => {
  const page = renderConsentPage({ uid: HOSTILE, clientName: HOSTILE, redirectHost: HOSTILE, scope: HOSTILE, csrf: HOSTILE, error: HOSTILE }).text;
  expect(page).not.toContain('<script');
  expect(page).not.toContain('<style');
  expect(page).not.toMatch(/\sstyle=/);
  // Title, heading, scope, redirect host, error and the CSRF field: six escaped copies; the uid is URL-encoded.
  expect(page.split(ESCAPED).length - 1).toBe(6);
  expect(page).toContain(`action="/api/oauth/mcp/interaction/${encodeURIComponent(HOSTILE).replace(/'/g, '&#39;')}/confirm"`);
  expect(page).toContain(`<link rel="stylesheet" href="${CONSENT_STYLESHEET_PATH}">`);
});

describeEachDb('the consent page as served', (server) => {
  it('is escaped, styled by its own stylesheet, under a policy without unsafe-inline', async () => {
    const base = server().service.baseUrl;
    const redirect = 'https://client.example/cb';
    const reg = await fetch(`${base}/api/oauth/mcp/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: HOSTILE, redirect_uris: [redirect] }),
    });
    expect(reg.status).toBe(201);
    const clientId = ((await reg.json()) as { client_id: string }).client_id;
    const { challenge } = pkcePair();
    const auth = `${base}/api/oauth/mcp/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: redirect, response_type: 'code', scope: 'mcp', code_challenge: challenge, code_challenge_method: 'S256' })}`;
    const page = await new Browser().follow(auth, base);
    expect(page.res.status).toBe(200);
    const text = await page.res.text();
    expect(text).toContain(`<h1><strong>${ESCAPED}</strong>`);
    expect(text).not.toContain('<script');
    expect(page.res.headers.get('content-security-policy')).toBe(
      "default-src 'none'; style-src 'self'; form-action 'self' https://client.example; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(page.res.headers.get('cache-control')).toBe('no-store');
    expect(page.res.headers.get('x-frame-options')).toBe('DENY');

    const css = await fetch(`${base}${CONSENT_STYLESHEET_PATH}`);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect(await css.text()).toContain('button.primary');
    expect(css.headers.get('cache-control')).toBe('no-cache');
    // A browser revalidates with the ETag and gets a 304 (node:http here: fetch adds its own no-cache).
    const again = await new Promise<number>((resolve, reject) => {
      get(`${base}${CONSENT_STYLESHEET_PATH}`, { headers: { 'if-none-match': css.headers.get('etag')! } }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      }).on('error', reject);
    });
    expect(again).toBe(304);
  });
});
