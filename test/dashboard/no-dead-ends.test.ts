import { expect, it } from 'vitest';
import { DashboardClient, textOf } from '../support/dashboard.js';
import { describeEachDb } from '../support/server.js';

describeEachDb('dashboard: no dead ends', (server) => {
  it('a missing page keeps the navigation when signed in, links to the overview and back to where the person was', async () => {
    const ws = await server().workspace('Corner Bakery');
    const client = new DashboardClient(server().url);
    await client.signIn(ws.api_key);
    const res = await client.raw('/dashboard/nowhere', { headers: { referer: `${server().url}/dashboard/webhooks` } });
    expect(res.status).toBe(404);
    const html = await res.text();
    expect(html).toContain('<nav');
    expect(html).toContain('href="/dashboard/compose"');
    expect(html).toContain('Corner Bakery');
    expect(textOf(html)).toContain('Page not found');
    expect(html).toContain('<a class="button" href="/dashboard">Go to the overview</a>');
    expect(html).toContain('<a href="/dashboard/webhooks">Back to the previous page</a>');

    // Another site's address is never offered as "back".
    const foreign = await (await client.raw('/dashboard/nowhere', { headers: { referer: 'https://evil.example/phish' } })).text();
    expect(foreign).not.toContain('Back to the previous page');
    expect(foreign).not.toContain('evil.example');

    // A not-found inside a page (an unknown webhook) keeps the navigation and offers the way back too.
    const inner = await client.raw('/dashboard/webhooks/wh_unknown', { headers: { referer: `${server().url}/dashboard/webhooks` } });
    expect(inner.status).toBe(404);
    const innerHtml = await inner.text();
    expect(innerHtml).toContain('<nav');
    expect(innerHtml).toContain('<a href="/dashboard/webhooks">Back to the previous page</a>');
  });

  it('signed out, a missing page is plain (no navigation) and still leads on', async () => {
    const client = new DashboardClient(server().url);
    const page = await client.get('/dashboard/nowhere');
    expect(page.status).toBe(404);
    expect(page.html).not.toContain('<nav');
    expect(page.html).toContain('href="/dashboard"');
    // A stale session cookie is the same as none.
    const stale = await fetch(`${server().url}/dashboard/nowhere`, { headers: { cookie: 'svc_session=garbage' } });
    expect(stale.status).toBe(404);
    expect(await stale.text()).not.toContain('<nav');
  });

  it('a form the dashboard cannot read answers a page with the navigation', async () => {
    const ws = await server().workspace();
    const client = new DashboardClient(server().url);
    await client.signIn(ws.api_key);
    const res = await client.raw('/dashboard/webhooks', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `csrf=${client.csrf ?? ''}&${'a=b&'.repeat(300)}` });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    const html = await res.text();
    expect(html).toContain('<nav');
    expect(textOf(html)).toContain('The form could not be read');
  });
});
