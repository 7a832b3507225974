import { beforeAll, expect, it } from 'vitest';
import { insertMembership } from '../../db/repositories/memberships.repo.js';
import { insertUser } from '../../db/repositories/users.repo.js';
import { hashPassword } from '../../src/core/accounts/password.js';
import { totpCode } from '../../src/core/accounts/totp.js';
import { ManualClock } from '../../src/core/clock.js';
import type { Mailer, MailMessage } from '../../src/core/mail/mailer.js';
import { SECTIONS } from '../../src/dashboard/layout.js';
import { newId } from '../../src/core/ids.js';
import type { Role } from '../../src/core/permissions/roles.js';
import { DashboardClient, type DashboardPage, textOf } from '../support/dashboard.js';
import { withoutLinkTokens } from '../../src/web/request-context.js';
import { runToEnd } from '../support/process.js';
import { describeEachDb, TEST_SECRET_KEY, type TestServer } from '../support/server.js';

const clock = new ManualClock(Date.UTC(2026, 10, 21, 12));
/** Mail the service sends, captured through the Mailer port. */
const mailbox: MailMessage[] = [];
const mailer: Mailer = { send: async (message) => void mailbox.push(message) };
const PASSWORD = 'correct horse battery staple';
let hash: string;
let addresses = 0;

/** A browser on its own client address (TRUST_PROXY is loopback here), so the per-address throttle is per test. */
class Browser extends DashboardClient {
  readonly address = `203.0.113.${++addresses}`;
  override async raw(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set('x-forwarded-for', this.address);
    return super.raw(path, { ...init, headers });
  }
}

interface Person {
  id: string;
  email: string;
  ws: string;
}

async function person(server: TestServer, role: Role, workspaceId?: string, joinedAt = clock.now()): Promise<Person> {
  const ws = workspaceId ?? (await server.workspace()).workspace_id;
  const db = server.container.db.kysely;
  const id = newId('usr_');
  const email = `${id.toLowerCase()}@example.com`;
  await insertUser(db, { id, email, name: null, passwordHash: hash, emailVerifiedAt: null, createdAt: clock.now(), updatedAt: clock.now() });
  await join(server, id, ws, role, joinedAt);
  return { id, email, ws };
}

async function join(server: TestServer, userId: string, ws: string, role: Role, at = clock.now()): Promise<void> {
  await insertMembership(server.container.db.kysely, { id: newId('mem_'), workspaceId: ws, userId, role, brandIds: null, createdAt: at, updatedAt: at });
}

async function passwordSignIn(server: TestServer, email: string, password = PASSWORD, browser = new Browser(server.url)): Promise<{ browser: Browser; page: DashboardPage }> {
  await browser.get('/dashboard/sign-in');
  const page = await browser.post('/dashboard/sign-in', { email, password, next: '/dashboard' });
  return { browser, page };
}

async function signedIn(server: TestServer, p: Person): Promise<Browser> {
  const { browser, page } = await passwordSignIn(server, p.email);
  expect(page.status, textOf(page.html).slice(0, 300)).toBe(200);
  expect(page.url).toMatch(/\/dashboard$/);
  return browser;
}

beforeAll(async () => {
  hash = await hashPassword(PASSWORD);
});

describeEachDb(
  'accounts: password sign-in, two-step sign-in, sessions and the account page',
  (server) => {
    it('signs a person in by email and password: their session, their email and role in the header, an audit entry', async () => {
      const p = await person(server(), 'owner');
      const browser = await signedIn(server(), p);
      expect(browser.cookie('svc_session')).toMatch(/^u\./);
      const page = await browser.get('/dashboard');
      expect(textOf(page.html)).toContain(`${p.email} (owner)`);
      const audit = await server().container.db.kysely.selectFrom('audit_events').selectAll().where('action', '=', 'auth.signed_in').where('actor_id', '=', p.id).execute();
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({ workspace_id: p.ws, actor_type: 'user', via: 'dashboard', ip: browser.address });
      // The API-key form is still there and still works as before.
      expect(page.html).not.toContain('id="api_key"');
      const signIn = await new Browser(server().url).get('/dashboard/sign-in');
      expect(signIn.html).toContain('id="api_key"');
      expect(signIn.html).toContain('id="email"');
    });

    it("every dashboard section opens for a person's session", async () => {
      const p = await person(server(), 'owner');
      const browser = await signedIn(server(), p);
      for (const section of SECTIONS) {
        const page = await browser.get(section.href);
        expect(page.status, `${section.href}: ${textOf(page.html).slice(0, 300)}`).toBe(200);
        expect(textOf(page.html)).toContain(`${p.email} (owner)`);
      }
    });

    it('"forgot password" mails a one-time link to an account, and answers an unknown email the same way', async () => {
      const p = await person(server(), 'editor');
      const browser = new Browser(server().url);
      await browser.get('/dashboard/forgot-password');
      const before = mailbox.length;
      const known = await browser.post('/dashboard/forgot-password', { email: p.email.toUpperCase() });
      const unknown = await browser.post('/dashboard/forgot-password', { email: 'nobody-at-all@example.com' });
      expect(textOf(known.html)).toBe(textOf(unknown.html));
      expect(textOf(known.html)).toContain('If an account has this email, a link to set a new password is on its way');
      const sent = mailbox.slice(before);
      expect(sent.map((m) => m.to)).toEqual([p.email]);
      const link = /(http\S+\/dashboard\/reset-password\/\S+)/.exec(sent[0]!.text)?.[1];
      await browser.get(link!);
      const set = await browser.post(link!, { password: 'a brand new password' });
      expect(set.url).toMatch(/reason=password_set$/);
      expect((await passwordSignIn(server(), p.email, 'a brand new password')).page.url).toMatch(/\/dashboard$/);
    });

    it('answers a wrong password and an unknown email with the same page, status and (hashing) time', async () => {
      const p = await person(server(), 'editor');
      // The decoy hash is made on first use: warm it so the timings below compare like with like.
      await passwordSignIn(server(), 'warm-up@example.com', 'whatever-it-is');
      let started = performance.now();
      const wrong = await passwordSignIn(server(), p.email, 'not the password at all');
      const wrongMs = performance.now() - started;
      started = performance.now();
      const unknown = await passwordSignIn(server(), 'nobody-here@example.com', 'not the password at all');
      const unknownMs = performance.now() - started;
      expect(wrong.page.status).toBe(401);
      expect(unknown.page.status).toBe(401);
      expect(textOf(unknown.page.html)).toBe(textOf(wrong.page.html));
      expect(textOf(wrong.page.html)).toContain('That email and password do not match an account');
      // Both verify a scrypt hash (an unknown email against the decoy): neither answers in a fraction of the other's time.
      expect(unknownMs).toBeGreaterThan(wrongMs * 0.3);
      expect(wrong.browser.cookie('svc_session')).toBeUndefined();
      const failures = await server().container.db.kysely.selectFrom('audit_events').select('action').where('actor_id', '=', p.id).execute();
      expect(failures.map((f) => f.action)).toEqual(['auth.sign_in_failed']);
    });

    it('throttles an account after 5 failures, even from 5 addresses at once, with the right password too', async () => {
      const p = await person(server(), 'editor');
      const pages = await Promise.all(Array.from({ length: 5 }, () => passwordSignIn(server(), p.email, 'wrong password here')));
      expect(pages.map((r) => r.page.status)).toEqual([401, 401, 401, 401, 401]);
      const blocked = await passwordSignIn(server(), p.email);
      expect(blocked.page.status).toBe(429);
      expect(Number(blocked.page.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(textOf(blocked.page.html)).toContain('Too many failed sign-ins for this account or from this address');
      expect(blocked.browser.cookie('svc_session')).toBeUndefined();
      // An unknown email is throttled the same way: the answer does not tell whether it has an account.
      const ghost = await Promise.all(Array.from({ length: 5 }, () => passwordSignIn(server(), 'ghost@example.com', 'wrong password here')));
      expect(ghost.map((r) => r.page.status)).toEqual([401, 401, 401, 401, 401]);
      expect((await passwordSignIn(server(), 'ghost@example.com')).page.status).toBe(429);
    });

    it('throttles a client address after its failures (8 here), whatever the accounts', async () => {
      const p = await person(server(), 'editor');
      const browser = new Browser(server().url);
      await browser.get('/dashboard/sign-in');
      const csrf = browser.csrf!;
      const tries = await Promise.all(Array.from({ length: 8 }, (_, i) => browser.post('/dashboard/sign-in', { email: `guess-${i}@example.com`, password: 'password-guess', next: '/dashboard' }, { csrf })));
      expect(tries.map((t) => t.status)).toEqual(Array(8).fill(401));
      const blocked = await passwordSignIn(server(), p.email, PASSWORD, browser);
      expect(blocked.page.status).toBe(429);
      // The account itself was not the target: from another address it signs in.
      await signedIn(server(), p);
    });

    it('enrols TOTP with the injected clock, then asks for a code: a used code is refused, a recovery code works once', async () => {
      const p = await person(server(), 'admin');
      const browser = await signedIn(server(), p);
      await browser.get('/dashboard/account');
      const started = await browser.post('/dashboard/account/totp/start', {});
      const secret = /id="totp-secret" type="text" readonly value="([A-Z2-7]+)"/.exec(started.html)?.[1];
      expect(secret, textOf(started.html)).toBeDefined();
      expect(started.html).toContain('otpauth://totp/');
      const db = server().container.db.kysely;
      const stored = await db.selectFrom('user_totp').selectAll().where('user_id', '=', p.id).executeTakeFirstOrThrow();
      expect(stored.secret_sealed).not.toContain(secret!);
      expect(stored.confirmed_at).toBeNull();

      const wrong = await browser.post('/dashboard/account/totp/confirm', { code: '000000' === (await totpCode(secret!, clock.now())) ? '111111' : '000000' });
      expect(wrong.status).toBe(400);
      expect(textOf(wrong.html)).toContain('That code does not match');
      const confirmed = await browser.post('/dashboard/account/totp/confirm', { code: await totpCode(secret!, clock.now()) });
      expect(confirmed.status, textOf(confirmed.html)).toBe(200);
      const codes = [...confirmed.html.matchAll(/<li><code>([a-z0-9]{5}-[a-z0-9]{5})<\/code><\/li>/g)].map((m) => m[1]!);
      expect(codes).toHaveLength(10);
      const digests = await db.selectFrom('recovery_codes').select('code_digest').where('user_id', '=', p.id).execute();
      expect(digests).toHaveLength(10);
      expect(digests.map((d) => d.code_digest)).not.toContain(codes[0]);

      // The password alone no longer opens a session.
      const first = await passwordSignIn(server(), p.email);
      expect(first.page.url).toMatch(/\/dashboard\/sign-in\/code$/);
      expect(first.browser.cookie('svc_session')).toBeUndefined();
      // The code used to confirm is spent; the next step's code signs in.
      const spent = await first.browser.post('/dashboard/sign-in/code', { code: await totpCode(secret!, clock.now()), next: '/dashboard' });
      expect(spent.status).toBe(401);
      clock.advance(30_000);
      const code = await totpCode(secret!, clock.now());
      const ok = await first.browser.post('/dashboard/sign-in/code', { code, next: '/dashboard' });
      expect(ok.url).toMatch(/\/dashboard$/);
      expect(first.browser.cookie('svc_session')).toMatch(/^u\./);

      const replay = await passwordSignIn(server(), p.email);
      const replayed = await replay.browser.post('/dashboard/sign-in/code', { code, next: '/dashboard' });
      expect(replayed.status).toBe(401);
      expect(textOf(replayed.html)).toContain('already used');

      const recovery = await replay.browser.post('/dashboard/sign-in/code', { code: codes[0]!.toUpperCase(), next: '/dashboard' });
      expect(recovery.url).toMatch(/\/dashboard$/);
      const again = await passwordSignIn(server(), p.email);
      expect((await again.browser.post('/dashboard/sign-in/code', { code: codes[0]!, next: '/dashboard' })).status).toBe(401);
      const methods = await db.selectFrom('user_sessions').select('auth_method').where('user_id', '=', p.id).orderBy('created_at').execute();
      expect(methods.map((m) => m.auth_method).sort()).toEqual(['password', 'password+totp', 'recovery_code']);

      // Turning it off needs the password (or a code); then the password alone signs in again.
      await browser.get('/dashboard/account');
      const kept = await browser.post('/dashboard/account/totp/disable', { proof: 'a wrong password' });
      expect(kept.status).toBe(400);
      const off = await browser.post('/dashboard/account/totp/disable', { proof: PASSWORD });
      expect(textOf(off.html)).toContain('Two-step sign-in is off');
      expect(await db.selectFrom('recovery_codes').select('id').where('user_id', '=', p.id).execute()).toEqual([]);
      expect((await passwordSignIn(server(), p.email)).page.url).toMatch(/\/dashboard$/);
    });

    it('a password change needs the current one and ends every other session', async () => {
      const p = await person(server(), 'editor');
      const a = await signedIn(server(), p);
      const b = await signedIn(server(), p);
      await a.get('/dashboard/account');
      const refused = await a.post('/dashboard/account/password', { current_password: 'not it at all', new_password: 'a new long passphrase' });
      expect(refused.status).toBe(400);
      expect(textOf(refused.html)).toContain('The current password is not right');
      const short = await a.post('/dashboard/account/password', { current_password: PASSWORD, new_password: 'short' });
      expect(textOf(short.html)).toContain('new_password must be at least 10 characters');
      const changed = await a.post('/dashboard/account/password', { current_password: PASSWORD, new_password: 'a new long passphrase' });
      expect(textOf(changed.html)).toContain('Password changed. 1 other session was ended.');
      expect((await b.get('/dashboard')).url).toMatch(/\/dashboard\/sign-in/);
      expect((await a.get('/dashboard')).url).toMatch(/\/dashboard$/);
      expect((await passwordSignIn(server(), p.email, 'a new long passphrase')).page.url).toMatch(/\/dashboard$/);
    });

    it('lists sessions (this one marked), ends one, and signs out everywhere', async () => {
      const p = await person(server(), 'viewer');
      const a = await signedIn(server(), p);
      const b = await signedIn(server(), p);
      const c = await signedIn(server(), p);
      const account = await a.get('/dashboard/account');
      expect([...account.html.matchAll(/data-session="/g)]).toHaveLength(3);
      expect(textOf(account.html)).toContain('password (this session)');
      expect(textOf(account.html)).toContain(b.address);
      const db = server().container.db.kysely;
      const bSession = await db.selectFrom('user_sessions').select('id').where('user_id', '=', p.id).where('ip', '=', b.address).executeTakeFirstOrThrow();
      const ended = await a.post(`/dashboard/account/sessions/${bSession.id}/end`, {});
      expect(textOf(ended.html)).toContain('That session ended.');
      expect((await b.get('/dashboard')).url).toMatch(/\/dashboard\/sign-in/);
      expect((await c.get('/dashboard')).url).toMatch(/\/dashboard$/);
      const out = await a.post('/dashboard/account/sessions/end-all', {});
      expect(out.url).toMatch(/\/dashboard\/sign-in\?reason=signed_out$/);
      expect((await c.get('/dashboard')).url).toMatch(/\/dashboard\/sign-in/);
      expect(await db.selectFrom('user_sessions').select('id').where('user_id', '=', p.id).execute()).toEqual([]);
    });

    it('refuses to delete the last owner, naming the workspace; of two owners deleting at once, one succeeds', async () => {
      const p = await person(server(), 'owner');
      const a = await signedIn(server(), p);
      await a.get('/dashboard/account');
      const refused = await a.post('/dashboard/account/delete', { password: PASSWORD });
      expect(refused.status).toBe(403);
      expect(textOf(refused.html)).toContain(`You are the last owner of Test workspace (${p.ws})`);

      const q = await person(server(), 'owner', p.ws);
      const b = await signedIn(server(), q);
      await b.get('/dashboard/account');
      const [fromA, fromB] = await Promise.all([a.post('/dashboard/account/delete', { password: PASSWORD }), b.post('/dashboard/account/delete', { password: PASSWORD })]);
      const outcomes = [fromA, fromB].map((r) => (r.url.endsWith('reason=account_deleted') ? 'deleted' : r.status)).sort();
      expect(outcomes).toEqual([403, 'deleted']);
      const db = server().container.db.kysely;
      const owners = await db.selectFrom('memberships').select('user_id').where('workspace_id', '=', p.ws).where('role', '=', 'owner').execute();
      expect(owners).toHaveLength(1);
      const gone = owners[0]!.user_id === p.id ? q : p;
      expect(await db.selectFrom('users').select('id').where('id', '=', gone.id).execute()).toEqual([]);
      const audit = await db.selectFrom('audit_events').selectAll().where('action', '=', 'user.deleted').where('actor_id', '=', gone.id).execute();
      expect(audit.map((e) => e.workspace_id)).toEqual([p.ws]);
    });

    it("acts with the membership's role in each workspace: a viewer is refused an action, the switcher changes role", async () => {
      const ws2 = (await server().workspace('Second workspace')).workspace_id;
      const p = await person(server(), 'viewer', undefined, clock.now() - 60_000);
      await join(server(), p.id, ws2, 'admin');
      const browser = await signedIn(server(), p);
      const keys = await browser.get('/dashboard/api-keys');
      expect(textOf(keys.html)).toContain(`${p.email} (viewer)`);
      const refused = await browser.post('/dashboard/api-keys', { name: 'from a viewer' });
      expect(refused.status).toBe(403);
      const switched = await browser.post('/dashboard/account/workspace', { workspace_id: ws2 });
      expect(textOf(switched.html)).toContain(`${p.email} (admin)`);
      await browser.get('/dashboard/api-keys');
      const created = await browser.post('/dashboard/api-keys', { name: 'from an admin' });
      expect(created.status).toBe(201);
      // Not a member: the switch is refused.
      const other = (await server().workspace('Not mine')).workspace_id;
      const notMine = await browser.post('/dashboard/account/workspace', { workspace_id: other });
      expect(notMine.status).toBe(403);
    });

    it('cli user create and user reset-password print one-time links that set a password once and end sessions', async () => {
      const ws = await server().workspace('CLI workspace');
      const env = { DATABASE_URL: server().database.url, SECRET_KEY: TEST_SECRET_KEY, BASE_URL: server().url, LOG_LEVEL: 'silent' };
      const email = `new-${newId('x').toLowerCase()}@example.com`;
      const made = await runToEnd('src/cli.ts', ['user', 'create', email, '--workspace', ws.workspace_id, '--role', 'editor'], env);
      expect(made.code, made.stderr).toBe(0);
      const link = /(http\S+\/dashboard\/reset-password\/\S+)/.exec(made.stdout)?.[1];
      expect(link).toBeDefined();
      // The request log keeps the page, not the link's secret.
      expect(withoutLinkTokens(new URL(link!).pathname)).toBe('/dashboard/reset-password/[redacted]');
      const browser = new Browser(server().url);
      await browser.get(link!);
      const set = await browser.post(link!, { password: 'my first password' });
      expect(set.url).toMatch(/reason=password_set$/);
      expect(textOf(set.html)).toContain('Your password is set');
      const reused = await browser.get(link!);
      expect(reused.status).toBe(404);
      const session = await passwordSignIn(server(), email, 'my first password');
      expect(session.page.url).toMatch(/\/dashboard$/);
      expect(textOf(session.page.html)).toContain(`${email} (editor)`);

      const reset = await runToEnd('src/cli.ts', ['user', 'reset-password', email, '--json'], env);
      expect(reset.code, reset.stderr).toBe(0);
      const { link: resetLink } = JSON.parse(reset.stdout) as { link: string };
      await browser.get(resetLink);
      expect((await browser.post(resetLink, { password: 'my second password' })).url).toMatch(/reason=password_set$/);
      expect((await session.browser.get('/dashboard')).url).toMatch(/\/dashboard\/sign-in/);
      expect((await browser.post(resetLink, { password: 'my third password' })).status).toBe(404);
      const actions = await server().container.db.kysely.selectFrom('audit_events').select(['action', 'actor_type', 'via']).where('workspace_id', '=', ws.workspace_id).orderBy('occurred_at').orderBy('id').execute();
      expect(actions).toEqual(
        expect.arrayContaining([
          { action: 'user.created', actor_type: 'system', via: 'cli' },
          { action: 'member.added', actor_type: 'system', via: 'cli' },
          { action: 'user.password_reset_issued', actor_type: 'system', via: 'cli' },
        ]),
      );
      const unknown = await runToEnd('src/cli.ts', ['user', 'reset-password', 'nobody@example.com'], env);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain('No account has the email nobody@example.com');
    });
  },
  { TRUST_PROXY: 'loopback', SIGN_IN_FAILURES_PER_ADDRESS: '8' },
  () => ({ clock, mailer }),
);
