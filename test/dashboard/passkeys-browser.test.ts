import type { Browser, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { artifactsDir, auditPage, chromiumPresent, openWatchedPage } from '../support/browser.js';
import { testDatabaseKinds } from '../support/databases.js';
import { addPerson, freePort } from '../support/person.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Passkeys in Debian's Chromium with the DevTools protocol's virtual authenticator (resident keys, user
 * verification): a person adds a passkey on their account, signs out, and signs in with it. WebAuthn refuses IP
 * addresses, so the service's BASE_URL is `http://localhost:<port>`.
 */
describe.runIf(chromiumPresent())('passkeys through a virtual authenticator', () => {
  let server: TestServer;
  let base: string;
  let browser: Browser;
  let page: Page;
  let problems: string[] = [];
  let cdp: CDPSession;
  let authenticatorId: string;
  let userId: string;
  let workspaceId: string;
  const artifacts = artifactsDir('passkeys');

  beforeAll(async () => {
    const port = await freePort();
    base = `http://localhost:${port}`;
    server = await startTestServer(testDatabaseKinds()[0]!, { PORT: String(port), BASE_URL: base }, { workers: false });
    const ws = await server.workspace('Passkey workspace');
    workspaceId = ws.workspace_id;
    ({ userId } = await addPerson(server, workspaceId, 'ana@example.com', 'editor'));
    ({ browser, page, problems } = await openWatchedPage({ width: 1280, height: 900 }));
    cdp = await page.context().newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    ({ authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    }));
    // Signed in as the person (password sign-in is another page's business): a session cookie as sign-in sets it.
    const { token } = await server.container.services.sessions.openForUser(userId, 'password', { ip: null, userAgent: null }, workspaceId);
    await page.context().addCookies([{ name: 'svc_session', value: token, url: `${base}/dashboard` }]);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const audit = () =>
    server.container.db.kysely.selectFrom('audit_events').select(['action', 'actor_id', 'target_type', 'details', 'via']).where('workspace_id', '=', workspaceId).orderBy('id').execute();

  let assertion: { body: string; cookie: string } | undefined;

  it('a person adds a passkey, signs out, and signs in with it; each step is in the audit log', async () => {
    await page.goto(`${base}/dashboard/account/passkeys`);
    await page.getByText('No passkeys yet.').waitFor();
    await auditPage(page, problems, 'passkeys-empty', artifacts);
    await page.getByLabel('Name', { exact: true }).fill('Work laptop');
    await page.getByRole('button', { name: 'Add a passkey' }).click();
    await page.getByRole('status').filter({ hasText: 'The passkey “Work laptop” was added' }).waitFor();
    await page.getByRole('rowheader', { name: 'Work laptop' }).waitFor();
    const { credentials } = (await cdp.send('WebAuthn.getCredentials', { authenticatorId })) as { credentials: { isResidentCredential: boolean; rpId: string }[] };
    expect(credentials).toEqual([expect.objectContaining({ isResidentCredential: true, rpId: 'localhost' })]);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/dashboard\/sign-in\?reason=signed_out$/);

    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url() === `${base}/dashboard/sign-in/passkey`) {
        void request.allHeaders().then((headers) => {
          assertion = { body: request.postData() ?? '', cookie: headers.cookie ?? '' };
        });
      }
    });
    await auditPage(page, problems, 'sign-in-with-passkey', artifacts);
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.waitForURL(`${base}/dashboard`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Sign out' }).waitFor({ state: 'attached' });

    const session = await server.container.db.kysely.selectFrom('user_sessions').select(['auth_method']).where('user_id', '=', userId).orderBy('created_at', 'desc').executeTakeFirstOrThrow();
    expect(session.auth_method).toBe('passkey');
    const used = await server.container.db.kysely.selectFrom('passkeys').select(['last_used_at']).where('user_id', '=', userId).executeTakeFirstOrThrow();
    expect(used.last_used_at).not.toBeNull();
    const entries = await audit();
    expect(entries.map((e) => e.action)).toEqual(['auth.passkey_added', 'auth.signed_in']);
    expect(entries.every((e) => e.actor_id === userId && e.via === 'dashboard')).toBe(true);
    expect(JSON.parse(entries[1]!.details!)).toMatchObject({ method: 'passkey' });
  }, 120_000);

  it('the same assertion sent again is refused, with its used challenge or with a fresh one', async () => {
    expect(assertion).toBeDefined();
    const replay = (cookie: string) => fetch(`${base}/dashboard/sign-in/passkey`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie }, body: assertion!.body });
    const sessionsBefore = await countSessions();

    // Its challenge was consumed by the sign-in that succeeded.
    const again = await replay(assertion!.cookie);
    expect(again.status).toBe(401);
    expect(await again.text()).toContain('took too long or was already used');
    expect(again.headers.getSetCookie().some((c) => c.startsWith('svc_session='))).toBe(false);

    // A fresh challenge for the old answer: the signature covers the old challenge, so it does not verify.
    const csrf = /svc_signin_csrf=([^;]+)/.exec(assertion!.cookie)![1]!;
    const options = await fetch(`${base}/dashboard/sign-in/passkey/options`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `svc_signin_csrf=${csrf}` }, body: `csrf=${csrf}` });
    expect(options.status).toBe(200);
    const fresh = options.headers.getSetCookie().map((c) => c.split(';')[0]!).find((c) => c.startsWith('svc_passkey_challenge='))!;
    const withFresh = await replay(`svc_signin_csrf=${csrf}; ${fresh}`);
    expect(withFresh.status).toBe(401);
    expect(await withFresh.text()).toContain('could not be verified');
    expect(await countSessions()).toBe(sessionsBefore);
  });

  it('a passkey is removed from the account page and no longer signs in', async () => {
    await page.goto(`${base}/dashboard/account/passkeys`);
    await page.getByRole('button', { name: 'Remove Work laptop' }).click();
    await page.getByText('No passkeys yet.').waitFor();
    expect((await audit()).map((e) => e.action).at(-1)).toBe('auth.passkey_removed');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/dashboard\/sign-in/);
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.getByRole('alert').filter({ hasText: 'not registered here' }).waitFor();
  }, 60_000);

  const countSessions = async () => Number((await server.container.db.kysely.selectFrom('user_sessions').select((eb) => eb.fn.countAll().as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow()).n);
});
